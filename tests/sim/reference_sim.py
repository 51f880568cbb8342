"""A second, deliberately simple simulator of the Lazer model, for differential tests (issue 24).

Written from ``formulations/lazer.md`` alone (sections "Equations", "Readings" 3-4 and
"Simulator rules (R1-R12)") and the paper (Go et al., DAC '26, Alg. 1/2), without reading the
engine (``optsched/sim``) or ``optsched/lazer/policy.py``. It shares no code with them.

How it works: time-stepped on an integer grid. Every input (arrival, work, load ℓ, save p, the
period P, the deferral X) must be an integer, so every event happens at an integer time and one
step of 1 s is exact. At each step ``t`` the jobs first advance over ``[t - 1, t)`` (waiting adds
to W, loading to L, training to T and lowers the remaining work, saving to P), then the events
of ``t`` are applied (completions, save ends, load ends, arrivals, timers), then, if an event
happened, the policy decides (R3). GPUs are modelled one by one (``holder`` and ``claim`` per
GPU); with several servers jobs may span servers, so only the total count matters and the
servers are pooled.

Policies: ``fifo``, ``sjf`` (non-preemptive, with or without backfill), ``srtf`` (R4-R12,
``reserve`` "best" or "preemptor"), ``srtf-periodic`` (ticks every ``period`` from the first
arrival), ``lazer``
(reading 4, fixed deferral X, ``secured="all"``). ``preempt_loading`` "abort" or "finish" (R2).

Readings chosen where R1-R12 / reading 4 leave a choice (each marked ``READING n`` below; the
list is also in the issue-24 report):

1. R10/R11 say which *kind* of GPU a claim takes first but not which GPU of a kind. Among GPUs
   being saved (or losing a load): those whose save ends first, then the lowest GPU number.
   Among a preemptor's victims' GPUs (R11 "the victims' GPUs first"): those still being saved
   first (soonest end first), then those free at once (zero save, aborted load): R10's own
   reason, "so that free GPUs stay with other jobs where they can"; since the victim set is
   irredundant (R11 drops unneeded victims) this never delays the preemptor. It changes results
   in both reserve modes (a later job in the same round may start on a victim's free GPU); an
   earlier version of this file took the free ones first. Which GPUs being saved a claim takes
   changes results only with ``reserve="preemptor"`` (with "best" claims are remade each round).
2. R3's follow-up round: every preemption whose GPUs are free at once (zero save, aborted load,
   the boundary case of (2)) is an event at the same time, so another round follows. A start
   with ℓ = 0 creates no event (R1: it trains at once).
3. R2 with ``preempt_loading="finish"``: the rest of the load still counts as loading time (L),
   the whole load is futile, the job waits from the load's end; its GPUs are claimable like GPUs
   being saved (R6 names them) and count as "soon available" like them.
4. Periodic SRTF: a follow-up round at a tick time (R3) is a full round too. With
   ``reserve="preemptor"`` a claim lasts until its job starts, across ticks (R7); "claims made at
   a tick last until the next tick in both modes" is read as "are not dropped between ticks".
5. Lazer (reading 4): ties in "sort RQ by descending remaining duration" and in "SRTF order" are
   broken by the key of R4 (worst = largest (R, A, i)); "remaining duration" is R4's R (the load
   still to do is not counted). A pending preemptor reserves up to its demand, its victims' GPUs
   first, as R11 claims (reading 4 as amended by the lead; ``lazer_claim="all"``: every GPU
   counted in avail_gpus, all free unreserved GPUs and all its victims' GPUs) and starts as soon as its reserved GPUs
   that are free cover its demand, on those only (not on unreserved free GPUs); then its other
   reserved GPUs are released. Pending preemptors start before the completion handler runs.
   Deferral timers ending at one time run in the order they were set. A preempted job joins WQ
   when it waits (at once with nothing to save, else at its save's end); a deferred job (DWQ) is
   not in WQ, so the completion handler never starts it before its deferral ends; at a
   completion's time, the jobs whose deferral ends then compete in the handler as that time's
   arrivals do (reading 4), their J_r back among the running jobs first.
"""

