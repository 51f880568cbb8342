"""The discrete-event engine shared by every online policy.

Continuous time, one heap of events. A job's life: ``pending`` -> ``waiting`` (arrival) ->
``loading`` (holds GPUs, load time) -> ``training`` (progress at the rate model's rate, stage ends
= checkpoints) -> ``done`` | ``failed`` (early termination at a checkpoint), with preemption
(``training``/``loading`` -> ``saving`` (pause-and-save time, GPUs held) -> ``waiting``) and
migration (``saving`` on the old GPUs, then ``loading`` on the new ones).

Event order at equal times: stage ends (completions, checkpoints, early terminations), ends of
saves, ends of loads, arrivals (in input order), timers; ties within a kind by insertion order.
After all events of one time the policy's ``schedule`` hook runs once (see
:mod:`optsched.sim.policy`).
"""

from __future__ import annotations

import gc
import heapq
import math
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster
from optsched.core.job import Job
from optsched.core.seeds import SeedLike, as_generator
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, SimulationError, SimulationLimitError
from optsched.sim.inputs import make_jobs
from optsched.sim.policy import CancelTimer, Migrate, Policy, Preempt, SetTimer, Start
from optsched.sim.rates import ConstantRate, RateModel, check_rate
from optsched.sim.resources import FreeGPUs, FreeResources
from optsched.sim.state import (
    DONE,
    FAILED,
    LOADING,
    PENDING,
    SAVING,
    TRAINING,
    WAITING,
    SimJob,
    Timer,
)

__all__ = ["Simulator", "simulate", "P_STAGE", "P_SAVED", "P_LOADED", "P_ARRIVAL", "P_TIMER"]

# event priorities at equal times (lower first)
P_STAGE, P_SAVED, P_LOADED, P_ARRIVAL, P_TIMER = 0, 1, 2, 3, 4
_INF = math.inf
_MAX_BATCHES_AT_ONE_TIME = 100_000
_STALE = object()  # what an event handler returns for a stale heap entry

Overhead = float | Callable[[SimJob, Mapping[int, int]], float]


