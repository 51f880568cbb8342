"""Which engine runs a :class:`~optsched.sim.Simulator`, and the driver of the compiled one.

``Simulator(..., engine="auto" | "python" | "compiled")``. The compiled kernel
(:mod:`optsched.sim.compiled.kernel`, numba) replays GPU-only, constant-rate workloads under the
baselines FIFO, SJF, SRTF, periodic SRTF and LAS, and Lazer with a fixed deferral X, with per-job
load and save times, exactly as the Python engine does (rules R1-R12 of ``formulations/lazer.md``;
``tests/sim/test_kernel*.py`` compare the two job by job); what it does not cover, and why, is
:func:`~optsched.sim.compiled.coverage.unsupported`.

``"auto"`` takes the kernel when it covers the simulation and the workload has at least
:data:`AUTO_MIN_JOBS` jobs (below that, importing numba and loading the compiled kernel costs more
than the Python engine's whole run); otherwise the Python engine runs, and the reason is logged
once (logger ``optsched.sim``, level INFO: ``optsched simulate --verbose``). ``"compiled"`` raises
:class:`~optsched.exceptions.InvalidOptionError` naming what the kernel does not cover. Setting the
environment variable ``OPTSCHED_NO_KERNEL=1`` turns the kernel off (as if numba were not installed).

Nothing here imports numba: the kernel module is imported only when it runs.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from typing import Any

import numpy as np

from optsched.exceptions import EngineFallbackWarning, InvalidOptionError, SimulationError
from optsched.sim.compiled import layout as L
from optsched.sim.compiled.build import prepare, python_engine_estimate
from optsched.sim.compiled.coverage import AUTO_MIN_JOBS, unsupported
from optsched.sim.compiled.records import EventLog, Holds, JobRows, NotRecorded, Segments
from optsched.sim.limits import already_ran_error, limit_error, livelock_error, run_limits, unfinished_error
from optsched.sim.metrics import RunRecord, SimResult
from optsched.sim.model.inputs import count_jobs, is_table, make_jobs, table_columns
from optsched.sim.options import SimOptions
from optsched.sim.policy import compiled_kind

_PHASE_NAMES = np.array(L.PHASE_NAMES, dtype=object)

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


def compiled_run(jobs: Any, options: SimOptions) -> CompiledRun | None:
    """The compiled run of ``jobs`` under the checked ``options`` if ``options.engine`` asks for it
    and the kernel covers it, else None (the Python engine runs; with ``"auto"`` the reason is said
    once: a warning from :data:`AUTO_MIN_JOBS` jobs on, else the log).

    Raises
    ------
    InvalidOptionError
        ``engine="compiled"`` for a simulation the kernel does not cover (the message names what)
        or without numba. (``engine`` and ``record_segments`` are checked with the other options,
        :class:`optsched.sim.options.SimOptions`.)
    """
    engine, load_time, save_time, stages = options.engine, options.load_time, options.save_time, options.stages
    if engine == "python":
        return None
    why = unsupported(
        options, jobs, load_time=load_time, save_time=save_time, stages=stages, terminate_after=options.terminate_after
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
        data = table_columns(jobs, options.cluster, attrs_columns=options.attrs_columns)
    else:  # a list of core Jobs: the SimJobs validate them (small inputs)
        sj = make_jobs(jobs, options.cluster, stages, attrs_columns=options.attrs_columns)
        data = {
            "ids": [j.id for j in sj],
            "arrival": np.array([j.arrival for j in sj], dtype=float),
            "work": np.array([j.work for j in sj], dtype=float),
            "gpus": np.array([j.gpus for j in sj], dtype=np.int64),
            "weight": np.array([j.weight for j in sj], dtype=float),
            "single": np.array([j.single_server for j in sj], dtype=bool),
            "load_time": [j.load_s for j in sj],
            "save_time": [j.save_s for j in sj],
        }
    n = len(data["ids"])
    if engine == "auto" and n < AUTO_MIN_JOBS:
        _say_once(
            f"engine='auto': the Python engine runs simulations of fewer than {AUTO_MIN_JOBS:,} jobs "
            f"(importing numba and loading the compiled kernel would take longer)"
        )
        return None
    bad, compile_seconds = prepare(policy=compiled_kind(options.policy))  # loads or compiles it (said on stderr)
    if bad is not None:
        if engine == "compiled":
            raise InvalidOptionError(f"engine='compiled' cannot run: {bad}. Use engine='auto' or 'python'.")
        _say_once(f"engine='auto': {bad}; {python_engine_estimate(n)}", n)
        return None
    _say_once(f"engine={engine!r}: the compiled kernel runs {type(options.policy).__name__} simulations")
    for name, option in (("load_time", load_time), ("save_time", save_time)):
        data[name] = _per_job(data.get(name), float(option), n)
    return CompiledRun(options, data, compile_seconds)


def _per_job(own: Any, option: float, n: int) -> np.ndarray:
    """Each job's seconds: its own value where it has one (a job table's column, a Job's field),
    else the simulator's option."""
    if own is None:
        return np.full(n, option)
    return np.array([option if v is None else v for v in own], dtype=float)


