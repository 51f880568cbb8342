"""The Python engine: the event loop shared by every online policy, and the choice of engine.

Continuous time, one heap of events. A job's life: ``pending`` -> ``waiting`` (arrival) ->
``loading`` (holds GPUs, load time) -> ``training`` (progress at the rate model's rate, stage ends
= checkpoints) -> ``done`` | ``failed`` (early termination at a checkpoint), with preemption
(``training``/``loading`` -> ``saving`` (pause-and-save time, GPUs held) -> ``waiting``) and
migration (``saving`` on the old GPUs, then ``loading`` on the new ones).

Event order at equal times (R3 of ``formulations/lazer.md``, :mod:`optsched.sim.rules`): stage
ends (completions, checkpoints, early terminations), ends of saves, ends of loads, arrivals (in
input order), timers; ties within a kind by insertion order. After all events of one time the
policy's ``schedule`` hook runs once (see :mod:`optsched.sim.policy`).

``Simulator(...)`` picks the engine before anything is built: the options are checked once
(:mod:`optsched.sim.options`), the compiled kernel's driver says whether it covers the run
(:func:`optsched.sim.compiled.driver.compiled_run`), and the Simulator returned is either this
engine or a front for the kernel's run (:class:`_CompiledSimulator`).
"""

from __future__ import annotations

import gc
import heapq
import inspect
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster
from optsched.core.job import Job
from optsched.core.seeds import SeedLike
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.sim.actions import EngineActions
from optsched.sim.compiled.driver import compiled_run
from optsched.sim.limits import MAX_BATCHES_AT_ONE_TIME as _MAX_BATCHES_AT_ONE_TIME
from optsched.sim.limits import already_ran_error, limit_error, livelock_error, run_limits, unfinished_error
from optsched.sim.metrics import RunRecord, SimResult
from optsched.sim.model.inputs import make_jobs
from optsched.sim.model.resources import FreeGPUs, FreeResources
from optsched.sim.model.state import DONE, FAILED, LOADING, SAVING, TRAINING, WAITING, SimJob, Timer
from optsched.sim.options import Overhead, SimOptions
from optsched.sim.policy import Policy
from optsched.sim.rates import RateModel, check_rate
from optsched.sim.registry import get_policy
from optsched.sim.rules import P_ARRIVAL, P_TIMER

__all__ = ["Simulator", "simulate"]

_INF = float("inf")
_STALE = object()  # what an event handler returns for a stale heap entry


