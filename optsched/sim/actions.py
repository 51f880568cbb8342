"""The Python engine's per-run state and what a policy reads and calls on it (the members of
:class:`~optsched.sim.view.SimView`): the views (free GPUs, jobs by phase, load and save times),
the actions (start, preempt, migrate, timers) and the paths every action shares (launch, stop,
release). :class:`EngineActions` is built from the checked options and the jobs, and owns all of
that state; the event loop that drives it, :class:`optsched.sim.engine.PythonEngine`, holds one as
a member and hands it to the policy's hooks as ``sim``.

Event entries pushed here are ``(time, kind, sequence, job or timer, version)`` with the kinds of
R3 (:mod:`optsched.sim.rules`); the loop pops them.

Tested in ``tests/sim/test_engine.py`` and ``tests/sim/test_preemption_invariants.py``.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, SimulationError
from optsched.sim.model.inputs import make_jobs
from optsched.sim.model.resources import FreeGPUs, FreeResources
from optsched.sim.model.state import (
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
from optsched.sim.options import SimOptions
from optsched.sim.policy import CancelTimer, Migrate, Preempt, SetTimer, Start
from optsched.sim.rates import ConstantRate, check_rate
from optsched.sim.rules import P_LOADED, P_SAVED, P_STAGE, P_TIMER


def _decision_list(policy: Any, decisions: Any) -> list:
    """A hook's return value that is not a list: any other iterable of decisions, else an error."""
    if isinstance(decisions, (str, bytes, Mapping)) or not isinstance(decisions, Iterable):
        raise SimulationError(
            f"Policy {getattr(policy, 'name', type(policy).__name__)!r} returned {decisions!r} from a hook; a hook "
            f"returns None or a list of decisions (Start, Preempt, Migrate, SetTimer, CancelTimer)."
        )
    return list(decisions)


_INF = math.inf