from __future__ import annotations

from dataclasses import dataclass

PENDING, WAITING, LOADING, TRAINING, SAVING, LOST, DONE = (
    "pending",
    "waiting",
    "loading",
    "training",
    "saving",
    "lost",  # preempted while loading with preempt_loading="finish": the load runs on, is lost
    "done",
)
RUNNING = (LOADING, TRAINING)
RELEASING = (SAVING, LOST)  # holds GPUs that will be free at `until`

POLICIES = ("fifo", "sjf", "srtf", "srtf-periodic", "lazer")


@dataclass(frozen=True)
class JobSpec:
    """One job: name, arrival, work (s at rate 1), load ℓ, save p, GPUs g (all integers)."""

    name: object
    arrival: int
    work: int
    load: int = 0
    save: int = 0
    gpus: int = 1


@dataclass
class JobResult:
    """What the reference reports per job (the engine's ``jobs_frame`` columns in brackets)."""

    W: int  # waiting
    L: int  # loading_time (futile loads included)
    T: int  # training_time
    P: int  # saving_time
    completion: int  # completion
    n_preemptions: int  # n_preemptions
    n_futile: int  # n_futile
    futile: int  # futile_time
    first_start: int  # first_start


class _Job:
    def __init__(self, spec: JobSpec, index: int):
        self.spec = spec
        self.name = spec.name
        self.index = index
        self.arrival, self.work, self.load, self.save, self.gpus = (
            spec.arrival,
            spec.work,
            spec.load,
            spec.save,
            spec.gpus,
        )
        self.phase = PENDING
        self.rem = spec.work
        self.until = None  # end of the current load / save / lost load
        self.started = None  # time of the last start
        self.load_end = None  # time the last load ended (training began)
        self.W = self.L = self.T = self.P = 0
        self.futile = self.n_futile = self.n_preempt = 0
        self.completion = None
        self.first_start = None

    def key(self):
        """R4: (remaining work, arrival, input position); lower is better."""
        return (self.rem, self.arrival, self.index)

    def __repr__(self):  # pragma: no cover - debugging aid
        return f"{self.name}:{self.phase}:rem={self.rem}"


