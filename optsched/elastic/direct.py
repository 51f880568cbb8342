"""(2) / (15) and (7) / (16) directly in Pyomo: the time-indexed programs as printed, each nonlinear
constraint linearized and labelled (tiny sizes only).

* :func:`build_direct`: ``problem="2"`` is (2) (PS) / (15) (RAR), minimum sum_j w_j c_j;
  ``problem="7"`` is (7) (PS) / (16) (RAR), the maximum weight of jobs completing by ``tau``, before
  its reformulation into (8): no Gamma_j, no column, every per-job decision a variable.
* :func:`solve_direct` and :func:`solve_direct_maxweight`, both through
  :func:`optsched.solvers.exact.run_exact` (not registered algorithms: the common suite's toy, T = 400
  slots, is beyond this model, no incumbent in 60 s); :func:`decode_direct` reads an
  :class:`~optsched.elastic.schedule.ElasticSchedule` that the verifier rechecks.

Variables per job j: start ``start[j, t]`` = x_jt (2n) and completion ``completion[j, c]`` one-hot
(c = t + d_j in 1..T), ``d[j]`` (2m) = sum c completion - sum t start, type choices
``worker_type[j, m]`` and ``ps_type[j, p]``, ``y[j, h, m]`` (2k), ``s[j, h, p]`` (2l), ``q[j]`` (2o),
the worker count one-hot ``worker_count_is[j, N]``, ``server_used[j, h]``, ``ps_server[j, h]`` and
``running_workers[j, h, m, t]`` / ``running_ps[j, h, p, t]`` = y (s) while j runs in slot t (the
products in (2h), McCormick with the variables' bounds). Slot t runs j iff
sum_{t' <= t} start - sum_{c <= t} completion = 1. Labels and the linearizations:
``formulations/elastic.md#lp`` (section "LP, dual and column generation; direct models").

>>> from optsched.elastic.generate import random_instance
>>> inst = random_instance(2, n_servers=2, seed=1, horizon=8)
>>> from optsched.elastic.exact import solve_exact
>>> r = solve_direct(inst)
>>> r.status.value, r.objective == solve_exact(inst).objective  # the Gamma_j model of (2)
('optimal', True)
"""

from __future__ import annotations

from typing import Any

from optsched.core.registry import check_kind, requires_kind
from optsched.core.result import Result
from optsched.elastic.cheap_bounds import max_weight_bound, min_sum_bound
from optsched.elastic.checks import evaluate_objective, violations
from optsched.elastic.constants import KIND, OBJECTIVE
from optsched.elastic.exact import greedy_schedule, late_result
from optsched.elastic.model import ElasticInstance
from optsched.elastic.schedule import Assignment, ElasticSchedule
from optsched.exceptions import InvalidOptionError
from optsched.solvers import SolveOptions, SolveResult, check_model_size
from optsched.solvers.exact import run_exact
from optsched.solvers.model import ExactModel

#: Default limit on variables + constraints of the direct models (they are for tiny instances).
DIRECT_MAX_SIZE = 60_000
PROBLEMS = ("2", "7")


def _horizon(instance: ElasticInstance, problem: str, tau: int | None) -> int:
    if problem not in PROBLEMS:
        raise InvalidOptionError(f"The 'problem' option must be one of {PROBLEMS}; got {problem!r}.")
    if problem == "2":
        if tau is not None:
            raise InvalidOptionError("The 'tau' option is for problem (7) only; (2) uses the instance horizon T.")
        return instance.horizon
    T = instance.horizon if tau is None else tau
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise InvalidOptionError(f"The 'tau' option must be an integer >= 1 (slots); got {tau!r}.")
    return int(T)


def estimate_direct_size(instance: ElasticInstance, *, problem: str = "2", tau: int | None = None) -> tuple[int, int]:
    """(variables, constraints) of :func:`build_direct`, from counts only."""
    T = _horizon(instance, problem, tau)
    H, M, R = instance.H, instance.M, instance.R
    P = instance.P if instance.is_ps else 0
    n_vars = n_cons = 0
    for job in instance.jobs:
        D = job.chunks
        n_vars += 2 * T + 2 + M + P + H * (M + P) + D + 2 * H + H * (M + P) * T
        n_cons += 16 + H * (M + P) + 4 * H + M * max(P, 1) * 2 * D + 3 * H * (M + P) * T + H * R
    n_cons += H * R * T
    return n_vars, n_cons


