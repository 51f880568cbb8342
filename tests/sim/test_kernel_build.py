"""Loading the compiled kernel (``optsched/sim/compiled/build.py``): the one-time compile is said on
stderr and timed apart from the run, numba's cache key follows every module compiled into the
kernel, and a kernel that cannot run leaves the Python engine running with one sentence why."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings

import pytest

from optsched.core import Cluster, Job
from optsched.exceptions import EngineFallbackWarning, InvalidOptionError
from optsched.sim import SRTF, Simulator
from optsched.sim.compiled import build as B
from optsched.sim.compiled import driver as D
from optsched.sim.compiled import layout

numba = pytest.importorskip("numba")


def _jobs(n: int = 12) -> list[Job]:
    return [Job(i, work=1.0 + i % 5, gpus=1 + i % 3, arrival=float(i // 3)) for i in range(n)]


def test_the_cache_key_holds_the_digest_of_every_module_compiled_in():
    from numba.core.registry import cpu_target

    from optsched.sim.compiled import kernel as K

    assert layout.sources_digest() == K.SOURCES_DIGEST  # computed, never typed
    for entry, sig in ((K._run, K.RUN_SIGNATURE), (K._compact, K.COMPACT_SIGNATURE)):
        key = entry._cache._index_key(sig.args, cpu_target.target_context.codegen())
        assert K.SOURCES_DIGEST in key


def test_the_digest_changes_with_any_kernel_module(monkeypatch):
    from importlib.resources import files

    real = files("optsched.sim.compiled")
    before = layout.sources_digest()

    class Edited:
        def joinpath(self, name):
            p = real.joinpath(name)
            if name != "heaps.py":
                return p
            return type("F", (), {"read_bytes": lambda self: p.read_bytes() + b"\n# edited\n"})()

    monkeypatch.setattr("importlib.resources.files", lambda pkg: Edited())
    assert layout.sources_digest() != before


def test_a_run_uses_the_one_compiled_signature():
    from optsched.sim.compiled import kernel as K

    cluster = Cluster.homogeneous(2, 4)
    for record in (True, False):
        Simulator(cluster, _jobs(), SRTF(), record_log=record, record_segments=record, engine="compiled").run()
    assert len(K._run.signatures) == 1 and len(K._compact.signatures) == 1


def test_a_compile_is_said_once_and_timed_apart(monkeypatch):
    """The notice is printed when something is compiled (a cache miss), with the seconds; a load
    from the cache says nothing and costs no compile seconds."""
    from optsched.sim.compiled import kernel as K

    @numba.njit
    def tiny(x):
        return x + 1

    monkeypatch.setattr(K, "compile_entry_points", lambda: tiny(1))  # compiles on its first call only
    out = io.StringIO()
    seconds = B._compile(out, quiet=False)
    lines = out.getvalue().splitlines()
    assert seconds > 0 and len(lines) == 2
    assert "compiling the simulator core for this machine, once: about" in lines[0]
    assert "compiled the simulator core in" in lines[1]
    out = io.StringIO()
    assert B._compile(out, quiet=False) == 0.0 and out.getvalue() == ""


def test_the_announced_time_grows_with_the_load(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    assert B.compile_estimate() == B.COMPILE_ESTIMATE_SECONDS  # an idle machine
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    assert B.compile_estimate() == 4 * B.COMPILE_ESTIMATE_SECONDS  # 4 runnable processes per core


def test_a_long_compile_says_it_is_still_at_it(monkeypatch):
    from optsched.sim.compiled import kernel as K

    def several():
        for k in range(3):  # three functions compiled, each on its own
            numba.njit(lambda x, k=k: x + k)(1)

    monkeypatch.setattr(K, "compile_entry_points", several)
    monkeypatch.setattr(B, "PROGRESS_EVERY_SECONDS", 0.0)
    out = io.StringIO()
    B._compile(out, quiet=False)
    assert sum("still compiling the simulator core" in ln for ln in out.getvalue().splitlines()) >= 2


def test_a_run_reports_its_compile_seconds_apart():
    res = Simulator(Cluster.homogeneous(2, 4), _jobs(), SRTF(), engine="compiled").run()
    assert res.compile_seconds == 0.0  # compiled (or loaded) before this test: not this run's
    py = Simulator(Cluster.homogeneous(2, 4), _jobs(), SRTF(), engine="python").run()
    assert py.compile_seconds == 0.0


def test_a_failed_compile_falls_back_to_python_with_one_sentence(monkeypatch):
    from optsched.sim.compiled import kernel as K

    def broken():
        raise RuntimeError("LLVM ERROR: no such CPU\nmore lines")

    monkeypatch.setattr(K, "compile_entry_points", broken)
    monkeypatch.setattr(B, "_failed", [])
    monkeypatch.setattr(D, "AUTO_MIN_JOBS", 1)
    monkeypatch.setattr(D, "_said", set())
    why, seconds = B.prepare(quiet=True)
    assert why == "the simulator core could not be compiled for this machine (RuntimeError: LLVM ERROR: no such CPU)"
    assert seconds == 0.0
    cluster = Cluster.homogeneous(2, 4)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sim = Simulator(cluster, _jobs(), SRTF())
    assert sim._compiled is None and sim.run().engine == "python"
    (msg,) = [str(x.message) for x in w if issubclass(x.category, EngineFallbackWarning)]
    assert "could not be compiled" in msg and "the Python engine runs it instead" in msg
    with pytest.raises(InvalidOptionError, match="could not be compiled"):
        Simulator(cluster, _jobs(), SRTF(), engine="compiled")


def test_an_unwritable_numba_cache_dir_falls_back_without_a_traceback(tmp_path):
    """NUMBA_CACHE_DIR that cannot be a folder (a file stands in its way: read-only even for root):
    the command runs on the Python engine and says why in one line."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(blocker / "cache")}
    argv = [sys.executable, "-m", "optsched", "simulate", "--trace", "synthetic", "--jobs", "6000"]
    argv += ["--load", "0.9", "--policy", "srtf", "--servers", "8", "--gpus-per-server", "8", "--json"]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    said = [ln for ln in r.stderr.splitlines() if "NUMBA_CACHE_DIR" in ln]
    assert len(said) == 1 and "not a writable folder" in said[0] and "Python engine" in said[0]
    assert '"compile_seconds": 0.0' in r.stdout


def test_warm_loads_or_compiles_and_says_when_it_cannot(monkeypatch, capsys):
    from optsched.sim.compiled.__main__ import main

    assert main(["--warm"]) == 0
    monkeypatch.setenv("OPTSCHED_NO_KERNEL", "1")
    assert main(["--warm"]) == 1
    assert "cannot run here" in capsys.readouterr().err


def test_a_helper_is_compiled_once_for_literals_and_integer_widths():
    import numpy as np

    from optsched.sim.compiled.jit import Helper, helper

    def add(a, k):
        return a[0] + k

    h = helper(add)
    assert isinstance(h, Helper)

    @numba.njit
    def caller(a, b):
        return h(a, 3) + h(a, np.int32(b)) + h(a, b) + h(a, True)

    assert caller(np.ones(1, dtype=np.int64), 2) == 1 + 3 + 1 + 2 + 1 + 2 + 1 + 1
    assert len(h.overloads) == 2  # (array, int64) for 3, int32 and int64; (array, bool) for True
