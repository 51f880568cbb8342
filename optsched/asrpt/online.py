"""A-SRPT (Algorithm 1) and the paper's five baselines as policies of the shared simulator; they run
on the jobs of :func:`optsched.asrpt.rate.sim_jobs` with the rate model
:class:`~optsched.asrpt.rate.HeavyEdgeRate` (:func:`optsched.asrpt.policy.simulate_asrpt` builds
both from an instance).

A-SRPT, per event time (the paper's slot loop; availability only changes at events):

0. decisions are taken at slot boundaries (multiples of ``instance.slot``), as in the paper's slotted
   loop, so that the exact Problem (8) optimum is a valid lower bound for every policy here;
1. advance the virtual single machine Ã_1 (preemptive SRPT on sizes (g_i/G) ñ_i alpha~min_i,
   releases r_i; unseen jobs have ñ_i = 0 and complete at once) and append its completions to
   ``pending_queue`` in completion order (Line 2); a timer wakes the policy at the next virtual
   completion;
2. while the head i of ``pending_queue`` fits (g_i <= free GPUs, Line 5): communication-heavy
   (alpha^max_i / alpha~min_i >= COMM_HEAVY) jobs take the servers with most free GPUs and start
   if alpha_i(x) / alpha~min_i <= COMM_HEAVY, otherwise wait up to tau (g_i/G) ñ_i alpha~min_i,
   re-evaluating alpha at every event and starting as soon as it drops below kappa (Lines 8-20);
   other jobs take the servers with least free GPUs and start at once (Lines 21-23). The head
   blocks the queue (Line 25: no backfilling), including while it is being delayed.

Tested in ``tests/asrpt/test_policy.py``, ``tests/asrpt/test_policy_contract.py`` and
``tests/asrpt/test_reading.py``.
"""

from __future__ import annotations

import bisect
import heapq
import math
import numbers
from typing import Any

from optsched.asrpt.formulation import job_shape_key
from optsched.asrpt.heavy_edge import alpha_min_estimate
from optsched.asrpt.model import FIRST_SLOT, AsrptJob
from optsched.asrpt.rate import ClusterParams, HeavyEdgeRate, asrpt_job
from optsched.asrpt.timing import alpha_max, check_reading
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.sim.model.state import DONE, FAILED
from optsched.sim.policy import Policy

COMM_HEAVY = 1.5


def select_servers(free, need: int, *, most: bool) -> dict[int, int] | None:
    """Take ``need`` GPUs from the servers with the most (or least, ignoring full ones) free GPUs."""
    order = sorted((m for m, f in enumerate(free) if f > 0), key=lambda m: ((-free[m]) if most else free[m], m))
    out, left = {}, need
    for m in order:
        if left == 0:
            break
        take = min(int(free[m]), left)
        out[m] = take
        left -= take
    return out if left == 0 else None


def _off_slot(policy, sim) -> bool:
    """True (and a wake-up timer armed at the next slot boundary) if decisions must wait for it.

    Problem (8) and Algorithm 1 are time-slotted: jobs start at multiples of the slot, from slot
    ``first_slot`` on (the paper's [T] = {1, ..., T} by default: nothing starts at time 0). Acting
    only there keeps the policies inside the model whose exact optimum OPT_A we compute. The slot
    and first slot are the instance's, read from the jobs in ``on_start`` (see :func:`sim_jobs`)."""
    if not policy.slotted:
        return False
    slot = policy.slot
    k = sim.now / slot
    first = policy.first_slot
    # float noise: at 1e7 s one ulp of k is 1.9e-9, so a fixed 1e-9 could call a boundary "off slot"
    # and then arm the timer at that same boundary, already past (seen on OpenB replays)
    tol = max(1e-9, 4 * math.ulp(k))
    if abs(k - round(k)) <= tol and round(k) >= first:
        return False
    nxt = max(first, math.ceil(k - tol)) * slot
    if getattr(policy, "slot_timer_at", None) != nxt:
        sim.set_timer(at=nxt)
        policy.slot_timer_at = nxt
    return True


class _JobInfo:
    """Per-job constants: the AsrptJob, alpha~min, alpha^max, prediction, comm-heavy flag."""

    def __init__(
        self,
        params: ClusterParams,
        job: AsrptJob,
        predicted: int,
        seed=0,
        reading: str = "nic-share",
        cache: dict | None = None,
    ):
        self.job = job
        self.gpus = job.gpus  # g_i (a sum over the stages: read once)
        self.shape = key = job_shape_key(job)
        hit = None if cache is None else cache.get(key)
        if hit is None:  # alpha~min and alpha^max depend on the job's profile only: one Heavy-Edge per profile
            hit = (
                alpha_min_estimate(job, params, seed=seed, reading=reading),
                alpha_max(job, instance=params, reading=reading),
            )
            if cache is not None:
                cache[key] = hit
        self.a_min, self.a_max = hit
        self.pred = int(predicted)
        self.comm_heavy = self.a_max / self.a_min >= COMM_HEAVY  # the constant, not the option (kept as it was)