def build_direct(
    instance: ElasticInstance,
    *,
    problem: str = "2",
    tau: int | None = None,
    max_size: int | None = DIRECT_MAX_SIZE,
):
    """The time-indexed (2) / (15) (``problem="2"``) or (7) / (16) (``problem="7"``, deadline ``tau``,
    default T) as a Pyomo MILP; see the module doc. Refuses (``ModelTooLargeError``) when the
    estimated variables + constraints exceed ``max_size`` (default :data:`DIRECT_MAX_SIZE`)."""
    import pyomo.environ as pyo

    T = _horizon(instance, problem, tau)
    n_vars, n_cons = estimate_direct_size(instance, problem=problem, tau=tau)
    check_model_size(f"elastic ({problem}) direct time-indexed", n_vars, n_cons, max_size)
    H, M, R, J = instance.H, instance.M, instance.R, instance.n_jobs
    ps = instance.is_ps
    P = instance.P if ps else 0
    jobs = instance.jobs
    C = instance.C
    e, z = instance.e, instance.z
    bw = [t.bandwidth for t in instance.worker_types]
    BW = [t.bandwidth for t in instance.ps_types]

    m = pyo.ConcreteModel(name=f"elastic-direct({problem})[{instance.name}]")
    m.problem = problem
    m.tau = T
    m.J = pyo.RangeSet(0, J - 1)
    m.TS = pyo.RangeSet(0, T - 1)  # slots [t, t + 1)
    m.H = pyo.RangeSet(0, H - 1)
    m.M = pyo.RangeSet(0, M - 1)
    m.P = pyo.RangeSet(0, P - 1) if ps else pyo.Set(initialize=[])
    m.R = pyo.RangeSet(0, R - 1)
    m.JN = pyo.Set(initialize=[(j, n) for j in range(J) for n in range(1, jobs[j].chunks + 1)], dimen=2)
    m.JC = pyo.Set(initialize=[(j, c) for j in range(J) for c in range(1, T + 1)], dimen=2)

    def ymax(j, h, mm):
        return min(jobs[j].chunks, instance.fit_count(h, e[mm]))

    def smax(h, p):
        return instance.fit_count(h, z[p])

    m.start = pyo.Var(m.J, m.TS, domain=pyo.Binary)  # x_jt (2n)
    m.completion = pyo.Var(m.JC, domain=pyo.Binary)  # c_j = t + d_j, one-hot
    m.d = pyo.Var(m.J, domain=pyo.NonNegativeIntegers, bounds=(0, T))  # (2m)
    m.worker_type = pyo.Var(m.J, m.M, domain=pyo.Binary)
    m.y = pyo.Var(m.J, m.H, m.M, domain=pyo.NonNegativeIntegers, bounds=lambda m, j, h, mm: (0, ymax(j, h, mm)))  # (2k)
    m.q = pyo.Var(m.J, domain=pyo.Binary)  # (2o)
    m.worker_count_is = pyo.Var(m.JN, domain=pyo.Binary)
    m.server_used = pyo.Var(m.J, m.H, domain=pyo.Binary)
    if ps:
        m.ps_type = pyo.Var(m.J, m.P, domain=pyo.Binary)
        m.s = pyo.Var(m.J, m.H, m.P, domain=pyo.NonNegativeIntegers, bounds=lambda m, j, h, p: (0, smax(h, p)))  # (2l)
        m.ps_server = pyo.Var(m.J, m.H, domain=pyo.Binary)

    def sel(m, j):  # 1 iff j is scheduled: always for (2), sum_t x_jt for (7)
        return sum(m.start[j, t] for t in m.TS)

    def nworkers(m, j):
        return sum(m.y[j, h, mm] for h in m.H for mm in m.M)

    def use(m, j, h, r):
        u = sum(e[mm][r] * m.y[j, h, mm] for mm in m.M)
        if ps:
            u = u + sum(z[p][r] * m.s[j, h, p] for p in m.P)
        return u

    def on_server(m, j, h):
        return sum(m.y[j, h, mm] for mm in m.M) + (sum(m.s[j, h, p] for p in m.P) if ps else 0)

    def running(m, j, t):  # 1 iff S_j <= t < S_j + d_j
        return sum(m.start[j, k] for k in range(t + 1)) - sum(m.completion[j, c] for c in range(1, t + 1))

    # (2a) / (7a)
    if problem == "2":

        @m.Constraint(m.J)
        def one_start(m, j):  # (2a)
            return sel(m, j) == 1

        @m.Constraint(m.J)
        def no_start_before_arrival(m, j):  # (2j)
            a = jobs[j].arrival
            if a == 0:
                return pyo.Constraint.Skip
            return sum(m.start[j, t] for t in range(min(a, T))) == 0
    else:

        @m.Constraint(m.J)
        def at_most_one_start(m, j):  # (7a)
            return sel(m, j) <= 1

        @m.Constraint(m.J)
        def deadline(m, j):  # (7b): sum_t x_jt (t + d_j) = sum_c c completion_jc <= tau
            return sum(c * m.completion[j, c] for c in range(1, T + 1)) <= T

    @m.Constraint(m.J)
    def completion_link(m, j):  # one completion iff one start
        return sum(m.completion[j, c] for c in range(1, T + 1)) == sel(m, j)

    @m.Constraint(m.J)
    def duration(m, j):  # (2m): d_j = c_j - t_j
        return m.d[j] == sum(c * m.completion[j, c] for c in range(1, T + 1)) - sum(t * m.start[j, t] for t in m.TS)

    @m.Constraint(m.J)
    def positive_duration(m, j):  # d_j >= 1 for a scheduled job (completion after start)
        return m.d[j] >= sel(m, j)

    # (2b): one worker type, the others' y are 0
    @m.Constraint(m.J)
    def one_worker_type(m, j):
        return sum(m.worker_type[j, mm] for mm in m.M) == sel(m, j)

    @m.Constraint(m.J, m.H, m.M)
    def worker_type_link(m, j, h, mm):
        return m.y[j, h, mm] <= ymax(j, h, mm) * m.worker_type[j, mm]

    # N = sum y as a one-hot over 1..D_j ((2g) is its range)
    @m.Constraint(m.J)
    def one_worker_count(m, j):
        return sum(m.worker_count_is[j, n] for n in range(1, jobs[j].chunks + 1)) == sel(m, j)

    @m.Constraint(m.J)
    def worker_count(m, j):
        return nworkers(m, j) == sum(n * m.worker_count_is[j, n] for n in range(1, jobs[j].chunks + 1))

    @m.Constraint(m.J)
    def max_workers(m, j):  # (2g)
        return nworkers(m, j) <= jobs[j].chunks

    if ps:

        @m.Constraint(m.J)
        def one_ps_type(m, j):  # (2c)
            return sum(m.ps_type[j, p] for p in m.P) == sel(m, j)

        @m.Constraint(m.J, m.H, m.P)
        def ps_type_link(m, j, h, p):  # (2c)
            return m.s[j, h, p] <= smax(h, p) * m.ps_type[j, p]

        @m.Constraint(m.J)
        def at_least_one_ps(m, j):  # (2e)
            return sum(m.s[j, h, p] for h in m.H for p in m.P) >= sel(m, j)

        @m.Constraint(m.J, m.H)
        def ps_server_link(m, j, h):  # ps_server = 1 if h holds a PS of j
            return sum(m.s[j, h, p] for p in m.P) <= sum(smax(h, p) for p in m.P) * m.ps_server[j, h]

        @m.Constraint(m.J, m.H)
        def ps_bandwidth(m, j, h):  # (2i), enforced where ps_server = 1 (big-M: D_j max b_m)
            big = jobs[j].chunks * max(bw)
            outside = sum(bw[mm] * m.y[j, hh, mm] for hh in m.H if hh != h for mm in m.M)
            return outside - sum(BW[p] * m.s[j, h, p] for p in m.P) <= big * (1 - m.ps_server[j, h])

    # (2d) / (15a): q_j = 1 iff one server holds every worker and PS of j
    @m.Constraint(m.J, m.H)
    def server_used_upper(m, j, h):
        cap = sum(ymax(j, h, mm) for mm in m.M) + (sum(smax(h, p) for p in m.P) if ps else 0)
        return on_server(m, j, h) <= max(cap, 1) * m.server_used[j, h]

    @m.Constraint(m.J, m.H)
    def server_used_lower(m, j, h):
        return m.server_used[j, h] <= on_server(m, j, h)

    @m.Constraint(m.J)
    def one_server_if_q(m, j):  # (2d) q = 1 => one server
        return sum(m.server_used[j, h] for h in m.H) <= 1 + (H - 1) * (1 - m.q[j])

    @m.Constraint(m.J)
    def two_servers_unless_q(m, j):  # (2d) q = 0 => at least two servers (a scheduled job)
        return sum(m.server_used[j, h] for h in m.H) >= 2 * sel(m, j) - m.q[j]

    @m.Constraint(m.J)
    def q_only_if_scheduled(m, j):
        return m.q[j] <= sel(m, j)

    # (2f): d_j >= d_q(N) for the chosen m, p, q, N (d_j N rho >= E D K with d_j integer)
    keys = []
    for j in range(J):
        for mm in range(M):
            for p in range(P) if ps else [None]:
                for qq in (0, 1):
                    for n in range(1, jobs[j].chunks + 1):
                        keys.append((j, mm, -1 if p is None else p, qq, n))
    m.F_KEYS = pyo.Set(initialize=keys, dimen=5)

    @m.Constraint(m.F_KEYS)
    def processing_capacity(m, j, mm, p, qq, n):  # (2f), active iff all literals hold
        dur = instance.duration(j, mm, None if p < 0 else p, qq, n)
        lits = m.worker_type[j, mm] + m.worker_count_is[j, n] + (m.q[j] if qq else 1 - m.q[j])
        k = 3
        if p >= 0:
            lits = lits + m.ps_type[j, p]
            k = 4
        return m.d[j] >= dur * (lits - (k - 1))

    # a valid inequality implied by (2f) (it tightens the LP relaxation, whose rows above let d_j go
    # to 0 at fractional choices): d_j >= the least d_q(N) over m, p, q for the chosen N
    def least_d(j, n):
        return min(
            instance.duration(j, mm, p, qq, n) for mm in range(M) for p in (range(P) if ps else [None]) for qq in (0, 1)
        )

    @m.Constraint(m.J)
    def least_duration(m, j):  # implied by (2f): d_j >= sum_N min_{m,p,q} d_q(N) [N chosen]
        return m.d[j] >= sum(min(least_d(j, n), T + 1) * m.worker_count_is[j, n] for n in range(1, jobs[j].chunks + 1))

    # (2h) / (15b): the product x_jt' y_jhm (and x s) linearized per worker / PS type (McCormick with
    # the variables' own bounds): running_workers = y when j runs in slot t, else 0
    m.running_workers = pyo.Var(m.J, m.H, m.M, m.TS, domain=pyo.NonNegativeReals)

    @m.Constraint(m.J, m.H, m.M, m.TS)
    def running_workers_upper(m, j, h, mm, t):  # <= ymax * running
        return m.running_workers[j, h, mm, t] <= ymax(j, h, mm) * running(m, j, t)

    @m.Constraint(m.J, m.H, m.M, m.TS)
    def running_workers_lower(m, j, h, mm, t):  # >= y - ymax (1 - running)
        return m.running_workers[j, h, mm, t] >= m.y[j, h, mm] - ymax(j, h, mm) * (1 - running(m, j, t))

    @m.Constraint(m.J, m.H, m.M, m.TS)
    def running_workers_below_y(m, j, h, mm, t):  # <= y
        return m.running_workers[j, h, mm, t] <= m.y[j, h, mm]

    if ps:
        m.running_ps = pyo.Var(m.J, m.H, m.P, m.TS, domain=pyo.NonNegativeReals)

        @m.Constraint(m.J, m.H, m.P, m.TS)
        def running_ps_upper(m, j, h, p, t):
            return m.running_ps[j, h, p, t] <= smax(h, p) * running(m, j, t)

        @m.Constraint(m.J, m.H, m.P, m.TS)
        def running_ps_lower(m, j, h, p, t):
            return m.running_ps[j, h, p, t] >= m.s[j, h, p] - smax(h, p) * (1 - running(m, j, t))

        @m.Constraint(m.J, m.H, m.P, m.TS)
        def running_ps_below_s(m, j, h, p, t):
            return m.running_ps[j, h, p, t] <= m.s[j, h, p]

    @m.Constraint(m.H, m.R, m.TS)
    def capacity(m, h, r, t):  # (2h) / (15b)
        tot = sum(e[mm][r] * m.running_workers[j, h, mm, t] for j in m.J for mm in m.M)
        if ps:
            tot = tot + sum(z[p][r] * m.running_ps[j, h, p, t] for j in m.J for p in m.P)
        return tot <= C[h][r]

    @m.Constraint(m.J, m.H, m.R)
    def fits_server(m, j, h, r):  # use of j on h <= C_h^r (implied by (2h) in the slot where j runs)
        return use(m, j, h, r) <= C[h][r]

    if problem == "2":
        m.weighted_completion = pyo.Objective(  # (2): sum_j w_j sum_t x_jt (t + d_j) = sum_j w_j c_j
            expr=sum(jobs[j].weight * c * m.completion[j, c] for j, c in m.JC), sense=pyo.minimize
        )
    else:
        m.scheduled_weight = pyo.Objective(  # (7)
            expr=sum(jobs[j].weight * m.start[j, t] for j in m.J for t in m.TS), sense=pyo.maximize
        )
    return m


