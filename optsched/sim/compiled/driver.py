"""Which engine runs a :class:`~optsched.sim.Simulator`, and the driver of the compiled one.

``Simulator(..., engine="auto" | "python" | "compiled")``. The compiled kernel
(:mod:`optsched.sim.compiled.kernel`, numba) replays GPU-only, constant-rate workloads under the baselines
FIFO, SJF, SRTF and LAS exactly as the Python engine does (rules R3-R12 of
``formulations/lazer.md``; ``tests/sim/test_kernel.py`` compares the two job by job). What it
does not cover, and why, is :func:`unsupported`: every event hook of another policy is Python code;
load and save times, checkpoints (stages), early termination, slotted time, other resources,
per-decision timings and the event log are state the kernel does not keep; the ``random``
placement draws from the simulator's NumPy generator.

``"auto"`` takes the kernel when it covers the simulation and the workload has at least
:data:`AUTO_MIN_JOBS` jobs (below that, importing numba and loading the compiled kernel, about
0.5 s, costs more than the Python engine's whole run); otherwise the Python engine runs, and the
reason is logged once (logger ``optsched.sim``, level INFO: ``optsched simulate --verbose``).
``"compiled"`` raises :class:`~optsched.exceptions.InvalidOptionError` naming what the kernel does
not cover. Setting the environment variable ``OPTSCHED_NO_KERNEL=1`` turns the kernel off (as if
numba were not installed).

Nothing here imports numba: the kernel module is imported only when it runs.
"""

from __future__ import annotations

import inspect
import logging
import os
import warnings
from array import array
from collections.abc import Mapping
from typing import Any

import numpy as np

from optsched.exceptions import EngineFallbackWarning, InvalidOptionError, SimulationError
from optsched.sim.inputs import count_jobs, is_table, make_jobs, table_columns
from optsched.sim.limits import already_ran_error, limit_error, livelock_error, run_limits, unfinished_error
from optsched.sim.options import ENGINES
from optsched.sim.policy import compiled_kind

__all__ = ["ENGINES", "AUTO_MIN_JOBS", "DISABLE_ENV", "unsupported", "compiled_run", "CompiledRun"]

#: "auto" uses the kernel from this many jobs on (numba's import and the cached kernel's load,
#: about 0.5 s, would cost more than the Python engine on smaller workloads)
AUTO_MIN_JOBS = 20_000
#: set (to anything but "" or "0") to turn the compiled kernel off
DISABLE_ENV = "OPTSCHED_NO_KERNEL"
#: the policy classes the kernel implements, by their declared ``compiled_kind``
KINDS = ("fifo", "sjf", "srtf", "las")
#: the placement rules the kernel implements (codes of optsched.sim.compiled.kernel)
RULES = {"consolidate": 0, "first_fit": 1, "least_loaded": 2, "whole_node": 3}
_PHASE_NAMES = np.array(["pending", "waiting", "loading", "training", "saving", "done", "failed"], dtype=object)
_MAX_GPUS_PER_SERVER = 62  # free-count bit masks in int64

log = logging.getLogger("optsched.sim")
_said: set[tuple[bool, str]] = set()


def _say_once(msg: str, n_jobs: int = 0) -> None:
    """Say ``msg`` once per process: as an :class:`~optsched.exceptions.EngineFallbackWarning` for
    a workload of :data:`AUTO_MIN_JOBS` jobs or more (where the engine matters), else in the log."""
    warn = n_jobs >= AUTO_MIN_JOBS
    if (warn, msg) in _said:
        return
    _said.add((warn, msg))
    if not warn:
        log.info(msg)
        return
    level, f = 1, inspect.currentframe()
    while f is not None and f.f_globals.get("__name__", "").startswith("optsched.sim"):
        f, level = f.f_back, level + 1  # the warning names the first caller outside optsched.sim
    warnings.warn(msg, EngineFallbackWarning, stacklevel=level)


