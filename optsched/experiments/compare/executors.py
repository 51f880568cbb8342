"""Where the runs of ``compare`` execute: one after another (``serial``), in local processes
(``processes``, ``workers`` of them) or on a Dask cluster (``dask``: an existing scheduler, or a
``LocalCluster`` started for the call). Each run is a pure function of (policy, seed, workload), so
every executor gives the same results; they arrive in any order, as they end.

Tested in ``tests/experiments/test_compare_run.py`` (processes and Dask give the serial table)."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import socket
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from optsched.exceptions import InvalidOptionError
from optsched.experiments.compare.runner import RunResult, available_policies, run_policy
from optsched.experiments.compare.workload import SeededWorkload

EXECUTORS = ("serial", "processes", "dask")
"""Where the runs of :func:`compare` execute (its ``executor=``): one after another in this process,
in local processes, or on a Dask cluster; every executor gives the same table."""

#: Below this many job-runs (jobs x runs), ``workers=None`` runs serially: starting processes
#: costs more than it saves.
SMALL = 20_000


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def check_workers(workers: Any) -> int | None:
    """``workers`` as an int >= 1 (None: the default), else :class:`InvalidOptionError`."""
    if workers is None:
        return None
    import numpy as np

    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise InvalidOptionError(
            f"workers (--workers) must be a whole number >= 1 (processes running policies at once); got {workers!r}."
        )
    return int(workers)


def connect_dask(address: str | None, workers: int):
    """(client, local cluster or None): the scheduler at ``address`` (reached within 10 s), or a
    ``LocalCluster`` of ``workers`` processes when ``address`` is None or ``"local"``.

    Raises
    ------
    InvalidOptionError
        Dask is not installed, or the scheduler cannot be reached (the address and the fix named).
    """
    try:
        from dask.distributed import Client, LocalCluster  # optional and heavy: only with executor="dask"
    except ImportError:
        raise InvalidOptionError(
            "executor='dask' (--dask) needs dask[distributed]: pip install 'optsched[distributed]'."
        ) from None
    if address in (None, "local"):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        return Client(cluster), cluster
    check_dask_scheduler(address, option="--dask")
    try:
        return Client(address, timeout="10s"), None
    except (OSError, TimeoutError, ValueError) as e:
        raise InvalidOptionError(
            f"Cannot reach the Dask scheduler at --dask {address!r} within 10 s ({e}); check the address "
            f"(tcp://host:8786) and that the scheduler is running, or use --dask local."
        ) from None


#: Seconds to connect to a Dask scheduler's address, and then for its first message.
DASK_PROBE_SECONDS = 5.0


def check_dask_scheduler(
    address: str, *, option: str = "scheduler_address", timeout: float = DASK_PROBE_SECONDS
) -> None:
    """Check that a Dask scheduler answers at ``address`` (``tcp://host:port`` or ``host:port``)
    before Dask's own client connects: a short connect, then the scheduler's handshake, which a
    Dask server sends first (eight bytes of length, then a small message naming its pickle
    protocol). Anything else there (nothing, a web server such as the Dask dashboard, a service
    that closes the connection or answers other bytes) is refused at once, where Dask's client
    would wait, or read another service's bytes as a message size and run out of memory. Other
    schemes (``tls://``, ``ws://``, ``inproc://``) are left to Dask.

    Raises
    ------
    InvalidOptionError
        "no Dask scheduler at ADDRESS", the reason and the fix.
    """

    scheme, sep, rest = str(address).partition("://")
    if not sep:
        scheme, rest = "tcp", str(address)
    if scheme != "tcp":
        return
    host, colon, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")

    def refuse(why: str) -> InvalidOptionError:
        return InvalidOptionError(
            f"No Dask scheduler at {option} {address!r}: {why}. Give the address the scheduler prints "
            f"(tcp://host:8786; the dashboard's port 8787 is a web page, not the scheduler), or --dask local "
            f"for a cluster on this machine."
        )

    if not (colon and host and port.isdigit() and 0 < int(port) < 65536):
        raise refuse("give it as tcp://host:port")
    try:
        conn = socket.create_connection((host, int(port)), timeout=timeout)
    except TimeoutError:
        raise refuse(f"nothing answered within {timeout:g} s") from None
    except OSError as e:
        raise refuse(e.strerror or str(e)) from None
    with conn:
        conn.settimeout(timeout)
        try:
            head = _recv(conn, 8)
            size = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
            body = _recv(conn, size) if 0 < size <= 1 << 16 else b""
        except TimeoutError:
            raise refuse(
                f"the service there said nothing within {timeout:g} s (a Dask scheduler speaks first; a web "
                f"server waits for a request)"
            ) from None
        except OSError as e:
            raise refuse(e.strerror or str(e)) from None
    if not head:
        raise refuse("the service there closed the connection without a word")
    if b"pickle-protocol" not in body:
        raise refuse(f"the service there answered with bytes that are not Dask's handshake ({head[:8]!r}...)")


def _recv(conn: Any, n: int) -> bytes:
    """Up to ``n`` bytes (fewer only when the peer closes)."""
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf


# -- the task each worker runs ---------------------------------------------------------------------
_WORKER: dict[str, Any] = {}  # in a worker process: the workloads and options it was started with


def _init_worker(ws: Sequence[SeededWorkload], placement, sim_options) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops the pool
    _WORKER.update(ws=list(ws), placement=placement, sim_options=dict(sim_options), reg=None)


def _worker_task(task: tuple[str, int]) -> RunResult:
    name, s = task
    if _WORKER["reg"] is None:
        _WORKER["reg"] = available_policies()
    return run_policy(
        name, _WORKER["reg"][name], _WORKER["ws"][s], s, _WORKER["placement"], _WORKER["sim_options"], keep_frame=s == 0
    )


def _dask_task(name: str, s: int, w: SeededWorkload, placement, sim_options) -> RunResult:
    return run_policy(name, available_policies()[name], w, s, placement, sim_options, keep_frame=s == 0)


# -- execution -------------------------------------------------------------------------------------
def execute(
    tasks: Sequence[tuple[str, int]],
    ws: Sequence[SeededWorkload],
    reg: dict[str, dict],
    *,
    placement: str | None,
    sim_options: dict,
    executor: str,
    workers: int,
    client=None,
    stopped: Callable[[], bool] = lambda: False,
    started: Callable[[], None] = lambda: None,
) -> Iterator[RunResult]:
    """Yield the result of every (policy, seed) task as it ends. ``started()`` is called once the
    work is handed out (after the worker processes exist); ``stopped()`` is asked between results:
    when it says so (or on KeyboardInterrupt) the runs still going are abandoned and the generator
    ends (the interrupt is re-raised)."""
    if executor == "serial" or (workers == 1 and executor == "processes") or (len(tasks) <= 1 and executor != "dask"):
        started()
        for name, s in tasks:
            if stopped():
                return
            yield run_policy(name, reg[name], ws[s], s, placement, sim_options, keep_frame=s == 0)
        return
    if executor == "processes":
        yield from _processes(tasks, ws, placement, sim_options, workers, stopped, started)
    else:
        yield from _dask(tasks, ws, placement, sim_options, client, stopped, started)


def _processes(tasks, ws, placement, sim_options, workers, stopped, started) -> Iterator[RunResult]:
    pool = mp.get_context().Pool(
        min(workers, len(tasks)), initializer=_init_worker, initargs=(ws, placement, sim_options)
    )
    clean = False
    try:
        it = pool.imap_unordered(_worker_task, tasks, chunksize=1)
        started()
        for _ in range(len(tasks)):
            while True:
                if stopped():
                    return
                try:
                    res = it.next(timeout=0.5)
                    break
                except mp.TimeoutError:
                    continue
            yield res
        clean = True
    finally:
        if clean:
            pool.close()
        else:  # interrupted: the runs still going are abandoned
            pool.terminate()
        pool.join()


def _dask(tasks, ws, placement, sim_options, client, stopped, started) -> Iterator[RunResult]:
    from dask.distributed import as_completed  # optional and heavy: only with executor="dask"

    futs = []
    try:
        shared = client.scatter(list(ws), broadcast=True)
        futs = [client.submit(_dask_task, name, s, shared[s], placement, sim_options, pure=False) for name, s in tasks]
        started()
        for f in as_completed(futs):
            if stopped():
                return
            yield f.result()
    finally:
        for f in futs:
            if not f.done():
                f.cancel()