def decode_direct(instance: ElasticInstance, model: Any) -> ElasticSchedule:
    """The schedule of a solved :func:`build_direct` model (jobs not scheduled in (7) are absent)."""

    def v(x) -> float:
        return float(x.value or 0.0)

    out = {}
    for j, job in enumerate(instance.jobs):
        starts = [t for t in model.TS if v(model.start[j, t]) > 0.5]
        if not starts:
            continue
        mm = max(model.M, key=lambda k: v(model.worker_type[j, k]))
        p = max(model.P, key=lambda k: v(model.ps_type[j, k])) if instance.is_ps else None
        workers = {h: round(v(model.y[j, h, mm])) for h in model.H if round(v(model.y[j, h, mm])) > 0}
        psd = (
            {h: round(v(model.s[j, h, p])) for h in model.H if round(v(model.s[j, h, p])) > 0} if p is not None else {}
        )
        out[job.id] = Assignment(
            start=int(starts[0]),
            d=round(v(model.d[j])),
            m=int(mm),
            p=None if p is None else int(p),
            q=round(v(model.q[j])),
            workers=workers,
            ps=psd,
        )
    return ElasticSchedule(out)


def _options(instance: ElasticInstance, options: SolveOptions | None) -> SolveOptions:
    options = options or SolveOptions(time_limit=60.0, threads=1)
    if all(float(j.weight).is_integer() for j in instance.jobs) and options.mip_abs_gap is None:
        options = options.replace(mip_abs_gap=0.999)  # integer objective: a gap below 1 is closed
    return options.started()  # the time limit bounds the whole call