class Simulator(EngineActions):
    """Replay jobs on a cluster under an online policy.

    Parameters
    ----------
    cluster : Cluster
    jobs : sequence of Job, or pandas.DataFrame
        Core :class:`~optsched.core.Job` objects, or a job table with columns ``arrival``,
        ``gpus`` and ``work`` (or ``duration``), optionally ``job_id``/``id``, ``weight``,
        ``single_server`` (as returned by the loaders of :mod:`optsched.traces`).
    policy : Policy
    rate_model : RateModel, optional
        Default: the policy's ``rate_model`` attribute if it has one (a policy that brings its own
        model of training speed), else :class:`~optsched.sim.rates.ConstantRate` (rate 1: work is in
        seconds).
    load_time, save_time : float or callable (job, placement) -> float
        Seconds of loading before each (re)start and of pause-and-save after each preemption of
        a job that had started training (default 0).
    stages : mapping job id -> sequence of float, optional
        Work of each stage (checkpoints between stages); must add up to the job's work.
        Default: ``job.attrs["stages"]`` if present, else one stage.
    terminate_after : mapping job id -> int, optional
        Outcome known only to the engine: the job ends (phase ``failed``) when it completes that
        many stages. Policies cannot see it.
    seed : int, Generator or None
        For the ``random`` placement rule (``sim.rng``); policies may use ``sim.rng`` too.
    record_log : bool
        Keep the event log (``result.log``), needed for :func:`~optsched.sim.metrics.replay_log`.
    progress : bool
        Show a tqdm progress bar (jobs finished).
    allow_unfinished : bool
        If false (default), ending with arrived but unfinished jobs and no pending event (the
        policy starved them) raises :class:`SimulationError`.
    preempt_loading : {"abort", "finish"}
        What preempting a loading job does: ``"abort"`` (default) stops the load at once (the
        time loaded so far is futile); ``"finish"`` lets the load run to its end, then frees the
        GPUs (the whole load is futile). Either way nothing is saved.
    time_decisions : bool
        Record the wall-clock time of each event batch (its events, hooks and ``schedule`` call;
        ``result.decision_seconds``, mean and P95 in the summary).
    attrs_columns : sequence of str
        Job-table columns to copy into ``job.attrs`` besides ``user``, ``group``, ``vc``,
        ``status`` and ``model`` (e.g. a predicted duration a policy reads).
    slot : float, optional
        Slotted mode (papers that decide at slot boundaries): the policy's ``schedule`` runs only
        at multiples of ``slot`` seconds (and in a batch where one of its timers fired); a job
        whose work is done inside a slot keeps its GPUs to the slot's end, which is its
        completion time; the exact time its work was done is the ``finish`` column. Hooks
        (``on_arrival``, ...) still come at the events' own times. Default ``None``: continuous.
    engine : {"auto", "python", "compiled"}
        Which engine runs, chosen when the Simulator is built (``result.engine`` says which ran).
        ``"python"``: this engine, which runs every policy, rate model and option.
        ``"compiled"``: the compiled kernel (numba, :mod:`optsched.sim.compiled.driver`), which covers
        FIFO, SJF, SRTF, periodic SRTF and LAS (exactly those classes; placement consolidate,
        first_fit, least_loaded or whole_node) on GPU-only jobs at a
        :class:`~optsched.sim.rates.ConstantRate`, with load and save times given as numbers (the
        options or the jobs' own), the event log and the segments
        (:func:`optsched.sim.compiled.coverage.unsupported` lists what it does not cover: load/save
        functions, stages, early termination, slots, decision timings, ...), with the same results
        as this engine (tested job by job); anything else is an ``InvalidOptionError`` naming what
        it lacks. ``"auto"`` (default): the kernel where it covers the simulation and the workload
        is large enough to repay loading it (:data:`~optsched.sim.compiled.coverage.AUTO_MIN_JOBS`
        jobs), else this engine; why not the kernel is said once per process and reason, as an
        :class:`~optsched.exceptions.EngineFallbackWarning` from that many jobs on, else in the
        log (logger ``optsched.sim``, level INFO). A compiled run keeps no SimJob: ``sim.jobs``
        lists the input jobs, the result has the rest, and the engine's views and actions
        (``sim.job()``, ``sim.start()``, ...) raise an ``AttributeError`` saying so.
    record_segments : bool
        Whether the compiled kernel keeps the GPU-holding segments (``res.schedule()``,
        ``res.segments()``; default true); false keeps memory flat on big runs. This engine always
        keeps them.

    Notes
    -----
    ``Simulator(...)`` checks the options (:class:`~optsched.sim.options.SimOptions`), asks which
    engine covers the run, and returns the Python engine (this class) or, for a compiled run, a
    Simulator whose ``run`` is the kernel's. The Python engine's parts: the per-run state, views
    and actions (:class:`~optsched.sim.actions.EngineActions`), the event loop and one handler
    per event kind (here), the rules R1-R12 and where each is carried
    (:mod:`optsched.sim.rules`), the run limits (:mod:`optsched.sim.limits`).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Simulator, FIFO
    >>> jobs = [Job(0, work=4, gpus=2), Job(1, work=2, gpus=2, arrival=1)]
    >>> res = Simulator(Cluster.homogeneous(1, 2), jobs, FIFO()).run()
    >>> res.jobs_frame()["completion"].tolist()
    [4.0, 6.0]
    >>> res.engine
    'python'
    """

    #: the kernel's run when the compiled kernel runs this simulation (a :class:`_CompiledSimulator`)
    _compiled = None

    def __new__(cls, cluster: Cluster, jobs: Sequence[Job] | Any, policy: Policy, **options: Any) -> Simulator:
        opts = SimOptions(cluster, policy, **options)  # every option checked, before any engine is built
        front = object.__new__(_CompiledSimulator)
        front._adopt(opts)
        run = compiled_run(
            front,
            jobs,
            engine=opts.engine,
            record_segments=opts.record_segments,
            load_time=opts.load_time,
            save_time=opts.save_time,
            stages=opts.stages,
            terminate_after=opts.terminate_after,
            attrs_columns=opts.attrs_columns,
        )
        if run is not None:  # the compiled kernel runs it (optsched.sim.compiled.driver): no SimJobs
            front._compiled = run
            front.jobs = run.jobs
            return front
        sim = object.__new__(cls)
        sim._adopt(opts)
        sim._build(jobs)
        return sim

    def __init__(
        self,
        cluster: Cluster,
        jobs: Sequence[Job] | Any,
        policy: Policy,
        *,
        rate_model: RateModel | None = None,
        load_time: Overhead = 0.0,
        save_time: Overhead = 0.0,
        stages: Mapping[Any, Sequence[float]] | None = None,
        terminate_after: Mapping[Any, int] | None = None,
        seed: SeedLike = 0,
        record_log: bool = True,
        progress: bool = False,
        allow_unfinished: bool = False,
        slot: float | None = None,
        preempt_loading: str = "abort",
        time_decisions: bool = False,
        attrs_columns: Sequence[str] = (),
        engine: str = "auto",
        record_segments: bool = True,
    ) -> None:
        """Nothing left to do: :meth:`__new__` checked these options (:class:`SimOptions`, whose
        fields and defaults these are; a test keeps them equal) and built the engine that runs."""

    def _adopt(self, opts: SimOptions) -> None:
        """The options both engines read (the compiled driver reads ``policy``, ``cluster``,
        ``rate_model``, ``progress``, ``allow_unfinished``, ``capacity``, and sets ``now`` and
        ``n_events``)."""
        self.options = opts
        self.cluster = opts.cluster
        self.policy = opts.policy
        self.rate_model = opts.rate_model
        self.slot = opts.slot
        self.preempt_loading = opts.preempt_loading
        self.time_decisions = opts.time_decisions
        self.rng = opts.rng
        self.record_log = opts.record_log
        self.progress = opts.progress
        self.allow_unfinished = opts.allow_unfinished
        self.capacity = opts.cluster.total_gpus
        self.now = 0.0
        self.n_events = 0  # events processed (set by run)

    def _build(self, jobs: Any) -> None:
        """This engine's jobs and state (the input checked; R1: every job starts pending)."""
        opts = self.options
        cluster = self.cluster
        self._load = opts.load
        self._save = opts.save
        self.jobs: list[SimJob] = make_jobs(jobs, cluster, opts.stages, attrs_columns=opts.attrs_columns)
        for j in self.jobs:
            j._sim = self
        self._by_id: dict[Any, SimJob] = {j.id: j for j in self.jobs}
        if len(self._by_id) != len(self.jobs):
            raise InvalidInstanceError("Job ids must be unique; found a repeated 'id'. Renumber the jobs.")
        self._terminate: dict[int, int] = {}
        for jid, k in (opts.terminate_after or {}).items():
            if jid not in self._by_id:
                raise InvalidInstanceError(f"terminate_after names job {jid!r}, which is not in the jobs.")
            j = self._by_id[jid]
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= len(j.stages):
                raise InvalidInstanceError(
                    f"The terminate_after value of {j.label} must be an integer in [1, {len(j.stages)}] "
                    f"(its number of stages); got {k!r}."
                )
            if k < len(j.stages):
                self._terminate[j.index] = int(k)
        self.free = FreeGPUs(list(cluster.gpus), whole_node=getattr(self.policy, "placement", None) == "whole_node")
        self.res = self._resources(cluster)
        self._ran = False
        self._new_run_state()

    def _resources(self, cluster: Cluster) -> FreeResources | None:
        """Free amounts of the servers' other resources, or None when no server declares any."""
        names = sorted({r for srv in cluster.servers for r in srv.resources})
        for j in self.jobs:
            unknown = sorted(set(j.resources) - set(names))
            if unknown:
                raise InvalidInstanceError(
                    f"The 'resources' of {j.label} name {unknown}, which no server declares (servers declare "
                    f"{names or 'none'}). Declare them in the servers' 'resources' or drop them from the job."
                )
        if not names:
            return None
        if any(j.resources for j in self.jobs) and getattr(self.policy, "placement", None) == "random":
            raise InvalidOptionError(
                "The 'random' placement rule does not take jobs with resource demands into "
                "account; use consolidate, first_fit, least_loaded or whole_node."
            )
        return FreeResources(names, [[srv.resources.get(r, 0.0) for r in names] for srv in cluster.servers])

    # -- the run ----------------------------------------------------------------------------
    def run(self, until: float | None = None, *, max_time: Any = "auto", max_events: Any = "auto"):
        """Run to the end (or to time ``until``) and return a :class:`~optsched.sim.metrics.SimResult`.

        The loop takes the next time, handles every event at that time (one method per kind:
        :meth:`_stage_end`, :meth:`_save_end`, :meth:`_load_end`, :meth:`_arrive`,
        :meth:`_timer_fires`; each returns the hook's decisions, or ``_STALE`` for an entry made
        stale by a preemption, a rate change or a cancelled timer), then calls the policy's
        ``schedule`` once (only if at least one event of the batch was real, rule R3 of
        ``formulations/lazer.md``) and updates co-runner-dependent rates.

        Parameters
        ----------
        until : float, optional
            Stop (without error) before the first event after this time.
        max_time, max_events : float / int, "auto" or None
            Limits that turn a livelock into an error instead of a hang:
            :class:`~optsched.exceptions.SimulationLimitError` names the policy, the simulated
            time, the events processed and the jobs still running. ``"auto"`` (default):
            ``max_events`` = 1,000,000 + 1,000 per job; ``max_time`` = the last arrival +
            1,000 x (the total work at the constant rate) + 10^6 s with a
            :class:`~optsched.sim.rates.ConstantRate` model (no time limit with other rate
            models, whose work is not in seconds). ``None``: no limit.

        Raises
        ------
        SimulationLimitError
            The run passed ``max_time`` or ``max_events``.
        """
        if self._ran:
            raise already_ran_error()
        self._max_time, self._max_events = self._limits(max_time, max_events)
        self._ran = True
        # The cyclic garbage collector is paused while the loop runs: the engine keeps what it
        # allocates (segments, heap entries), so collections find nothing and cost about 20% of a
        # long replay. It is restored when the run ends, however it ends.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run(until)
        finally:
            if was_enabled:
                gc.enable()

    def _limits(self, max_time: Any, max_events: Any) -> tuple[float, float]:
        """The run's limits from the options (:func:`optsched.sim.limits.run_limits`)."""
        return run_limits(max_time, max_events, n_jobs=len(self.jobs), workload=self._workload, rate=self._const_rate)

    def _workload(self) -> tuple[float, float]:
        """(The last arrival, the total work), for the automatic time limit."""
        return max((j.arrival for j in self.jobs), default=0.0), sum(j.work for j in self.jobs)

    def _over_limit(self, t: float, n_events: int) -> Exception:
        """The error for a run past its limits (:func:`optsched.sim.limits.limit_error`)."""
        unfinished = [j for j in self.jobs if j._phase not in (DONE, FAILED)]
        running = [(j.label, j._phase, j.n_preemptions) for j in unfinished if j.placement is not None]
        return limit_error(
            self.policy.name,
            t,
            n_events,
            self._max_time,
            self._max_events,
            n_jobs=len(self.jobs),
            n_unfinished=len(unfinished),
            running=running,
        )

    def _run(self, until: float | None):
        clock = time.perf_counter if self.time_decisions else None
        policy = self.policy
        heap = self._heap
        pop = heapq.heappop
        arrivals = sorted(self.jobs, key=lambda j: (j.arrival, j.index))
        n = len(arrivals)
        ai = 0
        if self.progress:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=n, desc=f"simulate {policy.name}", unit="job", mininterval=0.5)
        self.apply(policy.on_start(self))
        handlers = (self._stage_end, self._save_end, self._load_end, None, self._timer_fires)
        arrive = self._arrive
        schedule = policy.schedule
        apply = self.apply
        stop = _INF if until is None else float(until)
        next_arr = arrivals[0].arrival if n else _INF
        n_events = 0
        same_t = 0
        n_stale = 0  # heap entries made stale by a preemption, rate change or cancelled timer
        slot = self.slot
        tick = _INF  # slotted mode: the next boundary at which the policy must decide
        max_time, max_events = self._max_time, self._max_events
        while True:
            t = heap[0][0] if heap else _INF
            if next_arr < t:
                t = next_arr
            if tick < t:
                t = tick
            if t == _INF or t > stop:
                break
            if t > max_time or n_events > max_events:
                raise self._over_limit(t, n_events)
            if t == self.now and n_events:
                same_t += 1
                if same_t > _MAX_BATCHES_AT_ONE_TIME:
                    raise livelock_error(policy.name, same_t, t)
            else:
                same_t = 0
            self.now = t
            self._timer_fired = False
            if clock is not None:
                t_batch = clock()
            # one batch: every event at time t, in priority order (arrivals after the engine's own
            # events, before timers)
            real = False  # whether an event happened (not only stale entries): R3, no round otherwise
            while True:
                if heap and heap[0][0] == t and (heap[0][1] < P_ARRIVAL or next_arr != t):
                    _, prio, _, obj, ver = pop(heap)
                    n_events += 1
                    r = handlers[prio](obj, ver, t)
                    if r is _STALE:
                        n_stale += 1
                        continue
                    real = True
                elif next_arr == t:
                    real = True
                    j = arrivals[ai]
                    ai += 1
                    next_arr = arrivals[ai].arrival if ai < n else _INF
                    n_events += 1
                    r = arrive(j, t)
                else:
                    break
                if r is not None:
                    apply(r)
            if not real and t != tick:  # only stale entries at this time: nothing happened, no round
                pass
            elif slot is None:
                r = schedule(self)
                if r is not None:
                    apply(r)
            elif t == tick or abs(t / slot - round(t / slot)) < 1e-9:
                tick = _INF
                r = schedule(self)
                if r is not None:
                    apply(r)
            else:  # inside a slot: the policy decides at its end (or now if it asked, by a timer)
                tick = min(tick, self._slot_ceil(t))
                if self._timer_fired:
                    r = schedule(self)
                    if r is not None:
                        apply(r)
            if clock is not None:
                self._decision_s.append(clock() - t_batch)
            if self._changed:
                self._update_rates()
            if self._n_finished == n:  # every job is done: pending timers are moot
                break
        self.n_events = n_events - n_stale  # events processed (stale heap entries not counted)
        bar = self._bar
        if bar is not None:
            bar.update(self._n_finished - bar.n)
            bar.close()
        policy.on_end(self)
        if until is None and not self.allow_unfinished:
            stuck = [j for j in self.jobs if j._phase not in (DONE, FAILED)]
            if stuck:
                j = stuck[0]
                raise unfinished_error(policy.name, len(stuck), j.label, j._phase, j.gpus)
        return SimResult(self.record())

    def record(self):
        """The run's records as a :class:`~optsched.sim.metrics.RunRecord` (what
        :class:`~optsched.sim.metrics.SimResult` is built from)."""
        holding = self._holding.values()
        return RunRecord(
            policy=self.policy.name,
            cluster=self.cluster,
            capacity=self.capacity,
            end_time=self.now,
            n_events=self.n_events,
            slot=self.slot,
            jobs=self.jobs,
            segments=self._seg,
            holds=self._holds,
            open_holds={
                j.index: [j.placement] + ([j._next_placement[0]] if j._next_placement else []) for j in holding
            },
            held_at_end=[(j._hold_start, j.gpus) for j in holding],
            reserved=self._reserved,
            log=self._log,
            decision_seconds=self._decision_s,
            engine="python",
        )

    # -- one method per event kind (each returns the hook's decisions, or _STALE) -------------------
    def _stage_end(self, j: SimJob, ver: int, t: float) -> Any:
        """A stage of ``j`` ends: a checkpoint, its completion, or its early termination."""
        if ver != j._version:
            return _STALE
        j._done = j.stages[j.stage]
        j._t = t
        j.stage += 1
        if j.stage == len(j.stages) or self._terminate.get(j.index) == j.stage:
            j.finish = t if self.slot is None else min(j._exact_end, t)
            j.training_time += j.finish - j._phase_start
            j._phase = DONE if j.stage == len(j.stages) else FAILED
            j.completion = t
            del self._training[j.index]
            if self._corunner:
                self._changed.append(j)
            self._release(j, t)
            j._version += 1
            self._n_finished += 1
            if self._log is not None:
                self._log.append((t, "complete" if j._phase == DONE else "fail", j.id, j.stage))
            if self._bar is not None and self._n_finished % self._bar_step == 0:
                self._bar.update(self._bar_step)
            return self.policy.on_completion(self, j)
        if self._log is not None:
            self._log.append((t, "checkpoint", j.id, j.stage))
        self._push_stage_end(j)
        return self.policy.on_checkpoint(self, j)

    def _save_end(self, j: SimJob, ver: int, t: float) -> Any:
        """The pause-and-save of a preempted ``j`` ends (R2; ``ver == -1``: a zero-time save whose
        GPUs were freed at once; only the hook is due)."""
        if ver != -1:
            if ver != j._version or j._phase != SAVING:
                return _STALE
            self._release_after_save(j)
        return self.policy.on_preempted(self, j)

    def _load_end(self, j: SimJob, ver: int, t: float) -> Any:
        """``j`` has loaded: it starts training (R1)."""
        if ver != j._version or j._phase != LOADING:
            return _STALE
        j._last_load = t - j._phase_start
        j.loading_time += j._last_load
        self._begin_training(j)
        return self.policy.on_loaded(self, j)

    def _arrive(self, j: SimJob, t: float) -> Any:
        j._phase = WAITING
        if self._log is not None:
            self._log.append((t, "arrival", j.id, None))
        return self.policy.on_arrival(self, j)

    def _timer_fires(self, tm: Timer, ver: int, t: float) -> Any:
        if not tm.active:
            return _STALE
        if tm.period is not None:
            tm.time = t + tm.period
            self._seq += 1
            heapq.heappush(self._heap, (tm.time, P_TIMER, self._seq, tm, 0))
        else:
            tm.active = False
        if self._log is not None:
            self._log.append((t, "timer", None, tm.id))
        self._timer_fired = True
        return self.policy.on_timer(self, tm)

    def _update_rates(self) -> None:
        changed, self._changed = self._changed, []
        now = self.now
        for j in list(self.rate_model.affected(self, changed)):
            if j._phase != TRAINING:
                continue
            r = check_rate(self.rate_model.rate(j, j.placement, self), j.label)
            if r != j.rate:
                j._done += j.rate * (now - j._t)
                j._t = now
                j.rate = r
                if self._log is not None:
                    self._log.append((now, "rate", j.id, r))
                self._push_stage_end(j)