class EngineActions:
    """The per-run state of the Python engine, its views and its actions: what a policy's hooks and
    the rate model receive as ``sim`` (:class:`~optsched.sim.view.SimView`).

    Built from the jobs (checked and converted here, R1: every job starts pending) and the checked
    :class:`~optsched.sim.options.SimOptions`; the state exists from construction, so the views
    work before the run. The event loop (:class:`optsched.sim.engine.PythonEngine`) sets ``now``
    and pops the event entries pushed here.
    """

    def __init__(self, jobs: Any, options: SimOptions) -> None:
        cluster, policy = options.cluster, options.policy
        self.options = options
        self.cluster = cluster
        self.capacity = cluster.total_gpus
        self.policy = policy
        self.rate_model = options.rate_model
        self.rng = options.rng
        self.slot = options.slot
        self.preempt_loading = options.preempt_loading
        self.now = 0.0
        self._load = options.load
        self._save = options.save
        self.jobs: list[SimJob] = make_jobs(jobs, cluster, options.stages, attrs_columns=options.attrs_columns)
        for j in self.jobs:
            j._sim = self
        self._by_id: dict[Any, SimJob] = {j.id: j for j in self.jobs}
        if len(self._by_id) != len(self.jobs):
            raise InvalidInstanceError("Job ids must be unique; found a repeated 'id'. Renumber the jobs.")
        self._terminate = self._terminations(options.terminate_after)
        self.free = FreeGPUs(list(cluster.gpus), whole_node=getattr(policy, "placement", None) == "whole_node")
        self.res = self._resources(cluster)
        # the event entries and what the loop and the result read
        self._heap: list[tuple] = []  # (time, priority, seq, job or timer, version)
        self._seq = 0
        self._timer_id = 0
        self._training: dict[int, SimJob] = {}
        self._holding: dict[int, SimJob] = {}
        self._seg: list[tuple] = []  # (job index, start, end, placement, GPU masks, resource usage)
        self._holds = array("q")  # job index at each start (migration included), ~index at each release
        self._reserved: list[tuple[float, int]] = []  # migrations: (time, +GPUs) reserved, (time, -GPUs) used
        self._track_ids = bool(getattr(policy, "gpu_ids", False))
        self._plain = self.res is None and not self._track_ids  # the fast path of start()
        self._rule = policy.placement
        self._log: list[tuple] | None = [] if options.record_log else None
        self._corunner = bool(self.rate_model.corunner_dependent)
        # ConstantRate (exactly, not a subclass): its rate, checked once; else 0 (ask the model)
        self._const_rate = self.rate_model._rate if type(self.rate_model) is ConstantRate else 0.0
        self._changed: list[SimJob] = []  # jobs whose co-runners' rates may have changed

    def _terminations(self, terminate_after: Mapping[Any, int] | None) -> dict[int, int]:
        """The ``terminate_after`` option checked, by job index (a job ending after its last stage
        anyway is left out)."""
        out: dict[int, int] = {}
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
                out[j.index] = int(k)
        return out

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
        if j._phase != TRAINING or (self.now == j._phase_start and j._last_load > 0):
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
        if j._phase != WAITING:
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
        """``j`` holds ``pl`` from now: it loads first (R1), or trains at once with no load time."""
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
            j._phase = LOADING
            j._phase_start = now
            j._load_end = now + load
            j._version += 1
            self._seq += 1
            heapq.heappush(self._heap, (now + load, P_LOADED, self._seq, j, j._version))
        else:
            self._begin_training(j)

    def _begin_training(self, j: SimJob) -> None:
        """``j`` trains from now, at its rate (R1)."""
        now = self.now
        j._phase = TRAINING
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
        """Preempt a loading or training job (R2 of :mod:`optsched.sim.rules`).

        Its training progress is kept (``rollback=False``) or goes back to its last checkpoint
        (``rollback=True``; the lost work is reported as ``lost_work``). A job that had started
        training pauses and saves for ``save_time`` seconds on its GPUs; then its GPUs are free and
        ``on_preempted`` is called. With zero save time the GPUs are free at once (the hook still
        comes as an event at the same time).
        """
        j = job if type(job) is SimJob and job._sim is self else self.job(job)
        if j._phase not in (LOADING, TRAINING):
            raise SimulationError(
                f"Cannot preempt {j.label} at t={self.now:g}: it is {j._phase}; only loading or training "
                f"jobs can be preempted."
            )
        if j._phase == LOADING and self.preempt_loading == "finish":  # the load runs on, then is lost whole
            d = j._load_end - j._phase_start
            j.loading_time += d
            j.futile_time += d
            j.n_futile += 1
            j.n_preemptions += 1
            j._version += 1  # the pending load end is stale: the GPUs are freed then instead
            j._phase = SAVING
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
        if j._phase not in (LOADING, TRAINING):
            raise SimulationError(
                f"Cannot migrate {j.label} at t={self.now:g}: it is {j._phase}; only loading or training "
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
        """``j`` stops loading or training now; a load cut short, or followed by no training, is
        futile (R2)."""
        now = self.now
        if j._phase == LOADING:
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
        """A stopped ``j`` saves, then frees its GPUs (R2): a job cut during loading, or before any
        training after its load, has nothing to save and frees them at once."""
        was_training = j._phase == TRAINING and not (self.now == j._phase_start and j._last_load > 0)
        save = (
            self._overhead_of(j, j.placement, False)
            if was_training and (j.save_s is not None or self._save is not None)
            else 0.0
        )
        j._phase = SAVING
        j._phase_start = self.now
        self._seq += 1
        if save > 0:
            heapq.heappush(self._heap, (self.now + save, P_SAVED, self._seq, j, j._version))
        else:
            self._release_after_save(j)
            heapq.heappush(self._heap, (self.now, P_SAVED, self._seq, j, -1))  # notify only

    def _release_after_save(self, j: SimJob) -> None:
        """The save of ``j`` ended: its GPUs are free, it waits (R2), or loads on its new placement
        after a migration."""
        now = self.now
        j.saving_time += now - j._phase_start
        self._release(j, now)
        j._phase = WAITING
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
        if not isinstance(decisions, (list, tuple)):
            decisions = _decision_list(self.policy, decisions)
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
        if j._phase == PENDING:
            why = f"it has not arrived (arrival {j.arrival:g})"
        elif j._phase in (DONE, FAILED):
            why = f"it has finished ({j._phase})"
        else:
            why = f"it is already {j._phase} on {j.placement}"
        return f"Cannot {what} {j.label} at t={self.now:g}: {why}. Only waiting jobs can be started."
