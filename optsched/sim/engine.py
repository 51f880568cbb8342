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

:class:`Simulator` is the face: it checks the options once (:class:`~optsched.sim.options.SimOptions`)
and picks the engine by its name (``engine=``): :class:`PythonEngine` here, or the compiled
kernel's run (:class:`~optsched.sim.compiled.driver.CompiledRun`, where
:func:`~optsched.sim.compiled.driver.compiled_run` says it covers the simulation). The Python
engine holds its per-run state, views and actions as a member (``self.sim``, an
:class:`~optsched.sim.actions.EngineActions`, which the policy's hooks receive) and drives it.
"""

from __future__ import annotations

import gc
import heapq
import time
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster
from optsched.core.job import Job
from optsched.sim.actions import EngineActions
from optsched.sim.compiled.driver import CompiledRun, compiled_run
from optsched.sim.limits import MAX_BATCHES_AT_ONE_TIME as _MAX_BATCHES_AT_ONE_TIME
from optsched.sim.limits import already_ran_error, limit_error, livelock_error, run_limits, unfinished_error
from optsched.sim.metrics import RunRecord, SimResult
from optsched.sim.model.state import DONE, FAILED, LOADING, SAVING, TRAINING, WAITING, SimJob, Timer
from optsched.sim.options import SimOptions
from optsched.sim.policy import Policy
from optsched.sim.rates import RateModel, check_rate
from optsched.sim.registry import get_policy
from optsched.sim.rules import P_ARRIVAL, P_TIMER
from optsched.sim.view import SimView

_INF = float("inf")
_STALE = object()  # what an event handler returns for a stale heap entry


class Simulator:
    """Replay jobs on a cluster under an online policy.

    Parameters
    ----------
    cluster : Cluster
    jobs : sequence of Job, or pandas.DataFrame
        Core :class:`~optsched.core.Job` objects, or a job table with columns ``arrival``,
        ``gpus`` and ``work`` (or ``duration``), optionally ``job_id``/``id``, ``weight``,
        ``single_server`` (as returned by the loaders of :mod:`optsched.traces`).
    policy : Policy
    options : SimOptions, optional
        The options below checked already (:class:`~optsched.sim.options.SimOptions`, built for
        this cluster and policy); keywords given as well replace its fields. Default: the
        keywords below.
    **option_keywords
        Any field of :class:`~optsched.sim.options.SimOptions`, by name (below).

    Other Parameters
    ----------------
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
        ``"python"``: :class:`PythonEngine`, which runs every policy, rate model and option.
        ``"compiled"``: the compiled kernel (numba, :mod:`optsched.sim.compiled.driver`), which covers
        FIFO, SJF, SRTF, periodic SRTF, LAS (exactly those classes; placement consolidate,
        first_fit, least_loaded or whole_node) and Lazer with a fixed deferral X on GPU-only jobs at a
        :class:`~optsched.sim.rates.ConstantRate`, with load and save times given as numbers (the
        options or the jobs' own), the event log and the segments
        (:func:`optsched.sim.compiled.coverage.unsupported` lists what it does not cover: load/save
        functions, stages, early termination, slots, decision timings, ...), with the same results
        as the Python engine (tested job by job); anything else is an ``InvalidOptionError`` naming what
        it lacks. ``"auto"`` (default): the kernel where it covers the simulation and the workload
        is large enough to repay loading it (:data:`~optsched.sim.compiled.coverage.AUTO_MIN_JOBS`
        jobs), else the Python engine; why not the kernel is said once per process and reason, as an
        :class:`~optsched.exceptions.EngineFallbackWarning` from that many jobs on, else in the
        log (logger ``optsched.sim``, level INFO). A compiled run keeps no SimJob: ``sim.jobs``
        lists the input jobs, the result has the rest, and the engine's views and actions
        (``sim.job()``, ``sim.start()``, ...) raise an ``AttributeError`` saying so.
    record_segments : bool
        Whether the compiled kernel keeps the GPU-holding segments (``res.schedule()``,
        ``res.segments()``; default true); false keeps memory flat on big runs. This engine always
        keeps them.

    Raises
    ------
    InvalidOptionError, InvalidInstanceError
        An option out of its domain (:class:`~optsched.sim.options.SimOptions`), or jobs the
        engine refuses; checked here, before the run.
    TypeError
        A keyword that is not an option.

    Notes
    -----
    The Simulator checks the options once and builds the engine ``engine=`` names:
    :class:`PythonEngine` (its state, views and actions: an
    :class:`~optsched.sim.actions.EngineActions` member) or the kernel's
    :class:`~optsched.sim.compiled.driver.CompiledRun`. Either way it answers ``options``,
    ``cluster``, ``policy``, ``capacity``, ``rate_model``, ``rng``, ``slot``, ``jobs``, ``now`` and
    ``n_events``; on the Python engine also the views and actions a policy's hooks see
    (:class:`~optsched.sim.view.SimView`: ``sim.job()``, ...) and ``sim.record()``. The rules
    R1-R12 and their carriers: :mod:`optsched.sim.rules`; the run limits: :mod:`optsched.sim.limits`.

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

    def __init__(
        self,
        cluster: Cluster,
        jobs: Sequence[Job] | Any,
        policy: Policy,
        options: SimOptions | None = None,
        **option_keywords: Any,
    ) -> None:
        self.options = SimOptions.of(cluster, policy, options, option_keywords)
        self._engine: PythonEngine | CompiledRun = _engine(jobs, self.options)

    def run(self, until: float | None = None, *, max_time: Any = "auto", max_events: Any = "auto") -> SimResult:
        """Run to the end (or to time ``until``) on the chosen engine and return a
        :class:`~optsched.sim.metrics.SimResult` (the arguments: :meth:`PythonEngine.run`)."""
        return self._engine.run(until, max_time=max_time, max_events=max_events)

    # -- what either engine answers ------------------------------------------------------------
    @property
    def cluster(self) -> Cluster:
        return self.options.cluster

    @property
    def policy(self) -> Policy:
        return self.options.policy

    @property
    def capacity(self) -> int:
        """GPUs in all."""
        return self.options.cluster.total_gpus

    @property
    def rate_model(self) -> RateModel:
        """The rate model that runs (the option, else the policy's own, else ``ConstantRate()``)."""
        return self.options.rate_model

    @property
    def rng(self) -> np.random.Generator:
        return self.options.rng

    @property
    def slot(self) -> float | None:
        return self.options.slot

    @property
    def jobs(self) -> Sequence[Any]:
        """The simulated jobs: SimJobs on the Python engine, the input jobs' rows on the kernel."""
        return self._engine.jobs

    @property
    def now(self) -> float:
        """The simulated time (the end time after the run)."""
        return self._engine.now

    @property
    def n_events(self) -> int:
        """Events processed (set by the run)."""
        return self._engine.n_events

    @property
    def _compiled(self) -> CompiledRun | None:
        """The kernel's run when the compiled kernel runs this simulation, else None."""
        return self._engine if isinstance(self._engine, CompiledRun) else None

    def __getattr__(self, name: str) -> Any:
        """The Python engine's views, actions and record (what is not found above)."""
        engine = self.__dict__.get("_engine")
        if isinstance(engine, PythonEngine):
            for owner in (engine, engine.sim):
                try:
                    return getattr(owner, name)
                except AttributeError:
                    pass
        elif engine is not None:
            missing = AttributeError(
                f"{name!r}: this Simulator runs on the compiled kernel, which keeps no per-job engine state "
                f"(sim.job(), the views, the actions); read the result, or build it with engine='python'."
            )
            if callable(getattr(SimView, name, None)):  # a view or an action: the call says why
                return _raiser(missing)
            raise missing
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _raiser(error: Exception) -> Any:
    """A function that raises ``error`` whatever it is called with."""

    def raise_(*args: Any, **kwargs: Any) -> Any:
        raise error

    return raise_


def _engine(jobs: Any, options: SimOptions) -> PythonEngine | CompiledRun:
    """The engine ``options.engine`` names: ``"python"``, ``"compiled"`` (the kernel, or an
    :class:`InvalidOptionError` naming what it lacks), or ``"auto"`` (the kernel where it covers
    the run and the workload repays loading it, else Python; why not is said once,
    :func:`~optsched.sim.compiled.driver.compiled_run`)."""
    if options.engine != "python":
        run = compiled_run(jobs, options)
        if run is not None:
            return run
    return PythonEngine(jobs, options)


class PythonEngine:
    """The Python engine: the event loop and one handler per event kind.

    It holds the run's state, views and actions as a member, ``sim``
    (:class:`~optsched.sim.actions.EngineActions`, built from the jobs and the checked
    options): the policy's hooks and the rate model receive that member, and the handlers here
    move its jobs from phase to phase (R1-R3 of :mod:`optsched.sim.rules`). Built by
    :class:`Simulator` (``engine="python"``, or ``"auto"`` where the kernel does not run).
    """

    def __init__(self, jobs: Any, options: SimOptions) -> None:
        self.options = options
        self.sim = EngineActions(jobs, options)
        self.jobs = self.sim.jobs
        self.n_events = 0  # events processed (set by run)
        self._ran = False
        self._timer_fired = False  # whether a timer fired in the current batch (slotted mode)
        self._n_finished = 0
        self._decision_s = array("d") if options.time_decisions else None
        self._bar: Any = None
        self._bar_step = max(1, len(self.jobs) // 200)

    @property
    def now(self) -> float:
        """The simulated time (the state's clock)."""
        return self.sim.now

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
        rate = self.sim._const_rate
        return run_limits(max_time, max_events, n_jobs=len(self.jobs), workload=self._workload, rate=rate)

    def _workload(self) -> tuple[float, float]:
        """(The last arrival, the total work), for the automatic time limit."""
        return max((j.arrival for j in self.jobs), default=0.0), sum(j.work for j in self.jobs)

    def _over_limit(self, t: float, n_events: int) -> Exception:
        """The error for a run past its limits (:func:`optsched.sim.limits.limit_error`)."""
        unfinished = [j for j in self.jobs if j._phase not in (DONE, FAILED)]
        running = [(j.label, j._phase, j.n_preemptions) for j in unfinished if j.placement is not None]
        return limit_error(
            self.sim.policy.name,
            t,
            n_events,
            self._max_time,
            self._max_events,
            n_jobs=len(self.jobs),
            n_unfinished=len(unfinished),
            running=running,
        )

    def _run(self, until: float | None):
        sim = self.sim
        clock = time.perf_counter if self.options.time_decisions else None
        policy = sim.policy
        heap = sim._heap
        pop = heapq.heappop
        arrivals = sorted(self.jobs, key=lambda j: (j.arrival, j.index))
        n = len(arrivals)
        ai = 0
        if self.options.progress:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=n, desc=f"simulate {policy.name}", unit="job", mininterval=0.5)
        sim.apply(policy.on_start(sim))
        handlers = (self._stage_end, self._save_end, self._load_end, None, self._timer_fires)
        arrive = self._arrive
        schedule = policy.schedule
        apply = sim.apply
        stop = _INF if until is None else float(until)
        next_arr = arrivals[0].arrival if n else _INF
        n_events = 0
        same_t = 0
        n_stale = 0  # heap entries made stale by a preemption, rate change or cancelled timer
        slot = sim.slot
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
            if t == sim.now and n_events:
                same_t += 1
                if same_t > _MAX_BATCHES_AT_ONE_TIME:
                    raise livelock_error(policy.name, same_t, t)
            else:
                same_t = 0
            sim.now = t
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
                r = schedule(sim)
                if r is not None:
                    apply(r)
            elif t == tick or abs(t / slot - round(t / slot)) < 1e-9:
                tick = _INF
                r = schedule(sim)
                if r is not None:
                    apply(r)
            else:  # inside a slot: the policy decides at its end (or now if it asked, by a timer)
                tick = min(tick, sim._slot_ceil(t))
                if self._timer_fired:
                    r = schedule(sim)
                    if r is not None:
                        apply(r)
            if clock is not None:
                self._decision_s.append(clock() - t_batch)
            if sim._changed:
                self._update_rates()
            if self._n_finished == n:  # every job is done: pending timers are moot
                break
        self.n_events = n_events - n_stale  # events processed (stale heap entries not counted)
        bar = self._bar
        if bar is not None:
            bar.update(self._n_finished - bar.n)
            bar.close()
        policy.on_end(sim)
        if until is None and not self.options.allow_unfinished:
            stuck = [j for j in self.jobs if j._phase not in (DONE, FAILED)]
            if stuck:
                j = stuck[0]
                raise unfinished_error(policy.name, len(stuck), j.label, j._phase, j.gpus)
        return SimResult(self.record())

    def record(self):
        """The run's records as a :class:`~optsched.sim.metrics.RunRecord` (what
        :class:`~optsched.sim.metrics.SimResult` is built from)."""
        sim = self.sim
        holding = sim._holding.values()
        return RunRecord(
            policy=sim.policy.name,
            cluster=sim.cluster,
            capacity=sim.capacity,
            end_time=sim.now,
            n_events=self.n_events,
            slot=sim.slot,
            jobs=self.jobs,
            segments=sim._seg,
            holds=sim._holds,
            open_holds={
                j.index: [j.placement] + ([j._next_placement[0]] if j._next_placement else []) for j in holding
            },
            held_at_end=[(j._hold_start, j.gpus) for j in holding],
            reserved=sim._reserved,
            log=sim._log,
            decision_seconds=self._decision_s,
            engine="python",
        )

    # -- one method per event kind (each returns the hook's decisions, or _STALE) -------------------
    def _stage_end(self, j: SimJob, ver: int, t: float) -> Any:
        """A stage of ``j`` ends: a checkpoint, its completion, or its early termination."""
        if ver != j._version:
            return _STALE
        sim = self.sim
        j._done = j.stages[j.stage]
        j._t = t
        j.stage += 1
        if j.stage == len(j.stages) or sim._terminate.get(j.index) == j.stage:
            j.finish = t if sim.slot is None else min(j._exact_end, t)
            j.training_time += j.finish - j._phase_start
            j._phase = DONE if j.stage == len(j.stages) else FAILED
            j.completion = t
            del sim._training[j.index]
            if sim._corunner:
                sim._changed.append(j)
            sim._release(j, t)
            j._version += 1
            self._n_finished += 1
            if sim._log is not None:
                sim._log.append((t, "complete" if j._phase == DONE else "fail", j.id, j.stage))
            if self._bar is not None and self._n_finished % self._bar_step == 0:
                self._bar.update(self._bar_step)
            return sim.policy.on_completion(sim, j)
        if sim._log is not None:
            sim._log.append((t, "checkpoint", j.id, j.stage))
        sim._push_stage_end(j)
        return sim.policy.on_checkpoint(sim, j)

    def _save_end(self, j: SimJob, ver: int, t: float) -> Any:
        """The pause-and-save of a preempted ``j`` ends (R2; ``ver == -1``: a zero-time save whose
        GPUs were freed at once; only the hook is due)."""
        if ver != -1:
            if ver != j._version or j._phase != SAVING:
                return _STALE
            self.sim._release_after_save(j)
        return self.sim.policy.on_preempted(self.sim, j)

    def _load_end(self, j: SimJob, ver: int, t: float) -> Any:
        """``j`` has loaded: it starts training (R1)."""
        if ver != j._version or j._phase != LOADING:
            return _STALE
        j._last_load = t - j._phase_start
        j.loading_time += j._last_load
        self.sim._begin_training(j)
        return self.sim.policy.on_loaded(self.sim, j)

    def _arrive(self, j: SimJob, t: float) -> Any:
        sim = self.sim
        j._phase = WAITING
        if sim._log is not None:
            sim._log.append((t, "arrival", j.id, None))
        return sim.policy.on_arrival(sim, j)

    def _timer_fires(self, tm: Timer, ver: int, t: float) -> Any:
        if not tm.active:
            return _STALE
        sim = self.sim
        if tm.period is not None:
            tm.time = t + tm.period
            sim._seq += 1
            heapq.heappush(sim._heap, (tm.time, P_TIMER, sim._seq, tm, 0))
        else:
            tm.active = False
        if sim._log is not None:
            sim._log.append((t, "timer", None, tm.id))
        self._timer_fired = True
        return sim.policy.on_timer(sim, tm)

    def _update_rates(self) -> None:
        sim = self.sim
        changed, sim._changed = sim._changed, []
        now = sim.now
        rate_model = sim.rate_model
        for j in list(rate_model.affected(sim, changed)):
            if j._phase != TRAINING:
                continue
            r = check_rate(rate_model.rate(j, j.placement, sim), j.label)
            if r != j.rate:
                j._done += j.rate * (now - j._t)
                j._t = now
                j.rate = r
                if sim._log is not None:
                    sim._log.append((now, "rate", j.id, r))
                sim._push_stage_end(j)


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