class _CompiledSimulator(Simulator):
    """A :class:`Simulator` whose run is the compiled kernel's (``engine="compiled"``, or ``"auto"``
    where it covers the simulation): it keeps no per-job engine state, so the engine's views and
    actions raise a clear error. A class of its own because a ``__getattr__`` on
    :class:`Simulator` itself would slow every attribute access of the Python engine (CPython 3.11
    does not specialise attribute loads on classes that define it: 14 % on 100k jobs)."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"{name!r}: this Simulator runs on the compiled kernel, which keeps no per-job engine state "
            f"(sim.job(), the views, the actions); read the result, or build it with engine='python'."
        )

    def run(self, until: float | None = None, *, max_time: Any = "auto", max_events: Any = "auto") -> SimResult:
        """Run on the compiled kernel (the same arguments and result as :meth:`Simulator.run`)."""
        return self._compiled.run(until, max_time, max_events)


def _signature() -> inspect.Signature:
    """``Simulator(cluster, jobs, policy, *, ...)`` as ``__init__`` declares it, for ``help()`` and
    ``inspect.signature`` (which would otherwise show ``__new__``'s ``**options``)."""
    sig = inspect.signature(Simulator.__init__)
    return sig.replace(parameters=list(sig.parameters.values())[1:], return_annotation=inspect.Signature.empty)


Simulator.__signature__ = _signature()  # type: ignore[attr-defined]


def simulate(cluster: Cluster, jobs: Sequence[Job] | Any, policy: Policy | str, **options: Any):
    """Build a :class:`Simulator` and run it (``policy`` may be a registered name).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> res = simulate(Cluster.homogeneous(1, 1), [Job(0, work=3), Job(1, work=1)], "sjf")
    >>> res.summary()["mean_jct"]   # job 1 first (JCT 1), then job 0 (JCT 4)
    2.5
    """
    if isinstance(policy, str):
        policy = get_policy(policy)
    return Simulator(cluster, jobs, policy, **options).run()