def _aligned(shape: tuple[int, int], dtype: type) -> np.ndarray:
    """Zeros whose rows start on 64-byte boundaries (a row of 64 bytes is one cache line)."""
    itemsize = np.dtype(dtype).itemsize
    size = shape[0] * shape[1]
    raw = np.zeros(size + 64 // itemsize, dtype=dtype)
    skip = (-raw.ctypes.data % 64) // itemsize
    return raw[skip : skip + size].reshape(shape)


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` with room for at least ``need`` more rows than it has (half as many again)."""
    out = np.empty((max(len(a) + len(a) // 2, len(a) + need), *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


class CompiledRun:
    """One simulation on the compiled kernel: the arrays, the chunked run, the result.

    Built by :func:`compiled_run` from the checked options and the jobs' columns (the kernel
    module is imported then).
    """

    #: event times per kernel call (between calls: buffers grow, the progress bar moves, Ctrl-C works)
    BUDGET = 200_000
    #: the event heap drops its stale rows beyond 2 x (jobs holding GPUs) + EVENT_SLACK rows, the
    #: running-job heaps beyond 2 x (jobs holding GPUs) + RUN_SLACK (tests set them to 0 to exercise
    #: that on small runs)
    EVENT_SLACK = 1024
    RUN_SLACK = 256

    def __init__(self, options: SimOptions, data: dict, compile_seconds: float = 0.0):
        #: the checked options (policy, cluster, rate model, flags); the array builders below read
        #: them as ``sim``
        self.sim = self.options = options
        self.data = data
        self.record_segments = options.record_segments
        #: seconds spent compiling the kernel for this run (once per machine; not part of the run)
        self.compile_seconds = compile_seconds
        self.jobs = JobRows(data)
        self.ran = False
        #: the rows of the append-only buffers the kernel filled before its current ones, in order:
        #: "log" (lgt, lgi), "seg" (segi, segf), "holds" (holds,)
        self.filled: dict[str, list[tuple[np.ndarray, ...]]] = {"log": [], "seg": [], "holds": []}
        self.merged_ticks = 0
        self.now = 0.0  # the simulated time, and the events processed (set by run)
        self.n_events = 0

    # -- state ---------------------------------------------------------------------------------
    def _state(self, until: float | None, max_time: float, max_events: float, initial: int | None) -> L.State:
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
        code = gpus * 2 + single  # the (GPU demand, single-server) classes, without a sort
        keys = np.nonzero(np.bincount(code))[0]
        cls = np.zeros(int(keys[-1]) + 1, dtype=np.int64)
        cls[keys] = np.arange(len(keys))
        cls = cls[code]
        C = len(keys)
        cl = np.zeros((C, L.N_CL), dtype=np.int64)
        cl[:, L.CG] = keys // 2
        cl[:, L.CSINGLE] = keys % 2
        cl[1:, L.COFF] = np.cumsum(np.bincount(cls, minlength=C))[:-1]
        kind = L.KIND_CODES[compiled_kind(pol)]
        keep_log = bool(sim.record_log)
        gv = np.zeros(L.N_GV, dtype=np.int64)
        gv[L.G_KIND] = kind
        gv[L.G_RULE] = L.RULE_CODES[pol.placement]
        gv[L.G_STRICT] = not getattr(pol, "backfill", True)
        gv[L.G_ROLLBACK] = bool(getattr(pol, "rollback", False))
        gv[L.G_GPUW] = bool(getattr(pol, "gpu_weighted", False))
        gv[L.G_RESERVE] = getattr(pol, "reserve", "best") == "preemptor"
        gv[L.G_FINISH] = sim.preempt_loading == "finish"
        gv[L.G_N], gv[L.G_S], gv[L.G_MAXCAP], gv[L.G_G], gv[L.G_P], gv[L.G_C] = n, S, maxcap, G, P, C
        gv[L.G_RECORD] = self.record_segments
        gv[L.G_LOG] = keep_log
        gv[L.G_KEEP_POOL] = self.record_segments or keep_log
        gv[L.G_BUDGET] = self.BUDGET
        gv[L.G_EV_SLACK], gv[L.G_RH_SLACK] = self.EVENT_SLACK, self.RUN_SLACK
        gv[L.G_TOTFREE] = gv[L.G_WHOLEFREE] = G
        gv[L.G_FCNT : L.G_FCNT + maxcap + 1] = np.bincount(cap, minlength=maxcap + 1)
        fv = np.zeros(L.N_FV)
        fv[L.F_RATE] = sim.rate_model.rate(None, {}, None)
        fv[L.F_QUANTUM] = getattr(pol, "quantum", getattr(pol, "period", 0.0))
        fv[L.F_MAX_TIME] = max_time
        fv[L.F_MAX_EVENTS] = max_events
        fv[L.F_STOP] = np.inf if until is None else float(until)
        fv[L.F_STALE] = -np.inf
        fv[L.F_TICK_TIME] = -1.0
        jf = _aligned((n, L.N_JF), np.float64)
        jf[:, L.ARR] = d["arrival"]
        jf[:, L.WORK] = d["work"]
        jf[:, L.LOAD_S] = d["load_time"]
        jc = np.zeros((n, L.N_JC))
        jc[:, L.FIRST] = jc[:, L.COMP] = np.nan
        jc[:, L.SAVE_S] = d["save_time"]
        if kind == L.K_LAZER:  # Lazer's fixed X, its secured mode, its queues' links and lists empty
            fv[L.F_Z_X] = pol.compiled_deferral()
            gv[L.G_Z_ALL] = pol.secured == "all"
            gv[[L.G_Z_NEWH, L.G_Z_NEWT, L.G_Z_ENDH, L.G_Z_ENDT, L.G_Z_NOTH, L.G_Z_NOTT]] = -1
            jc[:, [L.Z_OWN, L.Z_NEXT, L.Z_NNEXT, L.Z_VOF]] = -1.0
        ji = _aligned((n, L.N_JI), np.int32)
        ji[:, L.GPUS] = gpus
        ji[:, L.SINGLE] = single
        ji[:, L.CLS] = cls
        ji[:, L.RUNPOS] = -1
        arr = d["arrival"]
        ji[:, L.ORDER] = np.arange(n) if bool(np.all(arr[1:] >= arr[:-1])) else np.argsort(arr, kind="stable")
        ji[:, [L.CLF, L.CLP, L.LEFT, L.CLPOS, L.SAVPOS]] = -1
        srv = np.zeros((S + 1, L.N_SRV), dtype=np.int64)
        srv[:S, L.CAP] = srv[:S, L.FREE] = cap
        srv[:S, L.WNORD] = np.argsort(-cap, kind="stable")
        ce = np.zeros((2 * G + 16, L.N_CE), dtype=np.int64)
        ce[:, L.CE_NEXT] = np.arange(1, len(ce) + 1)
        ce[-1, L.CE_NEXT] = -1
        rec = self.record_segments
        size = initial if initial is not None else n + 16  # the growing buffers start here
        ev = initial if initial is not None else 4 * G + 1024
        pool = (initial if initial is not None else n + 4 * G) if gv[L.G_KEEP_POOL] else 8 * G + 1024
        nseg = size if rec else 0
        nlog = (initial if initial is not None else 8 * n + 12 * G + 1024) if keep_log else 0
        events = np.zeros((ev, L.N_EV))
        if kind == L.K_PSRTF:  # PeriodicSRTF.on_start: its timer, from the first arrival every period
            events[0] = (float(d["arrival"].min()), (L.P_TIMER << L.SEQ_BITS) | 1, 1, 0)
            gv[L.G_EHN] = gv[L.G_SEQ] = gv[L.G_TIMER_ID] = gv[L.G_TIMER_ON] = 1
        return L.State(
            jf=jf,
            jc=jc,
            ji=ji,
            gv=gv,
            fv=fv,
            srv=srv,
            tree=tree,
            cl=cl,
            qh=np.empty((n + 1, 3)),  # the last row is scratch
            rh=np.zeros((2, 2 * G + self.RUN_SLACK + 4, 4)),  # stale rows dropped beyond that; the last is scratch
            rr=np.zeros((G + 1, L.N_RR), dtype=np.int64),
            ce=ce,
            ev=events,
            pool=np.empty((pool, 2), dtype=np.int32),
            segf=np.empty((nseg, 2)),
            segi=np.empty((nseg, 3), dtype=np.int32),
            holds=np.empty(2 * nseg, dtype=np.int32),
            stt=np.empty(size),
            stg=np.empty(size, dtype=np.int64),
            lgt=np.empty(nlog),
            lgi=np.empty(nlog, dtype=np.int64),
        )

    def _grow(self, s: L.State) -> L.State:
        """Grow the buffers that may be too small for one more event time (what kernel._room checks);
        without recorded segments or log the placements of finished holds are dropped first. The
        event log, the segments and the holds are not copied: their rows so far are set aside
        (:attr:`filled`, joined when first read) and the kernel writes on at the start of fresh
        buffers."""
        # deferred: the kernel is compiled by numba on first import
        from optsched.sim.compiled import kernel as K

        gv = s.gv
        need = L.room_needed(int(gv[L.G_G]))
        rep = {}
        if len(s.ev) - gv[L.G_EHN] < need["ev"]:
            rep["ev"] = _grown(s.ev, need["ev"])
        if len(s.pool) - gv[L.G_POOL] < need["pool"]:
            if not gv[L.G_KEEP_POOL]:
                K.compact_pool(s)
            if len(s.pool) - gv[L.G_POOL] < need["pool"]:
                rep["pool"] = _grown(s.pool, need["pool"])
        if len(s.stt) - gv[L.G_NSTEP] < need["stt"]:
            rep["stt"], rep["stg"] = _grown(s.stt, need["stt"]), _grown(s.stg, need["stt"])
        if gv[L.G_RECORD]:
            k = int(gv[L.G_NSEG])
            if len(s.segi) - k < need["segi"]:
                self.set_aside("seg", (s.segi[:k], s.segf[:k]))
                size = max(need["segi"], len(s.segi))
                rep["segi"], rep["segf"] = np.empty((size, 3), dtype=np.int32), np.empty((size, 2))
                gv[L.G_NSEG] = 0
            k = int(gv[L.G_NHOLD])
            if len(s.holds) - k < need["holds"]:
                self.set_aside("holds", (s.holds[:k],))
                rep["holds"] = np.empty(max(need["holds"], len(s.holds)), dtype=np.int32)
                gv[L.G_NHOLD] = 0
        if gv[L.G_LOG]:
            want = need["lgt"] + int(gv[L.G_N] - gv[L.G_AI])
            k = int(gv[L.G_NLOG])
            if len(s.lgt) - k < want:
                self.set_aside("log", (s.lgt[:k], s.lgi[:k]))
                size = max(want, len(s.lgt))  # as large as the last: a preemptive run logs several rows per job
                rep["lgt"], rep["lgi"] = np.empty(size), np.empty(size, dtype=np.int64)
                gv[L.G_NLOG] = 0
        return s._replace(**rep)

    def set_aside(self, name: str, rows: tuple[np.ndarray, ...]) -> None:
        """Keep the filled ``rows`` of buffer ``name`` (none kept if empty)."""
        if len(rows[0]):
            self.filled[name].append(rows)

    def _joined_later(self, name: str, rows: tuple[np.ndarray, ...]) -> list[list[np.ndarray]]:
        """Per column of buffer ``name``: the parts set aside, then ``rows`` (the current buffer's)."""
        return [list(col) for col in zip(*self.filled[name], rows, strict=True)]

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
        # deferred: the kernel is compiled by numba on first import
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
                if st == L.ST_ROOM:
                    s = self._grow(s)
                elif st == L.ST_BUDGET:
                    if bar is not None:
                        bar.update(int(s.gv[L.G_NFIN]) - bar.n)
                else:
                    break
        finally:
            if bar is not None:
                bar.update(int(s.gv[L.G_NFIN]) - bar.n)
                bar.close()
        if st == L.ST_END and s.gv[L.G_NFIN] < n:  # the Python engine's clock also passed
            s.fv[L.F_NOW] = max(s.fv[L.F_NOW], s.fv[L.F_STALE])  # the stale entries up to `until`
        now = float(s.fv[L.F_NOW])
        n_events = int(s.gv[L.G_NEV])
        self.merged_ticks = int(s.gv[L.G_SKIPPED])  # LAS quantum ticks that could change nothing
        self.now = now
        self.n_events = n_events - int(s.gv[L.G_NSTALE])
        name = sim.policy.name
        if st == L.ST_LIMIT:
            ai = int(s.gv[L.G_AI])
            t = s.fv[L.F_NOW] if s.gv[L.G_NOTICES] else s.ev[0, L.ET] if s.gv[L.G_EHN] else np.inf
            if ai < n:
                t = min(t, s.jf[s.ji[ai, L.ORDER], L.ARR])
            self._limit_error(s, float(t), n_events, mt, me)
        if st == L.ST_LIVELOCK:
            raise livelock_error(name, int(s.gv[L.G_SAME_T]), now)
        if st == L.ST_INTERNAL:  # pragma: no cover - the kernel's own checks
            raise SimulationError(f"Internal error of the compiled kernel at t={now:g} (policy {name!r}).")
        if until is None and not sim.allow_unfinished:
            stuck = np.nonzero(s.ji[:, L.PHASE] != L.DONE)[0]
            if len(stuck):
                i = int(stuck[0])
                phase = _PHASE_NAMES[s.ji[i, L.PHASE]]
                raise unfinished_error(name, len(stuck), self.jobs[i].label, phase, int(s.ji[i, L.GPUS]))
        return self._result(s)

    def _limit_error(self, s: L.State, t: float, n_events: int, max_time: float, max_events: float):
        unfinished = int((s.ji[:, L.PHASE] != L.DONE).sum())
        running = [(self.jobs[int(j)].label, "training", int(s.ji[j, L.NPRE])) for j in s.rr[: s.gv[L.G_RUNN], L.RUNL]]
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

    def _result(self, s: L.State):
        """The SimResult, from the arrays (the job table and the GPUs-in-use steps computed here)."""

        sim, d = self.sim, self.data
        n = len(d["ids"])
        jf, jc, ji, gv = s.jf, s.jc, s.ji, s.gv
        arrival, comp, first, train = jf[:, L.ARR].copy(), jc[:, L.COMP], jc[:, L.FIRST], jc[:, L.TRAIN]
        load, save = jc[:, L.LOADT], jc[:, L.SAVET]
        phase = ji[:, L.PHASE]
        jct = comp - arrival
        ids = np.empty(n, dtype=object)
        ids[:] = d["ids"]
        cols = {
            "job_id": ids,
            "arrival": arrival,
            "gpus": ji[:, L.GPUS].astype(np.int64),
            "work": jf[:, L.WORK].copy(),
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
            "futile_time": jc[:, L.FUT],
            "n_futile": ji[:, L.NFUT].astype(np.int64),
            "lost_work": jc[:, L.LOST],
            "n_preemptions": ji[:, L.NPRE].astype(np.int64),
            "stages_done": (phase == L.DONE).astype(np.int64),
        }
        nst = int(gv[L.G_NSTEP])
        steps = (s.stt[:nst].copy(), s.stg[:nst].copy())
        running = [int(j) for j in s.rr[: gv[L.G_RUNN], L.RUNL]]
        running.sort(key=lambda j: (jf[j, L.HSTART], ji[j, L.PLOFF]))  # start order, as the engine's dict

        def placement(j: int) -> dict[int, int]:
            o, ln = int(ji[j, L.PLOFF]), int(ji[j, L.PLLEN])
            return dict(zip(s.pool[o : o + ln, 0].tolist(), s.pool[o : o + ln, 1].tolist(), strict=True))

        if self.record_segments:
            segi, segf = self._joined_later("seg", (s.segi[: gv[L.G_NSEG]], s.segf[: gv[L.G_NSEG]]))
            segments: Any = Segments(segi, segf, s.pool)
            holds: Any = Holds(*self._joined_later("holds", (s.holds[: gv[L.G_NHOLD]],)))
        else:
            segments = holds = NotRecorded()
        event_log = None
        if gv[L.G_LOG]:
            lgt, lgi = self._joined_later("log", (s.lgt[: gv[L.G_NLOG]], s.lgi[: gv[L.G_NLOG]]))
            event_log = EventLog(
                lgt,
                lgi,
                s.pool[: gv[L.G_POOL]],
                d["ids"],
                s.fv[L.F_RATE],
                bool(gv[L.G_ROLLBACK]),
            )
        rec = RunRecord(
            policy=sim.policy.name,
            cluster=sim.cluster,
            capacity=sim.cluster.total_gpus,
            end_time=float(s.fv[L.F_NOW]),
            n_events=int(gv[L.G_NEV] - gv[L.G_NSTALE]),
            slot=None,
            jobs=self.jobs,
            segments=segments,
            holds=holds,
            open_holds={j: [placement(j)] for j in running},
            held_at_end=[(float(jf[j, L.HSTART]), int(ji[j, L.GPUS])) for j in running],
            reserved=[],
            log=event_log,
            decision_seconds=None,
            engine="compiled",
            columns=cols,
            steps=steps,
            compile_seconds=self.compile_seconds,
        )
        return SimResult(rec)