def set_start(instance: ElasticInstance, model: Any, schedule: ElasticSchedule) -> None:
    """Set every variable of a :func:`build_direct` model to the values of a feasible ``schedule``
    (jobs absent from it are left out, (7)); HiGHS then gets it as a MIP start."""
    chosen = dict(schedule.items())
    for j, job in enumerate(instance.jobs):
        a = chosen.get(job.id)
        on = a is not None
        t0, t1 = (int(a.start), int(a.start + a.d)) if on else (-1, -1)
        for t in model.TS:
            model.start[j, t].value = 1.0 if t == t0 else 0.0
        for c in range(1, model.tau + 1):
            model.completion[j, c].value = 1.0 if c == t1 else 0.0
        model.d[j].value = float(t1 - t0) if on else 0.0
        model.q[j].value = float(a.q) if on else 0.0
        n = int(sum(a.workers.values())) if on else 0
        for k in range(1, job.chunks + 1):
            model.worker_count_is[j, k].value = 1.0 if k == n else 0.0
        for mm in model.M:
            model.worker_type[j, mm].value = 1.0 if on and a.m == mm else 0.0
        for p in model.P:
            model.ps_type[j, p].value = 1.0 if on and a.p == p else 0.0
        for h in model.H:
            ps_h = int(a.ps.get(h, 0)) if on else 0
            used = on and (a.workers.get(h, 0) > 0 or ps_h > 0)
            model.server_used[j, h].value = 1.0 if used else 0.0
            if instance.is_ps:
                model.ps_server[j, h].value = 1.0 if ps_h > 0 else 0.0
            for mm in model.M:
                y = float(a.workers.get(h, 0)) if on and a.m == mm else 0.0
                model.y[j, h, mm].value = y
                for t in model.TS:
                    model.running_workers[j, h, mm, t].value = y if t0 <= t < t1 else 0.0
            for p in model.P:
                sv = float(ps_h) if on and a.p == p else 0.0
                model.s[j, h, p].value = sv
                for t in model.TS:
                    model.running_ps[j, h, p, t].value = sv if t0 <= t < t1 else 0.0