class ReferenceSim:
    """Run one workload under one policy; :meth:`run` returns ``{name: JobResult}``."""

    def __init__(
        self,
        jobs,
        gpus: int,
        policy: str,
        *,
        reserve: str = "best",
        preempt_loading: str = "abort",
        period: int | None = None,
        deferral: int = 0,
        backfill: bool = True,
        lazer_claim: str = "demand",
        max_time: int | None = None,
    ):
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}; got {policy!r}")
        if reserve not in ("best", "preemptor"):
            raise ValueError(f"reserve must be 'best' or 'preemptor'; got {reserve!r}")
        if preempt_loading not in ("abort", "finish"):
            raise ValueError(f"preempt_loading must be 'abort' or 'finish'; got {preempt_loading!r}")
        if policy == "srtf-periodic" and not (isinstance(period, int) and period > 0):
            raise ValueError(f"srtf-periodic needs an integer period > 0; got {period!r}")
        specs = [s if isinstance(s, JobSpec) else JobSpec(*s) for s in jobs]
        for s in specs:
            for field in ("arrival", "work", "load", "save", "gpus"):
                v = getattr(s, field)
                if not isinstance(v, int) or v < 0 or (field in ("work", "gpus") and v < 1):
                    raise ValueError(f"job {s.name!r}: {field} must be a non-negative integer; got {v!r}")
            if s.gpus > gpus:
                raise ValueError(f"job {s.name!r} needs {s.gpus} GPUs; the cluster has {gpus}")
        self.jobs = [_Job(s, i) for i, s in enumerate(specs)]
        self.n_gpus = gpus
        self.policy = policy
        self.reserve = reserve
        self.abort = preempt_loading == "abort"
        self.period = period
        self.deferral = deferral
        self.backfill = backfill
        if lazer_claim not in ("all", "demand"):
            raise ValueError(f"lazer_claim must be 'all' or 'demand'; got {lazer_claim!r}")
        self.lazer_claim = lazer_claim
        horizon = max((s.arrival for s in specs), default=0) + sum((s.work + 1) * (s.load + s.save + 1) for s in specs)
        self.max_time = max_time if max_time is not None else 20 * horizon + 10 * (period or 0) + 10 * deferral + 100
        self.holder: list[_Job | None] = [None] * gpus  # job holding each GPU
        self.claim: list[_Job | None] = [None] * gpus  # waiting job each GPU is claimed for (R6)
        # Lazer state
        self.wq: set[_Job] = set()
        self.deferred: list[tuple[int, int, _Job, list[_Job]]] = []  # (end, seq, j_new, J_r)
        self.drq: set[_Job] = set()
        self.dwq: set[_Job] = set()
        self.pending: list[_Job] = []  # preemptors waiting for their reserved GPUs
        self._seq = 0
        self.trace: list[tuple[int, str, object]] = []  # (time, what, job name): for debugging
        self.flags: set[str] = set()  # which rules mattered (to group differences by cause)

    # ------------------------------------------------------------------ GPU views
    def _free(self):
        return [g for g in range(self.n_gpus) if self.holder[g] is None]

    def _releasing(self):
        """GPUs held by saving jobs or lost loads, soonest free first (READING 1)."""
        gs = [g for g in range(self.n_gpus) if self.holder[g] is not None and self.holder[g].phase in RELEASING]
        return sorted(gs, key=lambda g: (self.holder[g].until, g))

    def _available(self, c):
        """R6: free GPUs not claimed by another job, c's own claimed ones first."""
        free = self._free()
        own = [g for g in free if self.claim[g] is c]
        return own + [g for g in free if self.claim[g] is None]

    def _soon(self, c):
        """R6: available GPUs plus unclaimed GPUs being saved (or whose load is being lost)."""
        return self._available(c) + [g for g in self._releasing() if self.claim[g] is None]

    def _victim_gpu_order(self, g):
        """READING 1: a preemptor claims its victims' GPUs still being saved first (soonest end
        first), then those already free."""
        h = self.holder[g]
        return (0, h.until, g) if h is not None else (1, 0, g)

    def _has_claim(self, c):
        return any(x is c for x in self.claim)

    def _drop_claims(self, c):
        for g in range(self.n_gpus):
            if self.claim[g] is c:
                self.claim[g] = None

    # ------------------------------------------------------------------ actions
    def _start(self, c, gpus, t):
        assert c.phase == WAITING and len(gpus) == c.gpus
        for g in gpus:
            assert self.holder[g] is None and self.claim[g] in (None, c)
            self.holder[g] = c
        self._drop_claims(c)  # R8: its claim ends
        c.started = t
        self.trace.append((t, "start", c.name))
        if c.first_start is None:
            c.first_start = t
        if c.load > 0:
            c.phase, c.until = LOADING, t + c.load
        else:
            c.phase, c.until, c.load_end = TRAINING, None, t

    def _release(self, j):
        for g in range(self.n_gpus):
            if self.holder[g] is j:
                self.holder[g] = None

    def _preempt(self, v, t):
        """R2. Returns True if the GPUs are free at once (an event at this time, R3)."""
        assert v.phase in RUNNING and v.started != t
        v.n_preempt += 1
        self.trace.append((t, f"preempt ({v.phase})", v.name))
        if v.phase == TRAINING and v.load_end < t:  # trained since its last load: pause and save
            if v.save > 0:
                v.phase, v.until = SAVING, t + v.save
                return False
            self._release(v)
            v.phase, v.until = WAITING, None
            return True
        v.n_futile += 1
        if v.phase == TRAINING:  # preempted in the batch its load ended: the whole load is lost
            v.futile += v.load
        elif self.abort:  # loading, abort: the load so far is lost
            v.futile += t - v.started
        else:  # loading, finish: the load runs to its end, then the GPUs are free (READING 3)
            v.futile += v.load
            v.phase = LOST
            return False
        self._release(v)
        v.phase, v.until = WAITING, None
        return True

    # ------------------------------------------------------------------ time
    def _advance(self):
        """Account the step [t - 1, t) to every job by the phase it had."""
        for j in self.jobs:
            if j.phase == WAITING:
                j.W += 1
            elif j.phase in (LOADING, LOST):
                j.L += 1
            elif j.phase == TRAINING:
                j.T += 1
                j.rem -= 1
            elif j.phase == SAVING:
                j.P += 1

    def _events(self, t):
        """Apply the events of time t (R3 order); return (any event, completions, arrivals)."""
        completions, arrivals, any_event = [], [], False
        for j in self.jobs:
            if j.phase == TRAINING and j.rem == 0:
                self._release(j)
                j.phase, j.completion = DONE, t
                self.trace.append((t, "done", j.name))
                completions.append(j)
        for j in self.jobs:
            if j.phase in RELEASING and j.until == t:  # save end / end of a lost load
                self._release(j)  # claims on these GPUs stay (R6)
                self.trace.append((t, f"{j.phase} ends", j.name))
                j.phase, j.until = WAITING, None
                any_event = True
                if self.policy == "lazer":
                    self.wq.add(j)
        for j in self.jobs:
            if j.phase == LOADING and j.until == t:
                j.phase, j.until, j.load_end = TRAINING, None, t
                self.trace.append((t, "load ends", j.name))
                any_event = True
        for j in self.jobs:
            if j.phase == PENDING and j.arrival == t:
                j.phase = WAITING
                arrivals.append(j)
        any_event = any_event or bool(completions) or bool(arrivals)
        return any_event, completions, arrivals

    def run(self):
        t = 0
        while True:
            if t > 0:
                self._advance()
            any_event, completions, arrivals = self._events(t)
            if all(j.phase == DONE for j in self.jobs):
                break
            if self.policy == "lazer":
                self._lazer(t, any_event, completions, arrivals)
            elif self.policy in ("fifo", "sjf"):
                if any_event:
                    self._nonpreemptive_round(t)
            elif self.policy == "srtf":
                if any_event:
                    self._rounds(t, may_preempt=True)
            else:  # srtf-periodic: the tick is a timer event, every period from the first arrival
                first = min(j.arrival for j in self.jobs)
                tick = t >= first and (t - first) % self.period == 0
                if tick:
                    self._rounds(t, may_preempt=True)
                elif any_event:
                    self._claims_only_round(t)
            t += 1
            if t > self.max_time:
                raise RuntimeError(f"reference simulation did not end by t={self.max_time}: {self.jobs}")
        return {
            j.name: JobResult(j.W, j.L, j.T, j.P, j.completion, j.n_preempt, j.n_futile, j.futile, j.first_start)
            for j in self.jobs
        }

    # ------------------------------------------------------------------ FIFO / SJF
    def _nonpreemptive_round(self, t):
        if self.policy == "fifo":
            order = sorted((j for j in self.jobs if j.phase == WAITING), key=lambda j: (j.arrival, j.index))
        else:
            order = sorted((j for j in self.jobs if j.phase == WAITING), key=lambda j: (j.work, j.arrival, j.index))
        for c in order:
            free = self._free()
            if len(free) >= c.gpus:
                self._start(c, free[: c.gpus], t)
            elif not self.backfill:
                break

    # ------------------------------------------------------------------ SRTF rounds (R4-R12)
    def _rounds(self, t, may_preempt):
        # R3: a round whose decisions free GPUs at once is followed by another round at t
        for i in range(10 * len(self.jobs) + 10):
            if i:
                self.flags.add("follow-up round (R3)")
            if not self._round(t, may_preempt):
                return
        raise RuntimeError(f"reference: endless follow-up rounds at t={t}")

    def _round(self, t, may_preempt):
        if self.reserve == "best":  # R7: drop every claim, remake them in key order
            self.claim = [None] * self.n_gpus
        considered: set[_Job] = set()
        immediate = False
        n_preemptors = 0
        while True:
            todo = [j for j in self.jobs if j.phase == WAITING and j not in considered]
            if not todo:
                break
            c = min(todo, key=_Job.key)
            considered.add(c)
            avail = self._available(c)
            if len(avail) >= c.gpus:  # R8
                self._start(c, avail[: c.gpus], t)
                continue
            if len(self._free()) >= c.gpus:
                self.flags.add("claimed GPUs kept from a worse job (R6)")
            if self._has_claim(c):  # R9 (only with reserve="preemptor")
                self.flags.add("R9 wait for own claim")
                continue
            soon = self._soon(c)
            if len(soon) >= c.gpus:  # R10: GPUs being saved first, then free ones
                self.flags.add("R10 claim of GPUs being saved")
                releasing = [g for g in soon if self.holder[g] is not None]
                free = [g for g in soon if self.holder[g] is None]
                for g in (releasing + free)[: c.gpus]:
                    self.claim[g] = c
                continue
            if may_preempt:  # R11
                elig = [r for r in self.jobs if r.phase in RUNNING and r.rem > c.rem and r.started != t]
                elig.sort(key=_Job.key, reverse=True)  # worst first
                victims, have = [], len(soon)
                for r in elig:
                    if have >= c.gpus:
                        break
                    victims.append(r)
                    have += r.gpus
                if have >= c.gpus:
                    n_preemptors += 1
                    if n_preemptors > 1:
                        self.flags.add("several preemptors in one round")
                    if soon:
                        self.flags.add("R11 with soon-available GPUs")
                    for r in sorted(victims, key=_Job.key):  # drop the ones not needed, best first
                        if have - r.gpus >= c.gpus:
                            victims.remove(r)
                            have -= r.gpus
                    vgpus = [g for g in range(self.n_gpus) if self.holder[g] in victims]
                    rs = {v.rem for v in victims}
                    if any(r.rem in rs for r in elig if r not in victims):
                        self.flags.add("tie among victims (R4)")
                    if any(v.phase == LOADING for v in victims):
                        self.flags.add("loading victim")
                    for v in victims:
                        immediate |= self._preempt(v, t)
                    # victims' GPUs first (being saved, soonest first, then free: READING 1),
                    # then unclaimed GPUs being saved, then free ones
                    vgpus.sort(key=self._victim_gpu_order)
                    rest = [g for g in self._releasing() if self.claim[g] is None and g not in vgpus]
                    rest += [g for g in self._available(c) if g not in vgpus]
                    take = (vgpus + rest)[: c.gpus]
                    assert len(take) == c.gpus
                    for g in take:
                        self.claim[g] = c
                    if all(self.holder[g] is None for g in take):
                        self._start(c, take, t)  # R8 at once
                    continue
            if not self.backfill:  # R12
                break
        return immediate

    def _claims_only_round(self, t):
        """Periodic SRTF between ticks: only a job holding a claim may start (R8)."""
        for c in sorted((j for j in self.jobs if j.phase == WAITING), key=_Job.key):
            if self._has_claim(c):
                avail = self._available(c)
                if len(avail) >= c.gpus:
                    self.flags.add("claimant starts between ticks")
                    self._start(c, avail[: c.gpus], t)

    # ------------------------------------------------------------------ Lazer (reading 4)
    def _lazer(self, t, any_event, completions, arrivals):
        # pending preemptors whose reserved GPUs are free start (READING 5)
        for c in list(self.pending):
            mine = [g for g in self._free() if self.claim[g] is c]
            if len(mine) >= c.gpus:
                self.pending.remove(c)
                self._start(c, mine[: c.gpus], t)
        # completion handler (Alg. 1 lines 11-17) over WQ, this time's arrivals and the jobs whose
        # deferral ends now (out of DWQ, their J_r out of DRQ; reading 4), SRTF order, backfill,
        # over the free GPUs not reserved for a pending preemptor
        handled = set()
        ending = sorted(d for d in self.deferred if d[0] == t)
        if completions:
            for _, _, jn, jr in ending:
                self.dwq.discard(jn)
                self.drq.difference_update(jr)
            for c in sorted(self.wq | set(arrivals) | {d[2] for d in ending}, key=_Job.key):
                free = [g for g in self._free() if self.claim[g] is None]
                if len(free) >= c.gpus:
                    if any(c is d[2] for d in ending):
                        self.flags.add("lazer: deferral ends in the completion handler")
                    self._start(c, free[: c.gpus], t)
                    self.wq.discard(c)
                    handled.add(c)
        # deferrals that end (Alg. 1 lines 8-10), in the order they were set, unless the handler
        # started their job
        for item in ending:
            _, _, jn, jr = item
            self.deferred.remove(item)
            self.dwq.discard(jn)
            self.drq.difference_update(jr)
            if jn.phase == WAITING:
                self._orchestrate(jn, t, may_defer=False)
        # the remaining arrivals, shortest first, through the orchestrator (Alg. 1 lines 1-5)
        for c in sorted((a for a in arrivals if a not in handled), key=_Job.key):
            self._orchestrate(c, t, may_defer=self.deferral > 0)

    def _orchestrate(self, c, t, may_defer):
        free = [g for g in self._free() if self.claim[g] is None]
        if len(free) >= c.gpus:  # fits the free GPUs: starts at once
            self._start(c, free[: c.gpus], t)
            return
        avail, jr = len(free), []  # Alg. 2, avail_gpus starting at the free count
        rq = [r for r in self.jobs if r.phase in RUNNING and r not in self.drq and r.started != t]
        for r in sorted(rq, key=_Job.key, reverse=True):
            if c.rem < r.rem and avail < c.gpus:
                jr.append(r)
                avail += r.gpus
        if avail < c.gpus:
            self.wq.add(c)
            return
        if any(r.rem in {v.rem for v in jr} for r in rq if r not in jr and c.rem < r.rem):
            self.flags.add("lazer: tie among victims")
        if any(v.gpus > 1 for v in jr) or c.gpus > 1:
            self.flags.add("lazer: multi-GPU preemption")
        if may_defer:
            self._seq += 1
            self.deferred.append((t + self.deferral, self._seq, c, jr))
            self.dwq.add(c)
            self.drq.update(jr)
            return
        vgpus = [g for g in range(self.n_gpus) if self.holder[g] in jr]
        for v in jr:
            self._preempt(v, t)
            if v.phase == WAITING:  # nothing to save: waits at once, in WQ
                self.wq.add(v)
        if self.lazer_claim == "all":  # READING 5: every GPU counted in avail_gpus
            take = free + vgpus
        else:  # "demand": as R11, the victims' GPUs first (READING 1), then free ones
            vgpus.sort(key=self._victim_gpu_order)
            take = (vgpus + free)[: c.gpus]
        for g in take:
            self.claim[g] = c
        self.pending.append(c)
        self.flags.add("lazer: preemptor reserves GPUs")
        mine = [g for g in self._free() if self.claim[g] is c]
        if len(mine) >= c.gpus:
            self.pending.remove(c)
            self._start(c, mine[: c.gpus], t)


def simulate(jobs, gpus, policy, **options):
    """Run the reference; ``jobs`` are :class:`JobSpec` or tuples (name, arrival, work, ℓ, p, g)."""
    return ReferenceSim(jobs, gpus, policy, **options).run()