class _AsrptPolicy(Policy):
    """What A-SRPT and its baselines share: options ``predictions``, ``slotted``, ``seed``, ``reading``;
    :meth:`_read_run` (from ``on_start``) reads the cluster's G, g and bandwidths, each job's AsrptJob and
    the slot length from the simulator's jobs (:func:`sim_jobs`)."""

    def __init__(
        self,
        *,
        predictions=None,
        slotted: bool = True,
        seed=0,
        reading: str = "nic-share",
        rate: HeavyEdgeRate | None = None,
    ):
        super().__init__(placement="consolidate")
        self.reading = check_reading(reading)
        self.slotted = bool(slotted)
        self.predictions = predictions
        self.seed = seed
        self.rate_model = rate or HeavyEdgeRate(seed=seed, reading=self.reading)

    def _read_run(self, sim) -> None:
        cluster = sim.cluster
        self.rate_model.bind(cluster)
        params = self.rate_model.params
        self.G = int(cluster.total_gpus)
        jobs = [asrpt_job(j) for j in sim.jobs]
        slots = {(j.attrs.get("asrpt_slot", 1.0), j.attrs.get("asrpt_first_slot", FIRST_SLOT)) for j in sim.jobs}
        if len(slots) > 1:
            raise InvalidInstanceError(
                f"The jobs disagree on the slot length / first slot ({sorted(slots)}); "
                f"build them from one instance with sim_jobs(instance)."
            )
        self.slot, self.first_slot = slots.pop() if slots else (1.0, FIRST_SLOT)
        pred = self.predictions or {j.id: j.predicted() for j in jobs}
        cache: dict = {}
        self.info = {j.id: _JobInfo(params, j, pred[j.id], self.seed, self.reading, cache) for j in jobs}
        self.slot_timer_at = None  # the wake-up timer armed at the next slot boundary
        self._memo_free: tuple | None = None  # the free GPUs the memo of most_free was filled for
        self._memo: dict = {}

    def most_free(self, sim, jid) -> tuple[dict[int, int] | None, float | None]:
        """``select_servers(sim.free_gpus, g_i, most=True)`` for job ``jid`` and its alpha on it (None, None
        when it does not fit). Both depend only on the free GPUs, g_i and the job's profile, so they are
        memoised while the free GPUs stay the same: a backfilling pass asks for every waiting job, at
        every slot, and most slots change nothing (the same values: the memo only skips recomputing)."""
        free = tuple(sim.free_gpus)
        if free != self._memo_free:
            self._memo_free, self._memo = free, {}
        info = self.info[jid]
        key = (info.gpus, info.shape)
        hit = self._memo.get(key)
        if hit is None:
            pl = select_servers(free, info.gpus, most=True)
            hit = self._memo[key] = (pl, None if pl is None else self.rate_model.alpha(info.job, pl))
        return (None if hit[0] is None else dict(hit[0])), hit[1]