def kernel_unavailable() -> str | None:
    """Why the compiled kernel cannot run in this process (None if it can). Imports numba."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return f"the compiled kernel is turned off ({DISABLE_ENV} is set)"
    try:
        import optsched.sim.compiled.kernel  # noqa: F401
    except ImportError as e:  # numba missing or broken
        return f"numba cannot be imported ({e}); `pip install numba` for the compiled kernel"
    return None


def unsupported(
    sim: Any, jobs: Any, *, load_time: Any = 0.0, save_time: Any = 0.0, stages: Any = None, terminate_after: Any = None
) -> list[str]:
    """What of this simulation the compiled kernel does not cover (empty: it covers it all).

    ``sim`` is the Simulator being built (its options are set and checked, its jobs not yet),
    ``jobs`` its input, the rest its options.
    """
    why = []
    pol = sim.policy
    if compiled_kind(pol) not in KINDS:
        why.append(
            f"policy {type(pol).__name__} (the kernel has FIFO, SJF, SRTF and LAS; a policy class declares "
            f"its counterpart with `compiled_kind`)"
        )
    else:
        if getattr(pol, "size_attr", None) is not None:
            why.append("SJF with size_attr (a predicted size)")
        if pol.placement not in RULES:
            why.append(f"placement {pol.placement!r} (it draws from the simulator's random generator)")
        if getattr(pol, "gpu_ids", False):
            why.append("a policy that names GPU ids")
    if compiled_kind(sim.rate_model) != "constant":
        why.append(f"rate model {type(sim.rate_model).__name__} (the kernel has ConstantRate only)")
    if callable(load_time) or callable(save_time) or float(load_time) > 0 or float(save_time) > 0:
        why.append("load_time/save_time")
    if stages:
        why.append("stages (checkpoints)")
    if terminate_after:
        why.append("terminate_after")
    if sim.slot is not None:
        why.append("slot (slotted time)")
    if sim.time_decisions:
        why.append("time_decisions=True")
    if sim.record_log:
        why.append("record_log=True (the event log; pass record_log=False)")
    servers = sim.cluster.servers
    if any(srv.resources for srv in servers):
        why.append("servers with other resources")
    if max((srv.gpus for srv in servers), default=0) > _MAX_GPUS_PER_SERVER:
        why.append(f"servers of more than {_MAX_GPUS_PER_SERVER} GPUs")
    if is_table(jobs):
        cols = list(jobs.columns) if hasattr(jobs, "columns") else list(jobs)
        for c in ("load_time", "save_time"):
            try:
                own = c in cols and np.any(np.asarray(jobs[c], dtype=float) != 0)
            except (TypeError, ValueError):  # not numbers: the table's check names the column and the row
                own = True
            if own:
                why.append(f"jobs with their own {c}")
    else:
        try:
            listed = list(jobs)
        except TypeError:
            listed = []  # make_jobs refuses it with the right message
        if any(getattr(j, "resources", None) for j in listed):
            why.append("jobs with other resources")
        if any(getattr(j, "load_time", None) or getattr(j, "save_time", None) for j in listed):
            why.append("jobs with their own load_time/save_time")
        if any(len((getattr(j, "attrs", None) or {}).get("stages") or ()) > 1 for j in listed):
            why.append("stages (checkpoints)")
    return why


def compiled_run(
    sim: Any,
    jobs: Any,
    *,
    engine: str,
    record_segments: bool,
    load_time: Any = 0.0,
    save_time: Any = 0.0,
    stages: Any = None,
    terminate_after: Any = None,
    attrs_columns: Any = (),
) -> CompiledRun | None:
    """The compiled run of ``sim`` if ``engine`` asks for it and the kernel covers it, else None
    (the Python engine runs; with ``"auto"`` the reason is said once: a warning from
    :data:`AUTO_MIN_JOBS` jobs on, else the log).

    Raises
    ------
    InvalidOptionError
        ``engine="compiled"`` for a simulation the kernel does not cover (the message names what)
        or without numba. (``engine`` and ``record_segments`` are checked with the other options,
        :class:`optsched.sim.options.SimOptions`.)
    """
    if engine == "python":
        return None
    why = unsupported(
        sim, jobs, load_time=load_time, save_time=save_time, stages=stages, terminate_after=terminate_after
    )
    if engine == "compiled" and why:
        raise InvalidOptionError(
            f"engine='compiled' does not cover this simulation: {'; '.join(why)}. Use engine='auto' "
            f"(the Python engine runs what the kernel does not cover) or engine='python'."
        )
    if why:
        _say_once(
            f"engine='auto': the Python engine runs this simulation (the compiled kernel lacks {'; '.join(why)})",
            count_jobs(jobs),
        )
        return None
    if is_table(jobs):
        data = table_columns(jobs, sim.cluster, attrs_columns=attrs_columns)
    else:  # a list of core Jobs: the SimJobs validate them (small inputs)
        sj = make_jobs(jobs, sim.cluster, stages, attrs_columns=attrs_columns)
        data = {
            "ids": [j.id for j in sj],
            "arrival": np.array([j.arrival for j in sj], dtype=float),
            "work": np.array([j.work for j in sj], dtype=float),
            "gpus": np.array([j.gpus for j in sj], dtype=np.int64),
            "weight": np.array([j.weight for j in sj], dtype=float),
            "single": np.array([j.single_server for j in sj], dtype=bool),
        }
    n = len(data["ids"])
    if engine == "auto" and n < AUTO_MIN_JOBS:
        _say_once(
            f"engine='auto': the Python engine runs simulations of fewer than {AUTO_MIN_JOBS:,} jobs "
            f"(importing numba and loading the compiled kernel would take longer)"
        )
        return None
    bad = kernel_unavailable()
    if bad is not None:
        if engine == "compiled":
            raise InvalidOptionError(f"engine='compiled' cannot run: {bad}. Use engine='auto' or 'python'.")
        _say_once(f"engine='auto': the Python engine runs this simulation ({bad})", n)
        return None
    _say_once(f"engine={engine!r}: the compiled kernel runs {type(sim.policy).__name__} simulations")
    return CompiledRun(sim, data, record_segments)


class JobRow:
    """A job of a compiled run as the result sees it (``SimResult`` reads ``id``; the Python
    engine's :class:`~optsched.sim.state.SimJob` has these fields too)."""

    __slots__ = ("id", "index", "arrival", "work", "gpus", "weight", "single_server")

    def __init__(self, id: Any, index: int, arrival: float, work: float, gpus: int, weight: float, single: bool):
        self.id = id
        self.index = index
        self.arrival = arrival
        self.work = work
        self.gpus = gpus
        self.weight = weight
        self.single_server = single

    @property
    def label(self) -> str:
        return f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"

    def __repr__(self) -> str:
        return f"JobRow(id={self.id!r}, arrival={self.arrival:g}, work={self.work:g}, gpus={self.gpus})"


class JobRows:
    """The jobs of a compiled run, in input order, as a read-only sequence of :class:`JobRow`
    (made on access: a million-job run keeps arrays, not objects)."""

    def __init__(self, data: Mapping[str, Any]):
        self._d = data

    def __len__(self) -> int:
        return len(self._d["ids"])

    def __getitem__(self, i: int) -> JobRow:
        d = self._d
        n = len(d["ids"])
        if not -n <= i < n:
            raise IndexError(i)
        i %= n
        return JobRow(
            d["ids"][i],
            i,
            float(d["arrival"][i]),
            float(d["work"][i]),
            int(d["gpus"][i]),
            float(d["weight"][i]),
            bool(d["single"][i]),
        )

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class Segments:
    """The GPU-holding segments of a compiled run, as the Python engine's tuples ``(job index,
    start, end, {server: GPUs}, None, None)`` (made on access), in the order they ended."""

    def __init__(self, segi: np.ndarray, segf: np.ndarray, pool: np.ndarray):
        self._i, self._f, self._pool = segi, segf, pool  # (job, offset, length), (start, end), placements

    def __len__(self) -> int:
        return len(self._i)

    def __getitem__(self, k: int) -> tuple:
        j, o, ln = (int(x) for x in self._i[k])
        pl = dict(zip(self._pool[o : o + ln, 0].tolist(), self._pool[o : o + ln, 1].tolist(), strict=True))
        return (j, float(self._f[k, 0]), float(self._f[k, 1]), pl, None, None)

    def __iter__(self):
        return (self[k] for k in range(len(self)))


class NotRecorded:
    """Stands for the segments (and GPU holds) of a run with ``record_segments=False``."""

    def _fail(self):
        raise SimulationError(
            "This run did not keep its GPU-holding segments (Simulator(record_segments=False)); "
            "res.schedule() and res.segments() need them: run again with record_segments=True."
        )

    def __len__(self) -> int:
        self._fail()
        return 0

    def __iter__(self):
        self._fail()

    def __getitem__(self, k):
        self._fail()


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` with room for at least ``need`` more rows than it has (half as many again)."""
    out = np.empty((max(len(a) + len(a) // 2, len(a) + need), *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


class CompiledRun:
    """One simulation on the compiled kernel: the arrays, the chunked run, the result.

    Built by :func:`compiled_run` (the kernel module is imported then).
    """

    #: event times per kernel call (between calls: buffers grow, the progress bar moves, Ctrl-C works)
    BUDGET = 200_000
    #: the event heap drops its stale rows beyond 2 x GPUs + EVENT_SLACK rows, the running-job heap
    #: beyond 2 x GPUs + RUN_SLACK (tests set them to 0 to exercise that on small runs)
    EVENT_SLACK = 1024
    RUN_SLACK = 256

    def __init__(self, sim: Any, data: dict, record_segments: bool):
        self.sim = sim
        self.data = data
        self.record_segments = record_segments
        self.jobs = JobRows(data)
        self.ran = False

    # -- state ---------------------------------------------------------------------------------
    def _state(self, until: float | None, max_time: float, max_events: float, initial: int | None):
        from optsched.sim.compiled import kernel as K

        sim, d = self.sim, self.data
        pol = sim.policy
        n = len(d["ids"])
        gpus = d["gpus"].astype(np.int64)
        single = d["single"].astype(bool)
        cap = np.array([srv.gpus for srv in sim.cluster.servers], dtype=np.int64)
        S = len(cap)
        maxcap = int(cap.max(initial=0))
        G = int(cap.sum())
        P = 1
        while P < S:
            P *= 2
        tree = np.zeros(2 * P, dtype=np.int64)
        tree[P : P + S] = np.left_shift(1, cap)
        for i in range(P - 1, 0, -1):
            tree[i] = tree[2 * i] | tree[2 * i + 1]
        keys, cls = np.unique(gpus * 2 + single, return_inverse=True)
        C = len(keys)
        cl = np.zeros((C, K.N_CL), dtype=np.int64)
        cl[:, K.CG] = keys // 2
        cl[:, K.CSINGLE] = keys % 2
        cl[1:, K.COFF] = np.cumsum(np.bincount(cls, minlength=C))[:-1]
        gv = np.zeros(K.N_GV, dtype=np.int64)
        gv[K.G_KIND] = {"fifo": K.FIFO, "sjf": K.SJF, "srtf": K.SRTF, "las": K.LAS}[compiled_kind(pol)]
        gv[K.G_RULE] = RULES[pol.placement]
        gv[K.G_STRICT] = not pol.backfill
        gv[K.G_ROLLBACK] = bool(getattr(pol, "rollback", False))
        gv[K.G_GPUW] = bool(getattr(pol, "gpu_weighted", False))
        gv[K.G_N], gv[K.G_S], gv[K.G_MAXCAP], gv[K.G_G], gv[K.G_P], gv[K.G_C] = n, S, maxcap, G, P, C
        gv[K.G_RECORD] = self.record_segments
        gv[K.G_BUDGET] = self.BUDGET
        gv[K.G_EV_SLACK], gv[K.G_RH_SLACK] = self.EVENT_SLACK, self.RUN_SLACK
        gv[K.G_TOTFREE] = gv[K.G_WHOLEFREE] = G
        gv[K.G_FCNT : K.G_FCNT + maxcap + 1] = np.bincount(cap, minlength=maxcap + 1)
        fv = np.zeros(K.N_FV)
        fv[K.F_RATE] = sim.rate_model.rate(None, {}, None)
        fv[K.F_QUANTUM] = getattr(pol, "quantum", 0.0)
        fv[K.F_MAX_TIME] = max_time
        fv[K.F_MAX_EVENTS] = max_events
        fv[K.F_STOP] = np.inf if until is None else float(until)
        fv[K.F_STALE] = -np.inf
        jf = np.zeros((n, K.N_JF))
        jf[:, K.ARR] = d["arrival"]
        jf[:, K.WORK] = d["work"]
        jf[:, K.FIRST] = jf[:, K.COMP] = np.nan
        ji = np.zeros((n, K.N_JI), dtype=np.int32)
        ji[:, K.GPUS] = gpus
        ji[:, K.SINGLE] = single
        ji[:, K.CLS] = cls
        ji[:, K.RUNPOS] = -1
        ji[:, K.ORDER] = np.argsort(d["arrival"], kind="stable")
        srv = np.zeros((S + 1, K.N_SRV), dtype=np.int64)
        srv[:S, K.CAP] = srv[:S, K.FREE] = cap
        srv[:S, K.WNORD] = np.argsort(-cap, kind="stable")
        rec = self.record_segments
        size = initial if initial is not None else n + 16  # the growing buffers start here
        ev = initial if initial is not None else 4 * G + 1024
        pool = (initial if initial is not None else n + 4 * G) if rec else 8 * G + 1024
        nseg = size if rec else 0
        return K.State(
            jf=jf,
            ji=ji,
            gv=gv,
            fv=fv,
            srv=srv,
            tree=tree,
            cl=cl,
            qh=np.zeros((n + 1, 3)),  # the last row is scratch
            rh=np.zeros((2 * G + self.RUN_SLACK + 4, 4)),  # stale rows dropped beyond that; the last is scratch
            rr=np.zeros((G + 1, K.N_RR), dtype=np.int64),
            evt=np.zeros(ev),
            evi=np.zeros((ev, 3), dtype=np.int64),
            pool=np.zeros((pool, 2), dtype=np.int32),
            segf=np.zeros((nseg, 2)),
            segi=np.zeros((nseg, 3), dtype=np.int32),
            holds=np.zeros(2 * nseg, dtype=np.int32),
            stt=np.zeros(size),
            stg=np.zeros(size, dtype=np.int64),
        )

    @staticmethod
    def _grow(s):
        """Grow the buffers that may be too small for one more event time (what kernel._room checks);
        without recorded segments the placements of finished runs are dropped first."""
        from optsched.sim.compiled import kernel as K

        G = int(s.gv[K.G_G])
        gv = s.gv
        rep = {}
        if len(s.evt) - gv[K.G_EHN] < 3 * G + 8:
            rep["evt"], rep["evi"] = _grown(s.evt, 3 * G + 8), _grown(s.evi, 3 * G + 8)
        if len(s.pool) - gv[K.G_POOL] < 2 * G + 2:
            if not gv[K.G_RECORD]:
                K.compact_pool(s)
            if len(s.pool) - gv[K.G_POOL] < 2 * G + 2:
                rep["pool"] = _grown(s.pool, 2 * G + 2)
        if len(s.stt) - gv[K.G_NSTEP] < 2:
            rep["stt"], rep["stg"] = _grown(s.stt, 2), _grown(s.stg, 2)
        if gv[K.G_RECORD]:
            if len(s.segi) - gv[K.G_NSEG] < G + 1:
                rep["segf"], rep["segi"] = _grown(s.segf, G + 1), _grown(s.segi, G + 1)
            if len(s.holds) - gv[K.G_NHOLD] < 3 * G + 2:
                rep["holds"] = _grown(s.holds, 3 * G + 2)
        return s._replace(**rep)

    def _limits(self, max_time: Any, max_events: Any) -> tuple[float, float]:
        """The run's limits (:func:`optsched.sim.limits.run_limits`, as the Python engine)."""
        d = self.data

        def workload() -> tuple[float, float]:
            last = float(d["arrival"].max()) if len(d["ids"]) else 0.0
            return last, sum(d["work"].tolist())  # the engine's left-to-right sum

        rate = self.sim.rate_model.rate(None, {}, None)
        return run_limits(max_time, max_events, n_jobs=len(d["ids"]), workload=workload, rate=rate)

    # -- the run -------------------------------------------------------------------------------
    def run(self, until: float | None = None, max_time: Any = "auto", max_events: Any = "auto", *, initial=None):
        """Run to the end (or to time ``until``); the same :class:`~optsched.sim.SimResult` as the
        Python engine. ``initial``: the starting size of the growing buffers (tests)."""
        from optsched.sim.compiled import kernel as K

        sim = self.sim
        if self.ran:
            raise already_ran_error()
        mt, me = self._limits(max_time, max_events)
        self.ran = True
        s = self._state(until, mt, me, initial)
        bar = None
        n = len(self.jobs)
        if sim.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=n, desc=f"simulate {sim.policy.name}", unit="job", mininterval=0.5)
        try:
            while True:
                st = K.run_chunk(s)
                if st == K.ST_ROOM:
                    s = self._grow(s)
                elif st == K.ST_BUDGET:
                    if bar is not None:
                        bar.update(int(s.gv[K.G_NFIN]) - bar.n)
                else:
                    break
        finally:
            if bar is not None:
                bar.update(int(s.gv[K.G_NFIN]) - bar.n)
                bar.close()
        if st == K.ST_END and s.gv[K.G_NFIN] < len(self.jobs):  # the Python engine's clock also passed
            s.fv[K.F_NOW] = max(s.fv[K.F_NOW], s.fv[K.F_STALE])  # the stale entries up to `until`
        now = float(s.fv[K.F_NOW])
        n_events = int(s.gv[K.G_NEV])
        sim.now = now
        sim.n_events = n_events - int(s.gv[K.G_NSTALE])
        name = sim.policy.name
        if st == K.ST_LIMIT:
            ai = int(s.gv[K.G_AI])
            t = s.evt[0] if s.gv[K.G_EHN] else s.jf[s.ji[ai, K.ORDER], K.ARR]
            self._limit_error(s, float(t), n_events, mt, me)
        if st == K.ST_LIVELOCK:
            raise livelock_error(name, int(s.gv[K.G_SAME_T]), now)
        if st == K.ST_INTERNAL:  # pragma: no cover - the kernel's own checks
            raise SimulationError(f"Internal error of the compiled kernel at t={now:g} (policy {name!r}).")
        if until is None and not sim.allow_unfinished:
            stuck = np.nonzero(s.ji[:, K.PHASE] != K.DONE)[0]
            if len(stuck):
                i = int(stuck[0])
                phase = _PHASE_NAMES[s.ji[i, K.PHASE]]
                raise unfinished_error(name, len(stuck), self.jobs[i].label, phase, int(s.ji[i, K.GPUS]))
        return self._result(s)

    def _limit_error(self, s, t: float, n_events: int, max_time: float, max_events: float):
        from optsched.sim.compiled import kernel as K

        unfinished = int((s.ji[:, K.PHASE] != K.DONE).sum())
        running = [(self.jobs[int(j)].label, "training", int(s.ji[j, K.NPRE])) for j in s.rr[: s.gv[K.G_RUNN], K.RUNL]]
        raise limit_error(
            self.sim.policy.name,
            t,
            n_events,
            max_time,
            max_events,
            n_jobs=len(self.jobs),
            n_unfinished=unfinished,
            running=running,
        )

    def _result(self, s):
        """The SimResult, from the arrays (the job table and the GPUs-in-use steps computed here)."""
        from optsched.sim.compiled import kernel as K
        from optsched.sim.metrics import RunRecord, SimResult

        sim, d = self.sim, self.data
        n = len(d["ids"])
        jf, ji, gv = s.jf, s.ji, s.gv
        arrival, comp, first, train = jf[:, K.ARR], jf[:, K.COMP], jf[:, K.FIRST], jf[:, K.TRAIN]
        phase = ji[:, K.PHASE]
        load, save = np.zeros(n), np.zeros(n)
        jct = comp - arrival
        ids = np.empty(n, dtype=object)
        ids[:] = d["ids"]
        cols = {
            "job_id": ids,
            "arrival": arrival,
            "gpus": ji[:, K.GPUS].astype(np.int64),
            "work": jf[:, K.WORK],
            "weight": d["weight"].astype(float),
            "status": _PHASE_NAMES[phase],
            "first_start": first,
            "completion": comp,
            "queue_delay": first - arrival,
            "jct": jct,
            "waiting": jct - load - train - save - 0.0,  # the Python engine's expression
            "loading_time": load,
            "training_time": train,
            "saving_time": save,
            "futile_time": np.zeros(n),
            "n_futile": np.zeros(n, dtype=np.int64),
            "lost_work": jf[:, K.LOST],
            "n_preemptions": ji[:, K.NPRE].astype(np.int64),
            "stages_done": (phase == K.DONE).astype(np.int64),
        }
        nst = int(gv[K.G_NSTEP])
        steps = (s.stt[:nst].copy(), s.stg[:nst].copy())
        running = [int(j) for j in s.rr[: gv[K.G_RUNN], K.RUNL]]
        running.sort(key=lambda j: (jf[j, K.HSTART], ji[j, K.PLOFF]))  # start order, as the engine's dict

        def placement(j: int) -> dict[int, int]:
            o, ln = int(ji[j, K.PLOFF]), int(ji[j, K.PLLEN])
            return dict(zip(s.pool[o : o + ln, 0].tolist(), s.pool[o : o + ln, 1].tolist(), strict=True))

        if self.record_segments:
            k = int(gv[K.G_NSEG])
            segments: Any = Segments(s.segi[:k], s.segf[:k], s.pool)
            holds: Any = array("q", s.holds[: gv[K.G_NHOLD]].astype(np.int64).tobytes())
        else:
            segments = holds = NotRecorded()
        rec = RunRecord(
            policy=sim.policy.name,
            cluster=sim.cluster,
            capacity=sim.capacity,
            end_time=float(s.fv[K.F_NOW]),
            n_events=int(gv[K.G_NEV] - gv[K.G_NSTALE]),
            slot=None,
            jobs=self.jobs,
            segments=segments,
            holds=holds,
            open_holds={j: [placement(j)] for j in running},
            held_at_end=[(float(jf[j, K.HSTART]), int(ji[j, K.GPUS])) for j in running],
            reserved=[],
            log=None,
            decision_seconds=None,
            engine="compiled",
            columns=cols,
            steps=steps,
        )
        return SimResult(rec)
