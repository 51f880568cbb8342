"""A_maxweight (Alg. 3), A_dual (Alg. 2) and A_online (Alg. 1) of paper 001.

* :func:`a_maxweight` - the primal-dual batch algorithm for (8): jobs in a fixed order (default
  arrival order; ``order="weight"`` by weight, descending; the paper is silent), each priced by the
  exact oracle (default) or by the printed Alg. 4/5 (6/7 for RAR, ``oracle="paper"``); scheduled
  iff u_j = w_j - cost > 0; prices updated by (11) with lambda = 2 T H R F + 1 (T the horizon by
  default, ``lam_T="tau"`` for the round's tau). delta starts at 0 (Alg. 3 line 1).
* :func:`a_online` - Alg. 1 with tau_0 = 1, tau_i = 2^(i-1): in round i the jobs that have arrived by
  tau_i and are not yet scheduled go to A_dual (Alg. 2: up to alpha calls of A_maxweight, the
  iota-th placed in [(iota - 1) tau_i, iota tau_i)), and the round's schedule runs from alpha tau_i.
  ``alpha="thm5"`` is Thm 5's alpha from w(J) (offline knowledge: flagged in the result);
  ``alpha="per_round"`` (default, as in Sec. 7) is alpha_i from w(J_i) with an early stop once every
  job of J_i is scheduled. A round's schedule starts at alpha_i tau_i, or after the last completion
  of the earlier rounds' jobs if that is later (with a fixed alpha this is always alpha tau_i, Alg. 1
  line 8; with per-round alpha_i it keeps the rounds in order without idling the windows that
  earlier rounds reserved but did not fill: ``formulations/elastic.md#pricing``, "A_online rounds").
  ``placement="compact"`` starts each round's schedule at max(tau_i, end of the previous round)
  instead (not the paper's; a variant to show what the offset costs).

  Two further readings of which alpha the paper's experiments ran (formulations/elastic.md, "A_online
  readings"): ``alpha="printed-log10"`` takes alpha_i from Thm 5's denominator as printed,
  1 + log log lambda - log(2 log lambda - 1), with every log in base 10 (:func:`alpha_printed`;
  the only formula reading that gives Sec. 5.3's "alpha close to 4"); its cap can fall below the
  A_maxweight calls a round needs (``info["rounds"][k]["capped"]``: jobs pushed to the next round).
  ``placement="realized"`` offsets round i by iota*_i tau_i, iota*_i the number of A_maxweight calls
  that placed jobs before J_i was all placed (Sec. 5.3's early stop): A_dual's schedule is at most
  iota*_i tau_i long (Lemma 2 (i)), so [iota*_i tau_i, ...) holds it, and iota*_i is known at tau_i.

Both are registered: ``elastic-online`` (a full schedule, sum w_j c_j) is a kind algorithm;
A_maxweight's objective is the scheduled weight of (8), so it is a plain function.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.registry import requires_kind
from optsched.core.result import Result, Status
from optsched.elastic.checks import evaluate_objective
from optsched.elastic.constants import KIND, OBJECTIVE
from optsched.elastic.model import ElasticInstance
from optsched.elastic.prices import Prices
from optsched.elastic.pricing_oracle import least_use_by_index, min_cost_by_index
from optsched.elastic.pricing_subroutines import paper_min_cost_by_index
from optsched.elastic.schedule import Assignment, ElasticSchedule
from optsched.exceptions import InvalidOptionError

#: The named readings of alpha (``a_online(alpha=...)``; an int >= 1 is a fixed alpha).
ALPHA_READINGS = ("per_round", "thm5", "printed-log10")
#: Where a round's schedule starts (``a_online(placement=...)``).
PLACEMENTS = ("paper", "compact", "realized")


def weight_bound_F(instance: ElasticInstance, tau: int | None = None) -> float:
    """F of the first assumption: max_j w_j / min_l sum_{t, h, r} f_jh^r(l) (the least total use of
    any schedule of j, by the exact oracle at unit prices), at least 1; ``instance.F`` if given."""
    if instance.F is not None:
        return float(instance.F)
    T = int(tau or instance.horizon)
    best = 1.0
    for j, job in enumerate(instance.jobs):
        least = least_use_by_index(instance, j, T)
        if least is not None and least > 0:
            best = max(best, job.weight / least)
    return best


def price_base(instance: ElasticInstance, *, T: int, F: float) -> float:
    """lambda = 2 T H R F + 1 of (11)."""
    return 2.0 * T * instance.H * instance.R * F + 1.0


def gamma_ratio(lam: float) -> float:
    """gamma = 2 log2 lambda, Thm 3's ratio (the paper's log is base 2, see the Thm 5 reading)."""
    return 2.0 * math.log2(lam)


def alpha_thm5(total_weight: float, w_min: float, lam: float) -> int:
    """alpha = floor((log w(J) - log w_min) / (log gamma - log(gamma - 1))) + 1, gamma = 2 log2 lambda."""
    g = gamma_ratio(lam)
    if g <= 1:
        return 1
    return int(math.floor((math.log2(total_weight) - math.log2(w_min)) / (math.log2(g) - math.log2(g - 1)))) + 1


def alpha_printed(total_weight: float, w_min: float, lam: float, *, log=math.log10) -> int:
    """alpha = floor(log(w(J) / w_min) / (1 + log log lambda - log(2 log lambda - 1))) + 1, Thm 5's
    denominator as printed, every log in the base of ``log`` (default base 10); 1 where the printed
    expression is undefined or not positive (2 log lambda <= 1, i.e. lambda <= sqrt(10) in base 10).

    With lambda = 2 T H R F + 1 = 135,001 (Sec. 7: T = 150, H = 150, R = 3; F = 1) the denominator is
    1 + log10(5.130) - log10(9.261) = 0.743, so a round of 20 typical jobs (w(J)/w_min = 260) gets
    alpha = floor(2.415 / 0.743) + 1 = 4, "close to 4" (Sec. 5.3), and one job (13) gets 2.

    >>> alpha_printed(260.0, 1.0, 135001.0), alpha_printed(13.0, 1.0, 135001.0)
    (4, 2)
    """
    ll = log(lam)
    if not (ll > 0 and 2 * ll - 1 > 0):
        return 1
    den = 1 + log(ll) - log(2 * ll - 1)
    if not den > 0:
        return 1
    return int(math.floor(log(total_weight / w_min) / den)) + 1


@dataclass
class MaxWeightRun:
    """One run of A_maxweight: chosen schedules (start relative to the round), u_j, final prices."""

    tau: int
    lam: float
    chosen: dict[int, Any] = field(default_factory=dict)  # job index -> Priced
    utility: dict[int, float] = field(default_factory=dict)
    prices: Prices | None = None

    weights: dict[int, float] = field(default_factory=dict)  # w_j by job index

    @property
    def weight(self) -> float:
        return float(sum(self.weights.get(j, 0.0) for j in self.chosen))


def a_maxweight(
    instance: ElasticInstance,
    jobs: list[int] | None = None,
    *,
    tau: int,
    order: str = "arrival",
    oracle: str = "exact",
    lam: float | None = None,
    F: float | None = None,
    lam_T: str = "horizon",
) -> MaxWeightRun:
    """Alg. 3 on the job indices ``jobs`` (default all) with deadline ``tau`` (see the module doc).

    Returns a :class:`MaxWeightRun` whose ``chosen[j]`` is the priced schedule of job index j (start
    in [0, tau - d]), ``utility[j]`` = u_j at its turn, ``prices`` the final beta and delta.

    Guarantee
    ---------
    Thm 3 claims weight >= OPT(8) / (2 log lambda); :func:`optsched.elastic.bounds.certificate`
    checks it per run with the dual (9).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> run = a_maxweight(toy_instance(), tau=16)
    >>> sorted(run.chosen), run.weight  # job 1 would cost more than its weight 1 at the raised prices
    ([0], 1.0)
    """
    jobs = list(range(instance.n_jobs)) if jobs is None else list(jobs)
    if order == "arrival":
        jobs.sort(key=lambda j: (instance.jobs[j].arrival, j))
    elif order == "weight":
        jobs.sort(key=lambda j: (-instance.jobs[j].weight, j))
    else:
        raise InvalidOptionError(f"The 'order' option must be 'arrival' or 'weight'; got {order!r}.")
    if oracle not in ("exact", "paper"):
        raise InvalidOptionError(f"The 'oracle' option must be 'exact' or 'paper'; got {oracle!r}.")
    if lam_T not in ("horizon", "tau"):
        raise InvalidOptionError(f"The 'lam_T' option must be 'horizon' or 'tau'; got {lam_T!r}.")
    if lam is None:
        F = weight_bound_F(instance) if F is None else F
        lam = price_base(instance, T=instance.horizon if lam_T == "horizon" else tau, F=F)
    prices = Prices.zero(instance, tau, incremental=True)  # changed only by allocate below
    run = MaxWeightRun(
        tau=tau, lam=lam, prices=prices, weights={j: instance.jobs[j].weight for j in range(instance.n_jobs)}
    )
    f = min_cost_by_index if oracle == "exact" else paper_min_cost_by_index
    for j in jobs:
        c = f(instance, j, prices)
        if c is None:
            continue
        u = instance.jobs[j].weight - c.cost
        run.utility[j] = u
        if u > 0:
            run.chosen[j] = c
            prices.allocate(instance, j, c.config, c.start, lam=lam)
    return run


@requires_kind(KIND)
def a_online(
    instance: ElasticInstance,
    *,
    alpha: str | int = "per_round",
    placement: str = "paper",
    order: str = "arrival",
    oracle: str = "exact",
    lam_T: str = "horizon",
    max_rounds: int = 40,
    seed: Any = None,
) -> Result:
    """A_online (Alg. 1) with A_dual (Alg. 2) and A_maxweight (Alg. 3): the paper's online algorithm.

    Parameters
    ----------
    alpha : "per_round" (default), "thm5", "printed-log10" or an int
        alpha_i from w(J_i) with early stop (Sec. 7), Thm 5's alpha from w(J) (needs every job in
        advance: ``info["alpha_offline"]`` is True), alpha_i from w(J_i) by Thm 5's printed
        expression in base 10 (:func:`alpha_printed`), or a fixed number of A_maxweight calls per round.
    placement : "paper" (default), "compact" or "realized"
        Round i's schedule starts at max(alpha_i tau_i, the last completion of the earlier rounds'
        jobs), at max(tau_i, that completion), or at max(iota*_i tau_i, that completion) with iota*_i
        the A_maxweight calls that placed jobs (Sec. 5.3's early stop).
    order, oracle, lam_T
        Passed to :func:`a_maxweight`.

    Returns
    -------
    Result
        The schedule, sum w_j c_j, and ``info``: per round its alpha_i (the cap on A_maxweight calls),
        ``iota_star`` (the calls that placed jobs), ``offset`` (start / tau_i) and ``capped`` (jobs of
        J_i left when the cap was reached while calls still placed jobs); rounds used, idle slots
        inside the run windows, jobs completing after T (the schedule then fails the ``horizon``
        check), lambda.

    Guarantee
    ---------
    Thm 5 claims sum w_j c_j <= 4 alpha OPT(2) with Thm 5's alpha (``alpha="thm5"``).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> r = a_online(toy_instance())
    >>> r.objective, r.info["late_jobs"]
    (516.0, [])
    """
    if placement not in PLACEMENTS:
        raise InvalidOptionError(f"The 'placement' option must be one of {list(PLACEMENTS)}; got {placement!r}.")
    if not (
        (isinstance(alpha, str) and alpha in ALPHA_READINGS)
        or (isinstance(alpha, int) and not isinstance(alpha, bool) and alpha >= 1)
    ):
        raise InvalidOptionError(
            f"The 'alpha' option must be one of {list(ALPHA_READINGS)} or an int >= 1; got {alpha!r}."
        )
    t0 = time.perf_counter()
    F = weight_bound_F(instance)
    lam_h = price_base(instance, T=instance.horizon, F=F)
    w_min = min(j.weight for j in instance.jobs)
    w_all = sum(j.weight for j in instance.jobs)
    left = set(range(instance.n_jobs))
    out: dict[Any, Assignment] = {}
    rounds = []
    prev_end = 0
    i = 0
    while left and i < max_rounds:
        i += 1
        tau = 1 if i == 1 else 2 ** (i - 1)
        J_i = sorted(j for j in left if instance.jobs[j].arrival <= tau)
        if not J_i:
            continue
        lam = lam_h if lam_T == "horizon" else price_base(instance, T=tau, F=F)
        if alpha == "thm5":
            a_i = alpha_thm5(w_all, w_min, lam_h)
        elif alpha == "per_round":
            a_i = alpha_thm5(sum(instance.jobs[j].weight for j in J_i), w_min, lam)
        elif alpha == "printed-log10":
            a_i = alpha_printed(sum(instance.jobs[j].weight for j in J_i), w_min, lam)
        else:
            a_i = int(alpha)
        todo = list(J_i)
        used = 0
        iota_star = 0  # calls that placed a job
        capped = False
        local: dict[int, tuple[int, Any]] = {}
        for iota in range(1, a_i + 1):
            if not todo:
                break
            run = a_maxweight(instance, todo, tau=tau, order=order, oracle=oracle, lam=lam)
            used = iota
            if not run.chosen:
                # A_maxweight starts from zero prices: with the same jobs left, every later call of
                # this round returns the same empty set, so Alg. 2 would run them all for nothing.
                used = a_i
                break
            iota_star = iota
            for j, c in run.chosen.items():
                local[j] = ((iota - 1) * tau + c.start, c)
            todo = [j for j in todo if j not in run.chosen]
        if todo and iota_star == a_i:  # the cap stopped the round: would one more call have placed a job?
            capped = bool(a_maxweight(instance, todo, tau=tau, order=order, oracle=oracle, lam=lam).chosen)
        offset = {"paper": a_i, "compact": 1, "realized": max(iota_star, 1)}[placement]
        start = max(offset * tau, prev_end)
        for j, (rel, c) in local.items():
            a = c.config.assignment(start + rel)
            out[instance.jobs[j].id] = a
            # The next round starts after the jobs placed so far, not after this round's reserved
            # window alpha_i tau_i: a per-round alpha_i may reserve 45 x 4 slots for an 8-slot schedule,
            # and waiting for the window pushed a later round past T (the demo's elastic-random-3j-2h).
            prev_end = max(prev_end, int(a.completion))
            left.discard(j)
        window = used * tau
        busy = np.zeros(max(window, 1), dtype=bool)
        for rel, c in local.values():
            busy[rel : rel + c.config.d] = True
        rounds.append(
            {
                "round": i,
                "tau": tau,
                "jobs": len(J_i),
                "scheduled": len(local),
                "alpha": a_i,
                "maxweight_calls": used,
                "iota_star": iota_star,
                "offset": offset,
                "capped": capped,
                "start": start,
                "idle_slots": int(window - busy[:window].sum()),
                "J_i": [instance.jobs[j].id for j in J_i],
                "J_i_s": [instance.jobs[j].id for j in local],
                "weight": float(sum(instance.jobs[j].weight for j in local)),
                "length": int(max((rel + c.config.d for rel, c in local.values()), default=0)),
            }
        )
    sched = ElasticSchedule(out)
    late = [jid for jid, a in out.items() if a.completion > instance.horizon]
    info = {
        "alpha": alpha,
        "alpha_offline": alpha == "thm5",
        "lambda": lam_h,
        "F": F,
        "rounds": rounds,
        "rounds_used": len(rounds),
        "rounds_capped": sum(1 for r in rounds if r["capped"]),
        "late_jobs": late,
        "unscheduled": [instance.jobs[j].id for j in left],
        "placement": placement,
        "oracle": oracle,
        "order": order,
    }
    obj = evaluate_objective(instance, sched, OBJECTIVE) if not left else None
    return Result(
        algorithm=f"{KIND}-online",
        instance=instance.name,
        objective=obj,
        objective_name=OBJECTIVE,
        schedule=sched,
        status=Status.HEURISTIC,
        runtime=time.perf_counter() - t0,
        info=info,
    )