def _build(problem: str, tau: int | None, max_size: int | None):
    def build(instance: ElasticInstance, backend: str, options: SolveOptions) -> ExactModel:
        model = build_direct(instance, problem=problem, tau=tau, max_size=max_size)
        integer = all(float(j.weight).is_integer() for j in instance.jobs)
        return ExactModel(
            model,
            None,
            step=1.0 if integer else None,
            info={"model": f"direct ({problem})"},
            warm_start=lambda sched: set_start(instance, model, sched),
        )

    return build


def _initial(instance: ElasticInstance, initial: Any, problem: str, T: int) -> ElasticSchedule | None:
    if not isinstance(initial, str):
        return initial
    if initial != "heuristic":
        raise InvalidOptionError(f"The 'initial' option must be 'heuristic', a schedule or None; got {initial!r}.")
    if problem == "2":
        return greedy_schedule(instance)
    return greedy_schedule(instance, order="weight", tau=T, arrivals=False, require_all=False)


def _decode(instance: ElasticInstance):
    def decode(em: ExactModel, sr: SolveResult) -> ElasticSchedule:
        return decode_direct(instance, em.model)

    return decode


@requires_kind(KIND)
def solve_direct(
    instance: ElasticInstance,
    *,
    backend: str = "highs",
    options: SolveOptions | None = None,
    seed: Any = None,
    write_model: str | None = None,
    max_size: int | None = DIRECT_MAX_SIZE,
    initial: Any = "heuristic",
) -> Result:
    """Exact minimum sum_j w_j c_j of (2) / (15) with the direct time-indexed Pyomo model (tiny sizes).

    Parameters
    ----------
    backend : str
        A Pyomo MILP solver name (default ``"highs"``).
    options : SolveOptions
        Default 60 s, one thread; ``mip_abs_gap = 0.999`` when every weight is an integer.
    max_size : int
        Refuse (``ModelTooLargeError``) above this many variables + constraints (estimated first).
    initial : "heuristic", ElasticSchedule or None
        MIP start (default :func:`~optsched.elastic.exact.greedy_schedule`; for (7) greedy by weight
        within ``tau``); an exact solve never returns a worse schedule than its start.

    Returns
    -------
    Result
        Schedule decoded from the model, objective recomputed by the verifier's evaluator.

    Guarantee
    ---------
    status OPTIMAL => objective = min of (2) / (15) over integer starts (nothing restricted).

    References
    ----------
    Zhou et al., (2), (15); formulations/elastic.md#lp.
    """
    late = late_result(instance, f"{KIND}-exact-direct[{backend}]")
    if late is not None:
        return late
    bound, which = min_sum_bound(instance)
    return run_exact(
        instance,
        build=_build("2", None, max_size),
        decode=_decode(instance),
        evaluate=lambda s: evaluate_objective(instance, s, OBJECTIVE),
        backend=backend,
        algorithm=f"{KIND}-exact-direct[{backend}]",
        objective_name=OBJECTIVE,
        options=_options(instance, options),
        seed=seed,
        write_model=write_model,
        sense="min",
        initial=_initial(instance, initial, "2", instance.horizon),
        check_initial=lambda s: violations(instance, s),
        own_backends=(),
        initial_bound=bound,
        bound_name=which,
    )