def _is_number(x) -> bool:
    """A real number (not a bool, not text)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class ASRPT(_AsrptPolicy):
    """A-SRPT (Algorithm 1).

    Options only: the cluster (G, g, bandwidths), each job's stage profile and the slot length are
    read when the run starts, from the simulator's cluster and the jobs built by :func:`sim_jobs`
    (iterations are *not* read: the policy sees ñ). One object can run several simulations.

    Parameters
    ----------
    predictions : mapping job id -> int, optional
        ñ_i; default each job's ``predicted_iterations`` (None = perfect: A-SRPT-Perfect).
    predictor : IterationPredictor, optional
        Online prediction instead: fitted on ``history`` (rows (group, user, iterations)) at the start,
        asked at each arrival (unseen group -> 0), every finished job appended to the history, refitted
        every ``retrain_every`` seconds (the paper retrains hourly/daily).
    tau : float
        Delay factor (Line 16).
    comm_heavy : float
        COMM_HEAVY threshold of Line 12 (paper: 1.5). Which jobs are communication-heavy at all
        (alpha^max / alpha~min >= 1.5) uses the constant :data:`COMM_HEAVY`.
    slotted : bool
        Start jobs only at multiples of the instance's slot (the paper's slotted loop; default), from
        its first slot on. The virtual machine Ã_1 runs in continuous time either way.
    reading : {"nic-share", "ring-boundary"}
        Reading of eq. (6) for alpha, alpha~min and alpha^max (formulations/asrpt.md#reading).
    backfill : bool
        **Not the paper's algorithm** (default False: Algorithm 1, the head of ``pending_queue`` that
        does not fit, or is being delayed, blocks the queue, Lines 5 and 25). True: later pending jobs
        that fit start meanwhile, in queue order (one communication-heavy job delayed at a time). A
        diagnostic variant (formulations/asrpt.md, finding 6): at 2,000 GPUs the queue is in arrival
        order and the blocking head is what costs A-SRPT most.
    split_heavy : bool
        Default True: Algorithm 1 (Line 20, ``t_i <- t``): a delayed communication-heavy job starts
        wherever GPUs are free once its window ends, split over servers if need be. **False is not
        the paper's pseudo-code** but the prose of Sec. IV-C ("communication-heavy jobs are delayed
        until sufficient server resources are available"): such a job waits with no deadline until
        a placement passes Line 12's test (alpha_i(x) / alpha~min_i <= ``comm_heavy``), or until the
        cluster is idle (nothing else can free GPUs for it). A diagnostic variant
        (formulations/asrpt.md#readings-of-alg-1); ``tau`` then plays no part.

    Guarantee
    ---------
    Theorem 1 of the paper (with the caveat of formulations/asrpt.md#findings).

    References
    ----------
    Luo et al., Algorithm 1; formulations/asrpt.md.

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> from optsched.asrpt.policy import simulate_asrpt
    >>> pol = ASRPT(tau=1.0)
    >>> round(simulate_asrpt(toy_instance(), pol).summary()["total_completion_time"], 3)
    31.9
    """

    name = "a-srpt"

    def __init__(
        self,
        *,
        predictions=None,
        tau: float = 1.0,
        comm_heavy: float = COMM_HEAVY,
        rate: HeavyEdgeRate | None = None,
        slotted: bool = True,
        predictor=None,
        history=(),
        retrain_every: float | None = None,
        seed=0,
        reading: str = "nic-share",
        backfill: bool = False,
        split_heavy: bool = True,
    ):
        super().__init__(predictions=predictions, slotted=slotted, seed=seed, reading=reading, rate=rate)
        for opt, v in (("backfill", backfill), ("split_heavy", split_heavy)):
            if not isinstance(v, bool):
                raise InvalidOptionError(f"The '{opt}' option of A-SRPT must be True or False; got {v!r}.")
        self.backfill = backfill
        self.split_heavy = split_heavy
        self.name = "a-srpt" + ("-backfill" if backfill else "") + ("" if split_heavy else "-no-split")
        self.predictor = predictor
        try:
            self.history = list(history if history is not None else ())
        except TypeError:
            raise InvalidOptionError(
                f"The 'history' option of A-SRPT must be rows (group, user, iterations); got {history!r}."
            ) from None
        if retrain_every is not None and not (_is_number(retrain_every) and retrain_every > 0):
            raise InvalidOptionError(
                f"The 'retrain_every' option must be a number of seconds > 0; got {retrain_every!r}."
            )
        self.retrain_every = retrain_every
        if not _is_number(tau) or tau < 0 or not math.isfinite(tau):
            raise InvalidOptionError(f"The 'tau' option of A-SRPT must be a finite number >= 0; got {tau!r}.")
        self.tau = float(tau)
        if not _is_number(comm_heavy) or not comm_heavy > 0 or not math.isfinite(comm_heavy):
            raise InvalidOptionError(
                f"The 'comm_heavy' option of A-SRPT must be a finite number > 0 (paper: 1.5); got {comm_heavy!r}."
            )
        self.comm_heavy = float(comm_heavy)

    # -- per run ------------------------------------------------------------------------------
    def on_start(self, sim):
        self._read_run(sim)
        self.v_time = 0.0
        self.v_active: list = []  # heap of (remaining, seq, job id)
        self.v_seq = 0
        self.pending: list = []
        self.delayed: dict | None = None  # {"id", "kappa", "deadline"}
        self.timer = None
        self.virtual_completion: dict = {}
        self.started_alpha: dict = {}
        self._history = list(self.history)
        self.retrain_timer = None
        self.n_retrains = 0
        if self.predictor is not None:
            self._refit()
            if self.retrain_every:
                self.retrain_timer = sim.set_timer(self.retrain_every, period=self.retrain_every, data="retrain")

    def _refit(self) -> None:
        if self._history:
            self.predictor.fit(self._history)
            self.n_retrains += 1
            self._fitted = True
        else:
            self._fitted = False

    def on_completion(self, sim, job):
        if self.predictor is not None:
            j = self.info[job.id].job
            self._history.append((j.group, j.user, j.iterations))
            if self.retrain_timer is not None and all(x.phase in (DONE, FAILED) for x in sim.jobs):
                sim.cancel_timer(self.retrain_timer)  # a periodic timer would keep the run alive
                self.retrain_timer = None

    def _size(self, jid) -> float:
        i = self.info[jid]
        return i.job.gpus / self.G * i.pred * i.a_min

    def on_arrival(self, sim, job):
        self._advance(sim.now)
        if self.predictor is not None:
            j = self.info[job.id].job
            self.info[job.id].pred = int(self.predictor.predict([(j.group, j.user)])[0]) if self._fitted else 0
        size = self._size(job.id)
        if size <= 0:  # unseen job (ñ = 0): completes at once in Ã_1
            self.pending.append(job.id)
            self.virtual_completion[job.id] = sim.now
        else:
            heapq.heappush(self.v_active, (size, self.v_seq, job.id))
            self.v_seq += 1

    def _advance(self, now: float) -> None:
        """Run preemptive SRPT on Ã_1 from v_time to now; completed jobs go to pending (Line 2)."""
        t = self.v_time
        eps = 1e-9 * max(1.0, abs(now))
        while self.v_active:
            rem, seq, jid = self.v_active[0]
            if t + rem <= now + eps:  # completes by now (tolerance: no zero-length wake-ups)
                heapq.heappop(self.v_active)
                t = min(now, t + rem)
                self.pending.append(jid)
                self.virtual_completion[jid] = t
            elif t < now:
                heapq.heapreplace(self.v_active, (rem - (now - t), seq, jid))
                t = now
            else:
                break
        self.v_time = max(now, self.v_time)

    def _arm_timer(self, sim) -> None:
        if self.timer is not None:
            sim.cancel_timer(self.timer)
            self.timer = None
        due = []
        if self.v_active:
            due.append(self.v_time + self.v_active[0][0])
        if self.delayed is not None and math.isfinite(self.delayed["deadline"]):
            due.append(self.delayed["deadline"])
        due = [d for d in due if d > sim.now + 1e-9 * max(1.0, abs(sim.now))]  # past deadlines: events wake us
        if due:
            self.timer = sim.set_timer(at=min(due))

    def on_timer(self, sim, timer):
        if timer is self.timer:
            self.timer = None
        elif timer is self.retrain_timer:
            self._refit()

    def _wait_window(self, g_i: int, info) -> float:
        """Length (s) of Line 16's loop t in {t+1, ..., t + tau (g_i/G) ñ_i alpha~min_i}: the last slot it
        reaches (whole slots when slotted), 0 when the loop is empty, e.g. for unseen jobs (ñ_i = 0) or
        tau = 0; the job then starts at once (Line 20)."""
        budget = self.tau * g_i / self.G * info.pred * info.a_min
        if not self.slotted:
            return max(0.0, budget)
        slot = self.slot
        return math.floor(budget / slot + 1e-9) * slot

    def _may_start_delayed(self, sim, info, a: float) -> bool:
        """Whether the delayed head starts on the placement of alpha ``a``: Algorithm 1 (Lines 12-20) when
        alpha drops below its first evaluation kappa or the window has ended; never splitting
        (``split_heavy=False``) when the placement passes Line 12's test, or the cluster is idle."""
        if not self.split_heavy:
            return a / info.a_min <= self.comm_heavy or sim.total_free >= self.G
        return a < self.delayed["kappa"] - 1e-15 or sim.now >= self.delayed["deadline"] - 1e-9

    def _start(self, sim, jid, placement):
        job = self.info[jid].job
        self.started_alpha[jid] = self.rate_model.alpha(job, placement)
        sim.start(jid, placement)

    def schedule(self, sim):
        self._advance(sim.now)
        if _off_slot(self, sim):
            self._arm_timer(sim)
            return
        k = 0  # the job looked at: always the head (k = 0) unless backfilling
        while k < len(self.pending) and sim.total_free > 0:
            jid = self.pending[k]
            info = self.info[jid]
            g_i = info.gpus
            if self.delayed is not None and self.delayed["id"] == jid:
                pl, a = self.most_free(sim, jid)
                if pl is not None and self._may_start_delayed(sim, info, a):
                    self.pending.pop(k)
                    self.delayed = None
                    self._start(sim, jid, pl)
                    continue
                if not self.backfill:
                    break  # still delaying (or waiting for GPUs): the head blocks the queue
                k += 1
                continue
            if g_i > sim.total_free:  # Line 5 / 25
                if not self.backfill:
                    break
                k += 1
                continue
            if info.comm_heavy:  # Lines 8-20
                pl, a = self.most_free(sim, jid)
                wait = self._wait_window(g_i, info) if self.split_heavy else math.inf
                idle = not self.split_heavy and sim.total_free >= self.G  # never split: nothing else frees GPUs
                if a / info.a_min <= self.comm_heavy or wait <= 0 or idle:  # Line 12, or an empty loop 16-19 (Line 20)
                    self.pending.pop(k)
                    self._start(sim, jid, pl)
                    continue
                if self.delayed is None:  # always so without backfilling (the delayed job is the head)
                    self.delayed = {"id": jid, "kappa": a, "deadline": sim.now + wait}
                if not self.backfill:
                    break
                k += 1
                continue
            pl = select_servers(sim.free_gpus, g_i, most=False)  # Lines 21-23
            self.pending.pop(k)
            self._start(sim, jid, pl)
        self._arm_timer(sim)


class OrderedPolicy(_AsrptPolicy):
    """The paper's baselines: order waiting jobs by a predicted key, Heavy-Edge on the servers with
    most free GPUs.

    ``key``: ``"duration"`` (ñ_i alpha~min_i), ``"workload"`` (g_i ñ_i alpha~min_i) or ``"subtime"`` (r_i).
    ``work_conserving=False``: strict priority, the head blocks (SPJF, SPWF); ``True``: start every
    job that fits in order (WCS-*). Options only, as :class:`ASRPT`.
    """

    def __init__(
        self,
        *,
        key: str = "duration",
        work_conserving: bool = False,
        predictions=None,
        name: str | None = None,
        slotted: bool = True,
        seed=0,
        reading: str = "nic-share",
    ):
        super().__init__(predictions=predictions, slotted=slotted, seed=seed, reading=reading)
        if key not in ("duration", "workload", "subtime"):
            raise InvalidOptionError(f"The 'key' of OrderedPolicy must be duration, workload or subtime; got {key!r}.")
        self.key, self.work_conserving = key, bool(work_conserving)
        self.name = name or f"{'wcs' if work_conserving else 'sp'}-{key}"

    def on_start(self, sim):
        self._read_run(sim)
        self.waiting: dict[int, list] = {}

    def _k(self, jid):
        i = self.info[jid]
        if self.key == "subtime":
            return (i.job.arrival, str(jid))
        v = i.pred * i.a_min * (i.job.gpus if self.key == "workload" else 1)
        return (v, i.job.arrival, str(jid))

    def on_arrival(self, sim, job):
        # keys are fixed: one sorted list per GPU demand, O(log W) per arrival
        g_i = self.info[job.id].job.gpus
        bisect.insort(self.waiting.setdefault(g_i, []), (self._k(job.id), job.id))

    def schedule(self, sim):
        """Strict priority: start the head (least key) while it fits. Work-conserving: start every job that fits
        in key order; since free GPUs only shrink during a pass, that is "repeatedly the least key among the jobs
        with g_i <= free GPUs", taken from the heads of the per-demand lists (O(#demands) per start, no rescans
        of jobs that cannot fit)."""
        if not any(self.waiting.values()) or _off_slot(self, sim):
            return
        while True:
            free = sim.total_free
            heads = [(q[0], g) for g, q in self.waiting.items() if q and (g <= free or not self.work_conserving)]
            if not heads:
                return
            (_, jid), g_i = min(heads)
            if g_i > free:  # strict priority: the head does not fit and blocks
                return
            pl = select_servers(sim.free_gpus, g_i, most=True)
            if pl is None:  # cannot happen (g_i <= free GPUs): keep the old behaviour of skipping
                return
            self.waiting[g_i].pop(0)
            sim.start(jid, pl)


#: The five baselines of Sec. V-A-1-d: paper name -> OrderedPolicy options.
BASELINE_OPTIONS = {
    "SPJF": dict(key="duration"),
    "SPWF": dict(key="workload"),
    "WCS-Duration": dict(key="duration", work_conserving=True),
    "WCS-Workload": dict(key="workload", work_conserving=True),
    "WCS-SubTime": dict(key="subtime", work_conserving=True),
}


def BASELINES(*, predictions=None, seed=0, reading: str = "nic-share") -> dict[str, Any]:
    """The five baselines of Sec. V-A-1-d, all with Heavy-Edge mapping (paper name -> policy)."""
    kw = dict(predictions=predictions, seed=seed, reading=reading)
    return {name: OrderedPolicy(name=name, **opts, **kw) for name, opts in BASELINE_OPTIONS.items()}