def _overhead(value: Overhead, name: str) -> Callable[[SimJob, Mapping[int, int]], float]:
    if callable(value):
        return value
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float("nan")
    if not (v >= 0 and math.isfinite(v)):
        raise InvalidOptionError(
            f"The '{name}' option must be a number of seconds >= 0 or a function (job, placement) -> seconds; "
            f"got {value!r}."
        )
    return (lambda job, pl: v) if v > 0 else None  # type: ignore[return-value]


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
        ``"compiled"``: the compiled kernel (numba, :mod:`optsched.sim.compiled.driver`), which covers
        FIFO, SJF, SRTF, periodic SRTF and LAS (exactly those classes; placement consolidate,
        first_fit, least_loaded or whole_node) on GPU-only jobs at a
        :class:`~optsched.sim.rates.ConstantRate`, with load and save times given as numbers (the
        options or the jobs' own), the event log and the segments, with the same results as this
        engine (tested job by job); anything else (load/save functions, stages, early termination,
        slots, decision timings, ...) is an ``InvalidOptionError`` naming what it lacks. ``"auto"``
        (default): the kernel where it covers the simulation and there are at least 5,000 jobs,
        else this engine (the reason is logged once, logger ``optsched.sim``). A compiled run keeps
        no SimJob: ``sim.jobs`` lists the input jobs, the result has the rest.
    record_segments : bool
        Whether the compiled kernel keeps the GPU-holding segments (``res.schedule()``,
        ``res.segments()``; default true); false keeps memory flat on big runs. This engine always
        keeps them.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Simulator, FIFO
    >>> jobs = [Job(0, work=4, gpus=2), Job(1, work=2, gpus=2, arrival=1)]
    >>> res = Simulator(Cluster.homogeneous(1, 2), jobs, FIFO()).run()
    >>> res.jobs_frame()["completion"].tolist()
    [4.0, 6.0]
    """

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
    ):
        if not isinstance(cluster, Cluster):
            raise InvalidInstanceError(f"The 'cluster' argument must be a Cluster; got {type(cluster).__name__}.")
        if not isinstance(policy, Policy):
            raise InvalidOptionError(
                f"The 'policy' argument must be an optsched.sim.Policy; got {type(policy).__name__}. "
                f"Subclass Policy, or use get_policy(name)."
            )
        self.cluster = cluster
        self.policy = policy
        if rate_model is None:  # a policy that comes with its rate model (e.g. A-SRPT's Heavy-Edge) brings it
            rate_model = getattr(policy, "rate_model", None)
        self.rate_model = rate_model if rate_model is not None else ConstantRate()
        if not isinstance(self.rate_model, RateModel):
            raise InvalidOptionError(f"The 'rate_model' must be an optsched.sim.RateModel; got {rate_model!r}.")
        self._load = _overhead(load_time, "load_time")
        self._save = _overhead(save_time, "save_time")
        if slot is not None and (
            isinstance(slot, bool)
            or not isinstance(slot, (int, float, np.number))
            or not (slot > 0 and math.isfinite(slot))
        ):
            raise InvalidOptionError(
                f"The 'slot' option must be a positive finite number of seconds (or None for "
                f"continuous time); got {slot!r}."
            )
        self.slot = None if slot is None else float(slot)
        if preempt_loading not in ("abort", "finish"):
            raise InvalidOptionError(
                f"The 'preempt_loading' option must be 'abort' or 'finish'; got {preempt_loading!r}."
            )
        self.preempt_loading = preempt_loading
        self.time_decisions = bool(time_decisions)
        self.rng = as_generator(seed)
        self.record_log = bool(record_log)
        self.progress = bool(progress)
        self.allow_unfinished = bool(allow_unfinished)
        from optsched.sim.compiled.driver import compiled_run

        self._compiled = compiled_run(
            self,
            jobs,
            engine=engine,
            record_segments=record_segments,
            load_time=load_time,
            save_time=save_time,
            stages=stages,
            terminate_after=terminate_after,
            attrs_columns=attrs_columns,
        )
        if self._compiled is not None:  # the compiled kernel runs it (optsched.sim.compiled.driver): no SimJobs
            self.jobs = self._compiled.jobs
            self.capacity = cluster.total_gpus
            self.now = 0.0
            self.__class__ = _CompiledSimulator  # clear errors for the engine's views (see there)
            return
        self.jobs: list[SimJob] = make_jobs(jobs, cluster, stages, attrs_columns=attrs_columns)
        for j in self.jobs:
            j._sim = self
        self._by_id: dict[Any, SimJob] = {j.id: j for j in self.jobs}
        if len(self._by_id) != len(self.jobs):
            raise InvalidInstanceError("Job ids must be unique; found a repeated 'id'. Renumber the jobs.")
        self._terminate: dict[int, int] = {}
        for jid, k in (terminate_after or {}).items():
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
        self.free = FreeGPUs(list(cluster.gpus), whole_node=getattr(policy, "placement", None) == "whole_node")
        self.res = self._resources(cluster)
        self.capacity = cluster.total_gpus
        self.now = 0.0
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

    # -- read-only views for policies -------------------------------------------------------
    def job(self, job_or_id: Any) -> SimJob:
        """The SimJob for a SimJob or a job id (raises SimulationError if unknown)."""
        if isinstance(job_or_id, SimJob):
            if job_or_id._sim is not self:
                raise SimulationError(f"{job_or_id.label} belongs to another simulation.")
            return job_or_id
        try:
            return self._by_id[job_or_id]
        except (KeyError, TypeError):
            raise SimulationError(f"Unknown job {job_or_id!r}: it is not among the simulated jobs.") from None

    def training_jobs(self) -> list[SimJob]:
        """Jobs currently training (in start order)."""
        return list(self._training.values())

    def running_jobs(self) -> list[SimJob]:
        """Jobs currently holding GPUs (loading, training or saving)."""
        return list(self._holding.values())

    @property
    def free_gpus(self) -> list[int]:
        """Free GPUs per server (a list; do not modify)."""
        return self.free.free_list

    @property
    def total_free(self) -> int:
        return self.free.total_free

    def load_time(self, job: Any, placement: Mapping[int, int] | None = None) -> float:
        """Seconds ``job`` would load before training on ``placement`` (default: its own)."""
        j = self.job(job)
        pl = placement if placement is not None else (j.placement or {})
        return self._overhead_of(j, pl, True)

    def save_time(self, job: Any) -> float:
        """Seconds ``job`` would pause and save if preempted now (0 if it has not trained since its
        last load: nothing to save)."""
        j = self.job(job)
        if j.phase != TRAINING or (self.now == j._phase_start and j._last_load > 0):
            return 0.0
        return self._overhead_of(j, j.placement, False)

    def _overhead_of(self, j: SimJob, pl: Mapping[int, int], load: bool) -> float:
        """The job's own load (save) seconds if it has them (``Job.load_time``), else the simulator's
        option; a function's value is checked (a number >= 0)."""
        own = j.load_s if load else j.save_s
        if own is not None:
            return own
        f = self._load if load else self._save
        if f is None:
            return 0.0
        r = f(j, pl)
        try:
            v = float(r)
        except (TypeError, ValueError):
            v = math.nan
        if not (v >= 0 and v < _INF):  # NaN fails too
            name = "load_time" if load else "save_time"
            raise SimulationError(
                f"The '{name}' function gave {r!r} seconds for {j.label}; it must return a finite number >= 0."
            )
        return float(v)

    def fits(self, job: SimJob) -> bool:
        """Whether ``job`` fits in the free GPUs now (one server if single-server), and its declared
        resources on the servers the policy's placement rule would give it."""
        if not self.free.fits(job.gpus, job.single_server):
            return False
        if self.res is None or not job.resources:
            return True
        pl = self.free.place(job.gpus, self.policy.placement, job.single_server, self.rng)
        return pl is not None and self.res.fits(self.res.share(job.resources, pl, job.gpus))

    def place(self, job: Any, rule: str | None = None) -> dict[int, int] | None:
        """A placement for ``job`` on the free GPUs by ``rule`` (default: the policy's), or ``None``."""
        j = self.job(job)
        return self.free.place(j.gpus, rule or self.policy.placement, j.single_server, self.rng)

    # -- actions ---------------------------------------------------------------------------
    def start(
        self,
        job: Any,
        placement: Mapping[int, Any] | None = None,
        *,
        gpu_ids: Mapping[int, Sequence[int]] | None = None,
        config: Any = None,
    ) -> dict[int, int]:
        """Start a waiting job on ``placement`` (default: the policy's placement rule).

        ``placement`` maps a server to a GPU count, or to a resource vector such as
        ``{"gpus": 0, "cpu": 4}`` (a server used without GPUs, e.g. a parameter server); a job's
        declared ``resources`` are otherwise shared over its servers in proportion to GPUs.
        ``gpu_ids`` ({server: ids}) names the GPUs (default: the lowest free ids); ``config`` is
        kept on the job (``job.config``) for the rate model and the result.

        Returns the placement used ({server: GPUs}).

        Raises
        ------
        SimulationError
            Unknown job, job not waiting (not arrived, already running, finished), placement over
            capacity / wrong size / spanning servers for a single-server job, no fit, GPU ids
            that are not free, or resources that are not free (naming server, resource, requested
            and free amounts).
        """
        j = job if type(job) is SimJob and job._sim is self else self.job(job)
        if j.phase != WAITING:
            raise SimulationError(self._why_not_waiting(j, "start"))
        usage = None
        if placement is None:
            pl = self.free.place(j.gpus, self._rule, j.single_server, self.rng)
            if pl is None:
                raise SimulationError(
                    f"Cannot start {j.label} at t={self.now:g}: it needs {j.gpus} GPUs"
                    f"{' on one server' if j.single_server else ''} and {self.free.total_free} are free "
                    f"(at most {self.free.max_free} on one server). Check sim.fits(job) first."
                )
        else:
            pl, usage = self._parse_placement(placement, j)
        if self._plain and not gpu_ids and not usage:  # GPUs only, ids given after the run
            self._holds.append(j.index)  # the order of starts and releases (GPU ids are given from it)
            self.free.allocate(pl)
        else:
            if self.res is not None or usage:
                usage = self._check_usage(j, pl, usage)
            if self._track_ids:
                j.gpu_masks = self.free.take_ids(pl, gpu_ids, j)  # the last check; then nothing can fail
            elif gpu_ids:
                raise SimulationError(
                    f"Policy {self.policy.name!r} names GPU ids for {j.label}; set gpu_ids = True "
                    f"on the policy class so that the engine tracks them during the run."
                )
            self._holds.append(j.index)
            self.free.allocate(pl)
            if usage:
                self.res.allocate(usage)  # type: ignore[union-attr]
            j.usage = usage
        if config is not None:
            j.config = config
        self._launch(j, pl)
        return pl

    def _parse_placement(self, placement: Any, j: SimJob) -> tuple[dict[int, int], dict | None]:
        """Split a placement into {server: GPUs} (checked) and explicit resource vectors (or None)."""
        if isinstance(placement, Mapping) and any(isinstance(v, Mapping) for v in placement.values()):
            gpus: dict[Any, Any] = {}
            usage: dict[int, dict[str, float]] = {}
            for m, v in placement.items():
                if isinstance(v, Mapping):
                    vec = dict(v)
                    g = vec.pop("gpus", 0)
                    if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 0:
                        raise SimulationError(
                            f"The placement of {j.label} gives server {m} {g!r} GPUs; give an integer >= 0."
                        )
                    if not g and not vec:
                        raise SimulationError(f"The placement of {j.label} uses nothing on server {m}; drop it.")
                    if g:
                        gpus[m] = int(g)
                    if vec:
                        if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
                            raise SimulationError(f"The placement of {j.label} names server {m!r}; use an index.")
                        usage[int(m)] = vec
                else:
                    gpus[m] = v
            return self.free.check(gpus, j.gpus, j.single_server, j.label), usage
        return self.free.check(placement, j.gpus, j.single_server, j.label), None

    def _check_usage(self, j: SimJob, pl: dict[int, int], usage: dict | None) -> dict | None:
        if self.res is None:
            if usage:
                raise SimulationError(
                    f"The placement of {j.label} gives resource vectors {usage}, but no server "
                    f"declares resources; declare them in the cluster's servers."
                )
            return None
        if usage is None:
            usage = self.res.share(j.resources, pl, j.gpus)
        return self.res.check(usage, j.label) or None

    def _launch(self, j: SimJob, pl: dict[int, int]) -> None:
        now = self.now
        j.placement = pl
        j.n_starts += 1
        if j.first_start is None:
            j.first_start = now
        j._hold_start = now
        self._holding[j.index] = j
        if self._log is not None:
            self._log.append((now, "start", j.id, pl))
        load = 0.0 if (j.load_s is None and self._load is None) else self._overhead_of(j, pl, True)
        j._last_load = 0.0
        if load > 0:
            j.phase = LOADING
            j._phase_start = now
            j._load_end = now + load
            j._version += 1
            self._seq += 1
            heapq.heappush(self._heap, (now + load, P_LOADED, self._seq, j, j._version))
        else:
            self._begin_training(j)

    def _begin_training(self, j: SimJob) -> None:
        now = self.now
        j.phase = TRAINING
        j._phase_start = now
        j._t = now
        self._training[j.index] = j  # the rate model sees the job among the training jobs
        j.rate = self._const_rate or check_rate(self.rate_model.rate(j, j.placement, self), j.label)
        if self._corunner:
            self._changed.append(j)
        if self._log is not None:
            self._log.append((now, "train", j.id, j.rate))
        self._push_stage_end(j)

    def _push_stage_end(self, j: SimJob) -> None:
        j._version += 1
        self._seq += 1
        t = j._t + (j.stages[j.stage] - j._done) / j.rate
        if self.slot is not None and (j.stage + 1 == len(j.stages) or self._terminate.get(j.index) == j.stage + 1):
            j._exact_end = t  # its last stage: it frees its GPUs at the end of the slot
            t = self._slot_ceil(t)
        heapq.heappush(self._heap, (t, P_STAGE, self._seq, j, j._version))

    def _slot_ceil(self, t: float) -> float:
        """The first slot boundary at or after ``t`` (a boundary within 1e-9 slot counts)."""
        k = math.ceil(t / self.slot - 1e-9)
        return k * self.slot

    def preempt(self, job: Any, *, rollback: bool = False) -> None:
        """Preempt a loading or training job.

        Its training progress is kept (``rollback=False``) or goes back to its last checkpoint
        (``rollback=True``; the lost work is reported as ``lost_work``). A job that had started
        training pauses and saves for ``save_time`` seconds on its GPUs; then its GPUs are free and
        ``on_preempted`` is called. With zero save time the GPUs are free at once (the hook still
        comes as an event at the same time).
        """
        j = job if type(job) is SimJob and job._sim is self else self.job(job)
        if j.phase not in (LOADING, TRAINING):
            raise SimulationError(
                f"Cannot preempt {j.label} at t={self.now:g}: it is {j.phase}; only loading or training "
                f"jobs can be preempted."
            )
        if j.phase == LOADING and self.preempt_loading == "finish":  # the load runs on, then is lost whole
            d = j._load_end - j._phase_start
            j.loading_time += d
            j.futile_time += d
            j.n_futile += 1
            j.n_preemptions += 1
            j._version += 1  # the pending load end is stale: the GPUs are freed then instead
            j.phase = SAVING
            j._phase_start = j._load_end  # nothing is saved: no saving time
            self._seq += 1
            heapq.heappush(self._heap, (j._load_end, P_SAVED, self._seq, j, j._version))
            if self._log is not None:
                self._log.append((self.now, "preempt", j.id, "finish-load"))
            return
        self._stop(j, rollback)
        j.n_preemptions += 1
        if self._log is not None:
            self._log.append((self.now, "preempt", j.id, rollback))
        self._after_stop(j)

    def migrate(
        self, job: Any, placement: Mapping[int, Any], *, gpu_ids: Mapping[int, Sequence[int]] | None = None
    ) -> dict[int, int]:
        """Move a loading/training job to ``placement`` (free GPUs now, reserved at once; GPU counts
        or resource vectors as in :meth:`start`).

        The job saves on its old GPUs (``save_time``), releases them, then loads on the new ones.
        Counts as one preemption.
        """
        j = job if type(job) is SimJob and job._sim is self else self.job(job)
        if j.phase not in (LOADING, TRAINING):
            raise SimulationError(
                f"Cannot migrate {j.label} at t={self.now:g}: it is {j.phase}; only loading or training "
                f"jobs can be migrated."
            )
        pl, usage = self._parse_placement(placement, j)
        usage = self._check_usage(j, pl, usage)
        if self._track_ids:
            masks = self.free.take_ids(pl, gpu_ids, j)
        elif gpu_ids:
            raise SimulationError(
                f"Policy {self.policy.name!r} names GPU ids for {j.label}; set gpu_ids = True on "
                f"the policy class so that the engine tracks them during the run."
            )
        else:
            masks = None
        self._holds.append(j.index)
        self.free.allocate(pl)
        if usage:
            self.res.allocate(usage)
        self._reserved.append((self.now, j.gpus))  # held from now; its segment starts at the launch
        j._next_placement = (pl, masks, usage)
        self._stop(j, False)
        j.n_preemptions += 1
        if self._log is not None:
            self._log.append((self.now, "migrate", j.id, pl))
        self._after_stop(j)
        return pl

    def _stop(self, j: SimJob, rollback: bool) -> None:
        now = self.now
        if j.phase == LOADING:
            d = now - j._phase_start
            j.loading_time += d
            j.futile_time += d
            j.n_futile += 1
        else:
            if now == j._phase_start and j._last_load > 0:  # no training since its load: eq. (2), futile
                j.futile_time += j._last_load
                j.n_futile += 1
            j._done = min(j._done + j.rate * (now - j._t), j.stages[j.stage])
            j._t = now
            j.training_time += now - j._phase_start
            del self._training[j.index]
            if self._corunner:
                self._changed.append(j)
            if rollback:
                ck = j.checkpointed_work
                j.lost_work += j._done - ck
                j._done = ck
        j._version += 1  # the pending load-end / stage-end event is stale

    def _after_stop(self, j: SimJob) -> None:
        # a job cut during loading, or before any training after its load, has nothing to save
        was_training = j.phase == TRAINING and not (self.now == j._phase_start and j._last_load > 0)
        save = (
            self._overhead_of(j, j.placement, False)
            if was_training and (j.save_s is not None or self._save is not None)
            else 0.0
        )
        j.phase = SAVING
        j._phase_start = self.now
        self._seq += 1
        if save > 0:
            heapq.heappush(self._heap, (self.now + save, P_SAVED, self._seq, j, j._version))
        else:
            self._release_after_save(j)
            heapq.heappush(self._heap, (self.now, P_SAVED, self._seq, j, -1))  # notify only

    def _release_after_save(self, j: SimJob) -> None:
        now = self.now
        j.saving_time += now - j._phase_start
        self._release(j, now)
        j.phase = WAITING
        if self._log is not None:
            self._log.append((now, "saved", j.id, None))
        if j._next_placement is not None:
            (pl, j.gpu_masks, j.usage), j._next_placement = j._next_placement, None
            self._reserved.append((now, -j.gpus))  # the reservation becomes the new segment
            self._launch(j, pl)

    def _release(self, j: SimJob, now: float) -> None:
        """The one release path: record the segment, free GPUs, their ids and resources."""
        usage = j.usage
        masks = j.gpu_masks
        self._seg.append((j.index, j._hold_start, now, j.placement, masks, usage))
        self._holds.append(~j.index)
        free = self.free
        free.release(j.placement)
        if masks is not None:
            fid = free.free_ids
            for m, took in masks.items():
                fid[m] |= took
        if usage:
            self.res.release(usage)
        del self._holding[j.index]
        j.placement = j.gpu_masks = j.usage = None

    def set_timer(
        self, delay: float | None = None, *, at: float | None = None, period: float | None = None, data: Any = None
    ) -> Timer:
        """Call ``policy.on_timer`` after ``delay`` seconds (or at time ``at``), then every ``period``."""
        if (delay is None) == (at is None):
            raise SimulationError("set_timer needs exactly one of delay= (seconds from now) or at= (a time).")
        t = self.now + delay if delay is not None else at
        if not (t >= self.now and math.isfinite(t)):
            raise SimulationError(
                f"A timer must fire at a finite time >= now ({self.now:g}); got delay={delay!r}, at={at!r}."
            )
        if period is not None and not (period > 0 and math.isfinite(period)):
            raise SimulationError(f"A periodic timer needs a positive finite 'period'; got {period!r}.")
        self._timer_id += 1
        tm = Timer(self._timer_id, t, period, data)
        self._seq += 1
        heapq.heappush(self._heap, (t, P_TIMER, self._seq, tm, 0))
        return tm

    def cancel_timer(self, timer: Timer) -> None:
        """Cancel a timer (no-op if it already fired or was cancelled)."""
        if not isinstance(timer, Timer):
            raise SimulationError(f"cancel_timer needs a Timer returned by set_timer; got {timer!r}.")
        timer.active = False

    def apply(self, decisions: Iterable[Any] | None) -> None:
        """Apply decision objects returned by a hook, in order."""
        if decisions is None:
            return
        for d in decisions:
            if isinstance(d, Start):
                self.start(d.job, d.placement, gpu_ids=d.gpu_ids, config=d.config)
            elif isinstance(d, Preempt):
                self.preempt(d.job, rollback=d.rollback)
            elif isinstance(d, Migrate):
                self.migrate(d.job, d.placement, gpu_ids=d.gpu_ids)
            elif isinstance(d, SetTimer):
                self.set_timer(d.delay, period=d.period, data=d.data)
            elif isinstance(d, CancelTimer):
                self.cancel_timer(d.timer)
            else:
                raise SimulationError(
                    f"Policy {self.policy.name!r} returned {d!r}; return Start, Preempt, Migrate, SetTimer or "
                    f"CancelTimer objects (or None)."
                )

    # -- helpers -----------------------------------------------------------------------------
    def _why_not_waiting(self, j: SimJob, what: str) -> str:
        if j.phase == PENDING:
            why = f"it has not arrived (arrival {j.arrival:g})"
        elif j.phase in (DONE, FAILED):
            why = f"it has finished ({j.phase})"
        else:
            why = f"it is already {j.phase} on {j.placement}"
        return f"Cannot {what} {j.label} at t={self.now:g}: {why}. Only waiting jobs can be started."

    # -- main loop ---------------------------------------------------------------------------
    def _new_run_state(self) -> None:
        """The state of one run (created with the Simulator, so that the read-only views work before
        :meth:`run`)."""
        self._heap: list[tuple] = []  # (time, priority, seq, job or timer, version)
        self._seq = 0
        self._timer_id = 0
        self._training: dict[int, SimJob] = {}
        self._holding: dict[int, SimJob] = {}
        self._seg: list[tuple] = []  # (job index, start, end, placement, GPU masks, resource usage)
        self._holds = array("q")  # job index at each start (migration included), ~index at each release
        self._reserved: list[tuple[float, int]] = []  # migrations: (time, +GPUs) reserved, (time, -GPUs) used
        self._track_ids = bool(getattr(self.policy, "gpu_ids", False))
        self._plain = self.res is None and not self._track_ids  # the fast path of start()
        self._rule = self.policy.placement
        self._log: list[tuple] | None = [] if self.record_log else None
        self._corunner = bool(self.rate_model.corunner_dependent)
        # ConstantRate (exactly, not a subclass): its rate, checked once; else 0 (ask the model)
        self._const_rate = self.rate_model._rate if type(self.rate_model) is ConstantRate else 0.0
        self._changed: list[SimJob] = []
        self._decision_s = array("d") if self.time_decisions else None
        self._n_finished = 0
        self.n_events = 0  # events processed (set by run)
        self._bar = None
        self._bar_step = max(1, len(self.jobs) // 200)

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
        if self._compiled is not None:
            return self._compiled.run(until, max_time, max_events)
        if self._ran:
            raise SimulationError("This Simulator has already run; build a new one (policies are reusable).")
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
        """The run's limits from the options (checked: a positive number, "auto" or None)."""
        out = []
        for name, v in (("max_time", max_time), ("max_events", max_events)):
            if v is None:
                out.append(_INF)
                continue
            if isinstance(v, str) and v == "auto":
                if name == "max_events":
                    out.append(1_000_000 + 1_000 * len(self.jobs))
                elif self._const_rate:
                    last = max((j.arrival for j in self.jobs), default=0.0)
                    out.append(last + 1_000.0 * sum(j.work for j in self.jobs) / self._const_rate + 1e6)
                else:
                    out.append(_INF)
                continue
            ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and v > 0
            if not ok or (name == "max_events" and v != int(v)):
                what = "a positive number of seconds" if name == "max_time" else "a positive integer"
                raise InvalidOptionError(
                    f"The '{name}' option of Simulator.run must be {what}, 'auto' or None (no limit); got {v!r}."
                )
            out.append(float(v))
        return out[0], out[1]

    def _over_limit(self, t: float, n_events: int) -> SimulationLimitError:
        """The error for a run past its limits, with what a user needs to see why."""
        unfinished = [j for j in self.jobs if j.phase not in (DONE, FAILED)]
        running = [j for j in unfinished if j.placement is not None]
        show = ", ".join(f"{j.label} ({j.phase}, {j.n_preemptions} preemptions)" for j in running[:5])
        which = (
            f"max_time={self._max_time:g} s (simulated time is {t:g} s)"
            if t > self._max_time
            else f"max_events={self._max_events:g} (at simulated time {t:g} s)"
        )
        return SimulationLimitError(
            f"Policy {self.policy.name!r} ran past {which} after {n_events} events, with {len(unfinished)} of "
            f"{len(self.jobs)} jobs unfinished and {len(running)} holding GPUs{': ' + show if show else ''}"
            f"{' ...' if len(running) > 5 else ''}. A livelock (jobs preempted and restarted over and over) "
            f"or a limit set too low: pass run(max_time=..., max_events=...) larger, or None for no limit."
        )

    def _run(self, until: float | None):
        from optsched.sim.metrics import SimResult

        clock = None
        if self.time_decisions:
            import time

            clock = time.perf_counter
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
                    raise SimulationError(
                        f"Policy {policy.name!r} made {same_t} rounds of decisions at t={t:g} without time "
                        f"advancing (e.g. starting and preempting the same jobs): a livelock. Fix the policy."
                    )
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
            stuck = [j for j in self.jobs if j.phase not in (DONE, FAILED)]
            if stuck:
                j = stuck[0]
                raise SimulationError(
                    f"Policy {policy.name!r} left {len(stuck)} job(s) unfinished with no pending event, e.g. "
                    f"{j.label} ({j.phase}, {j.gpus} GPUs). A policy must start every waiting job eventually "
                    f"(or pass allow_unfinished=True)."
                )
        return SimResult(self.record())

    def record(self):
        """The run's records as a :class:`~optsched.sim.metrics.RunRecord` (what
        :class:`~optsched.sim.metrics.SimResult` is built from)."""
        from optsched.sim.metrics import RunRecord

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
            j.phase = DONE if j.stage == len(j.stages) else FAILED
            j.completion = t
            del self._training[j.index]
            if self._corunner:
                self._changed.append(j)
            self._release(j, t)
            j._version += 1
            self._n_finished += 1
            if self._log is not None:
                self._log.append((t, "complete" if j.phase == DONE else "fail", j.id, j.stage))
            if self._bar is not None and self._n_finished % self._bar_step == 0:
                self._bar.update(self._bar_step)
            return self.policy.on_completion(self, j)
        if self._log is not None:
            self._log.append((t, "checkpoint", j.id, j.stage))
        self._push_stage_end(j)
        return self.policy.on_checkpoint(self, j)

    def _save_end(self, j: SimJob, ver: int, t: float) -> Any:
        """The pause-and-save of a preempted ``j`` ends (``ver == -1``: a zero-time save whose
        GPUs were freed at once; only the hook is due)."""
        if ver != -1:
            if ver != j._version or j.phase != SAVING:
                return _STALE
            self._release_after_save(j)
        return self.policy.on_preempted(self, j)

    def _load_end(self, j: SimJob, ver: int, t: float) -> Any:
        """``j`` has loaded: it starts training."""
        if ver != j._version or j.phase != LOADING:
            return _STALE
        j._last_load = t - j._phase_start
        j.loading_time += j._last_load
        self._begin_training(j)
        return self.policy.on_loaded(self, j)

    def _arrive(self, j: SimJob, t: float) -> Any:
        j.phase = WAITING
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
            if j.phase != TRAINING:
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
        from optsched.sim.policies import get_policy

        policy = get_policy(policy)
    return Simulator(cluster, jobs, policy, **options).run()