def solve_direct_maxweight(
    instance: ElasticInstance,
    *,
    tau: int | None = None,
    backend: str = "highs",
    options: SolveOptions | None = None,
    seed: Any = None,
    write_model: str | None = None,
    max_size: int | None = DIRECT_MAX_SIZE,
    initial: Any = "heuristic",
) -> Result:
    """Exact (7) / (16) with the direct Pyomo model: the largest total weight of jobs completing by
    ``tau`` (default T), arrivals ignored; jobs left out are absent from the schedule. Equal to (8)
    (:func:`optsched.elastic.exact.solve_maxweight`), tested.
    """
    check_kind(instance, KIND, "solve_direct_maxweight")
    T = _horizon(instance, "7", tau)
    bound, which = max_weight_bound(instance, T)
    return run_exact(
        instance,
        build=_build("7", T, max_size),
        decode=_decode(instance),
        evaluate=lambda s: evaluate_objective(instance, s, "scheduled_weight"),
        backend=backend,
        algorithm=f"{KIND}-maxweight-direct[{backend}]",
        objective_name="scheduled_weight",
        options=_options(instance, options),
        seed=seed,
        write_model=write_model,
        sense="max",
        initial=_initial(instance, initial, "7", T),
        check_initial=lambda s: violations(instance, s, require_all=False, tau=T, arrivals=False),
        own_backends=(),
        initial_bound=bound,
        bound_name=which,
    )
