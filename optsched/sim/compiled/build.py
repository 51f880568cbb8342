"""Loading the compiled kernel: numba's on-disk cache, the one-time compile said on stderr, and what
happens when the kernel cannot run (no numba at the top: numba is imported when a run needs it).

The kernel's entry points are compiled once per machine and kept in numba's cache (the folder
``NUMBA_CACHE_DIR`` if set, else ``__pycache__`` beside the sources or the user's cache folder);
every later process loads them in about a second. :func:`prepare` loads or compiles the run's
policy's entry point before a run (FIFO, SJF, SRTF and periodic SRTF share one; LAS and Lazer's
deferral have their own: :func:`optsched.sim.compiled.kernel.entry_point`): a compile is said once
on stderr (``compiling the simulator core for this machine, once: about N s``) and timed apart from
the simulation (``SimResult.compile_seconds``). ``python -m optsched.sim.compiled --warm`` does it
up front for every policy (``make`` set-up and CI run it).

When the kernel cannot run (numba missing, ``OPTSCHED_NO_KERNEL`` set, ``NUMBA_CACHE_DIR`` not a
writable folder, a failed compile), :func:`prepare` returns why in one sentence and the Python engine
runs the simulation (``engine="auto"``); nothing here raises or prints a traceback for that.

Tested in ``tests/sim/test_kernel_build.py``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any

from optsched.sim.compiled.coverage import DISABLE_ENV

#: CPU seconds of the first compile of one policy's entry point (``python -m benchmarks.bench_sim
#: --case kernel-compile``, SRTF: 22-23 s of CPU on 2 cores at load average 7-10; LAS's about the
#: same), what the notice announces on an idle machine (scaled up by the load average per core when
#: the machine is busy)
COMPILE_ESTIMATE_SECONDS = 25
#: while compiling, a line every this many seconds says it is still at it
PROGRESS_EVERY_SECONDS = 30.0

# why the compile failed in this process (it is not tried again)
_failed: list[str] = []


def cache_problem() -> str | None:
    """Why numba could not keep the compiled kernel in the cache folder the user chose
    (``NUMBA_CACHE_DIR`` set to a folder that cannot be created or written), else None."""
    path = os.environ.get("NUMBA_CACHE_DIR", "")
    if not path:
        return None
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as e:
        return (
            f"NUMBA_CACHE_DIR={path!r} is not a writable folder ({e.strerror or e}), so the simulator core would be "
            f"compiled again in every process; make it writable or unset it"
        )
    return None


def python_engine_estimate(n_jobs: int) -> str:
    """How long the Python engine takes for ``n_jobs`` jobs, roughly (from ``benchmarks/results/
    sim.json``: SRTF at load 1.1 on 750 x 8 GPUs, 7 s per 100,000 jobs on 2 shared cores; LAS about 4x)."""
    srtf = 7.0 * n_jobs / 100_000
    took = "under a second" if srtf < 1 else f"about {srtf:.0f} s"
    return f"the Python engine runs it instead ({took} for {n_jobs:,} jobs under SRTF, longer under LAS)"


def compile_estimate() -> int:
    """The compile's expected wall seconds on this machine now: :data:`COMPILE_ESTIMATE_SECONDS`,
    times the load average per core when that is over 1 (the compile runs on one core), to 5 s."""
    try:
        busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        busy = 1.0
    return int(5 * round(COMPILE_ESTIMATE_SECONDS * max(1.0, busy) / 5))


def _compile(stream: Any, quiet: bool, policy: str | None = None) -> float:
    """Load the entry points of ``policy`` (a name of ``layout.KIND_CODES``; all if None) from numba's
    cache, or compile them (said on ``stream`` unless ``quiet``): the seconds spent compiling (0.0
    when loaded from the cache)."""
    # deferred: numba compiles the kernel's helpers when its entry points are first needed
    from numba.core import event

    from optsched.sim.compiled import kernel as K

    compiling: list[float] = []  # [start, last line said]

    class Notice(event.Listener):
        def on_start(self, ev):
            if not compiling:  # the first compile event: an entry point missed the cache
                compiling[:] = [time.perf_counter()] * 2
                if not quiet:
                    print(
                        f"optsched: compiling the simulator core for this machine, once: about {compile_estimate()} s",
                        file=stream,
                        flush=True,
                    )

        def on_end(self, ev):  # each of the kernel's functions compiled: progress on long compiles
            now = time.perf_counter()
            if not quiet and compiling and now - compiling[1] >= PROGRESS_EVERY_SECONDS:
                compiling[1] = now
                print(
                    f"optsched: still compiling the simulator core ({now - compiling[0]:.0f} s)",
                    file=stream,
                    flush=True,
                )

    with event.install_listener("numba:compile", Notice()):
        if policy is None:
            K.compile_entry_points()
        else:
            K.compile_entry_points(policy)
    if not compiling:
        return 0.0
    seconds = time.perf_counter() - compiling[0]
    if not quiet:
        print(f"optsched: compiled the simulator core in {seconds:.1f} s (kept in numba's cache)", file=stream)
    return seconds


def prepare(*, quiet: bool = False, stream: Any = None, policy: str | None = None) -> tuple[str | None, float]:
    """Make the compiled kernel ready in this process for ``policy`` (a policy's ``compiled_kind``;
    every policy if None): ``(why it cannot run, or None; seconds spent compiling it now)``. The
    first call of a process for a policy loads its entry point from numba's cache or compiles it
    (saying so on ``stream``, stderr by default, unless ``quiet``); later calls return at once, the
    seconds then 0.0 (the compile is reported by the run that paid for it). A failed compile is not
    tried again in the same process."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return f"the compiled kernel is turned off ({DISABLE_ENV} is set)", 0.0
    try:
        import numba  # noqa: F401  (deferred: heavy, and optional)
    except ImportError as e:  # numba missing or broken
        return f"numba cannot be imported ({e}); `pip install numba` for the compiled kernel", 0.0
    why = cache_problem() or (_failed[0] if _failed else None)
    if why is not None:
        return why, 0.0
    try:
        return None, _compile(stream if stream is not None else sys.stderr, quiet, policy)
    except Exception as e:  # any failure of numba or LLVM: the Python engine runs
        first = (str(e).strip().splitlines() or [""])[0]
        _failed.append(f"the simulator core could not be compiled for this machine ({type(e).__name__}: {first[:200]})")
        return _failed[0], 0.0
