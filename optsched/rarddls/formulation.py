"""Exact models of paper 002 (build only; :mod:`optsched.rarddls.exact` solves).

* :func:`build_milp`: RAR-DDLS (1)-(9) as a time-indexed MILP on the slot grid. Each job picks one
  placement pattern y_j (GPUs per server, fixed for life, (3)/(5)) and one start slot; binaries
  v[j,q,t] say "job j runs with pattern q in slot t"; contention levels L[j,t,p] (one-hot, p >= the
  number of jobs split on every server where j is split, (6)) bound the iterations done per slot by
  phi_j(servers, p) ((7)-(9)). The level is exact because phi is nonincreasing in p: the solver never
  gains by a level above the true count. Decoding replays the chosen starts and placements with
  the slotted evaluator. Valid rows tighten it (formulations/rarddls.md#milp-cuts): start x pattern
  binaries x[j,q,t] with activity windows of d^lo..d^hi slots, z[t] "some job still runs" (capacity scaled by
  it, cmax = sum_t z[t]: the area bound), capacity with dual-feasible sizes, server and identical-job
  symmetry. :func:`set_start` puts a replayed schedule into the variables (MIP start, and the tests'
  proof that every replayed schedule satisfies every row).
* :func:`build_theta_star`: (14)-(16) without time: each job takes G_j distinct GPUs, minimize the
  largest per-GPU sum of rho^_j / u (theta*_u of Lemma 4).

Component names are the labels of ``formulations/rarddls.md``.

Tested in ``tests/rarddls/test_exact.py`` and ``tests/rarddls/test_milp_cuts.py``.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

from optsched.exceptions import InternalError
from optsched.rarddls.evaluate import contention_counts, replay_unchecked
from optsched.rarddls.model import RarInstance
from optsched.solvers import check_model_size, new_cp_model


@lru_cache(maxsize=256)
def _compositions(total: int, caps: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    if not caps:
        return ((),) if total == 0 else ()
    out = []
    for y in range(min(total, caps[0]), -1, -1):
        for rest in _compositions(total - y, caps[1:]):
            out.append((y, *rest))
    return tuple(out)


def _partitions(total: int, largest: int):
    """Multisets of positive integers with sum = ``total`` and parts <= ``largest``."""
    if total == 0:
        yield ()
        return
    for x in range(min(total, largest), 0, -1):
        for rest in _partitions(total - x, x):
            yield (x, *rest)


@lru_cache(maxsize=64)
def _dffs(cap: int) -> tuple[tuple[int, ...], ...]:
    """Integer dual-feasible functions f on 0..cap other than the identity (f[y] = size counted for y GPUs).

    Two classic families (Fekete and Schepers 2001): f(y) = cap if y > cap - k, y if k <= y <= cap - k, 0 if
    y < k (k = 1.5, 2, ..., cap / 2), and u(y) = y if (k + 1) y / cap is integral, else
    floor((k + 1) y / cap) cap / k (k = 1..cap - 1, kept if integral). Each is checked by enumerating every
    multiset of sizes with sum <= cap (sum f <= cap); only valid ones are returned."""
    cands = []
    for k2 in range(3, cap + 1):  # k = k2 / 2
        k = k2 / 2
        cands.append(tuple(cap if y > cap - k else (y if y >= k else 0) for y in range(cap + 1)))
    for k in range(1, cap):
        f = [y if ((k + 1) * y) % cap == 0 else ((k + 1) * y // cap) * cap / k for y in range(cap + 1)]
        if all(float(v).is_integer() for v in f):
            cands.append(tuple(int(v) for v in f))
    out = []
    for f in cands:
        ok = all(sum(f[x] for x in part) <= cap for tot in range(1, cap + 1) for part in _partitions(tot, tot))
        if ok and f not in out and f != tuple(range(cap + 1)):
            out.append(f)
    return tuple(out)


def patterns(instance: RarInstance, j: int) -> list[tuple[int, ...]]:
    """Every placement y_j = (y_j1..y_jS) with sum_s y_js = G_j (1), 0 <= y_js <= O_s (5 read as Z_+)."""
    return list(_compositions(instance.jobs[j].gpus, tuple(instance.O)))


def milp_size(instance: RarInstance, horizon: int) -> tuple[int, int]:
    """(variables, constraints) estimate of :func:`build_milp`."""
    J, S, H, P = instance.n_jobs, len(instance.O), horizon, instance.p_max
    Q = sum(len(patterns(instance, j)) for j in range(J))
    n_dff = sum(len(_dffs(o)) for o in instance.O)
    n_vars = 2 * Q * H + Q + 3 * J * H + J * H * P + H + 1
    n_cons = 2 * S * H + n_dff * H + H + 1 + 2 * Q + 3 * Q * H + J + J * (S * H + min(instance.n_g, S) * H + 7 * H + 3)
    return n_vars, n_cons


def build_milp(instance: RarInstance, *, horizon: int, max_size: int | None = None):
    """Time-indexed MILP of RAR-DDLS on slots 0..horizon-1 (returns a Pyomo ``ConcreteModel``).

    ``model.pats[j]`` lists the patterns of job index j (``model.use[j, q]`` chooses one);
    ``model.s[j, t]`` is the start; the objective ``makespan`` is max_j C_j (slots).

    Examples
    --------
    >>> from optsched.rarddls import toy_instance
    >>> m = build_milp(toy_instance(), horizon=10)
    >>> m.capacity.dim(), m.makespan.sense == 1
    (2, True)
    """
    import pyomo.environ as pyo

    H = int(horizon)
    n_vars, n_cons = milp_size(instance, H)
    check_model_size("rarddls time-indexed MILP", n_vars, n_cons, max_size)
    J = instance.n_jobs
    S = len(instance.O)
    P = instance.p_max
    pats = {j: patterns(instance, j) for j in range(J)}
    nserv = {(j, q): sum(1 for y in pats[j][q] if y > 0) for j in range(J) for q in range(len(pats[j]))}
    multi = [j for j in range(J) if any(nserv[j, q] >= 2 for q in range(len(pats[j])))]
    phi_max = {j: max(instance.phi(j, r, p) for r, p in instance.states(j)) for j in range(J)}

    m = pyo.ConcreteModel(name=f"rarddls-milp[{instance.name}]")
    m.pats = pats
    m.horizon = H
    m.J = pyo.RangeSet(0, J - 1)
    m.S = pyo.RangeSet(0, S - 1)
    m.T = pyo.RangeSet(0, H - 1)
    m.P = pyo.RangeSet(1, P)
    m.JQ = pyo.Set(initialize=[(j, q) for j in range(J) for q in range(len(pats[j]))], dimen=2)
    m.JQT = pyo.Set(initialize=[(j, q, t) for j, q in m.JQ for t in range(H)], dimen=3)
    m.M = pyo.Set(initialize=multi)
    m.use = pyo.Var(m.JQ, domain=pyo.Binary)
    m.v = pyo.Var(m.JQT, domain=pyo.Binary)
    m.s = pyo.Var(m.J, m.T, domain=pyo.Binary)
    m.L = pyo.Var(m.M, m.T, m.P, domain=pyo.Binary)
    m.prog = pyo.Var(m.J, m.T, domain=pyo.NonNegativeReals)
    m.cmax = pyo.Var(domain=pyo.NonNegativeReals, bounds=(0, H))

    def act(m, j, t):
        return sum(m.v[j, q, t] for q in range(len(pats[j])))

    m.a = pyo.Expression(m.J, m.T, rule=act)

    def split_on(m, j, s, t):  # job j active in slot t and split on server s
        return sum(m.v[j, q, t] for q in range(len(pats[j])) if 0 < pats[j][q][s] < instance.jobs[j].gpus)

    m.sp = pyo.Expression(m.J, m.S, m.T, rule=split_on)

    @m.Constraint(m.J)
    def one_placement(m, j):  # (3), (5): one placement y_j, fixed for life
        return sum(m.use[j, q] for q in range(len(pats[j]))) == 1

    @m.Constraint(m.JQT)
    def placement_fixed(m, j, q, t):  # (3): run only with the chosen placement
        return m.v[j, q, t] <= m.use[j, q]

    @m.Constraint(m.J, m.T)
    def demand(m, j, t):  # (1): G_j GPUs in every active slot
        return sum(sum(pats[j][q]) * m.v[j, q, t] for q in range(len(pats[j]))) == instance.jobs[j].gpus * m.a[j, t]

    @m.Constraint(m.J)
    def one_start(m, j):
        return sum(m.s[j, t] for t in m.T) == 1

    @m.Constraint(m.J, m.T)
    def start_active(m, j, t):
        return m.a[j, t] >= m.s[j, t]

    @m.Constraint(m.J, m.T)
    def non_preemptive(m, j, t):  # (3), (4): activity switches on only at the start (once)
        prev = m.a[j, t - 1] if t > 0 else 0
        return m.a[j, t] - prev <= m.s[j, t]

    @m.Constraint(m.S, m.T)
    def capacity(m, s, t):  # (2)
        return sum(pats[j][q][s] * m.v[j, q, t] for j, q in m.JQ if pats[j][q][s] > 0) <= instance.O[s]

    @m.Constraint(m.M, m.T)
    def one_level(m, j, t):
        return sum(m.L[j, t, p] for p in m.P) <= 1

    @m.Constraint(m.M, m.S, m.T)
    def contention_level(m, j, s, t):  # (6): level >= jobs split on s, on every server where j is split
        count = sum(m.sp[k, s, t] for k in m.J)
        return sum(p * m.L[j, t, p] for p in m.P) >= count - P * (1 - m.sp[j, s, t])

    def v_r(m, j, t, r):
        return sum(m.v[j, q, t] for q in range(len(pats[j])) if nserv[j, q] == r)

    @m.Constraint(m.J, m.T)
    def rate_single(m, j, t):  # (8)-(9) on one server: B_j = b_i, no contention
        one = v_r(m, j, t, 1)
        return m.prog[j, t] <= instance.phi(j, 1, 0) * one + phi_max[j] * (m.a[j, t] - one)

    m.JRT = pyo.Set(
        initialize=[(j, r, t) for j in multi for r in range(2, min(instance.jobs[j].gpus, S) + 1) for t in range(H)],
        dimen=3,
    )

    @m.Constraint(m.JRT)
    def rate_split(m, j, r, t):  # (7)-(9) on r >= 2 servers at level p
        return m.prog[j, t] <= sum(instance.phi(j, r, p) * m.L[j, t, p] for p in m.P) + phi_max[j] * (
            1 - v_r(m, j, t, r)
        )

    @m.Constraint(m.J)
    def iterations(m, j):  # (9): F_j iterations done
        return sum(m.prog[j, t] for t in m.T) >= instance.jobs[j].iterations

    @m.Constraint(m.J)
    def min_duration(m, j):  # valid cut: at least ceil(F_j / phi_j^max) active slots
        return sum(m.a[j, t] for t in m.T) >= -(-instance.jobs[j].iterations // phi_max[j])

    # -- strengthening (valid for every replayed schedule; formulations/rarddls.md#milp-cuts) --------------
    # x[j,q,t]: job j starts in slot t with pattern q. With pattern q (r servers) job j needs at least
    # dlo[j,q] = ceil(F_j / phi_j(r, 1 if split)) and at most dhi[j,q] = ceil(F_j / phi_j(r, p_max)) slots.
    dlo, dhi = {}, {}
    for j, q in m.JQ:
        r = nserv[j, q]
        F = instance.jobs[j].iterations
        dlo[j, q] = -(-F // instance.phi(j, r, 1 if r >= 2 else 0))
        dhi[j, q] = -(-F // instance.phi(j, r, P if r >= 2 else 0))
    m.dlo, m.dhi = dlo, dhi
    m.x = pyo.Var(m.JQT, domain=pyo.Binary)
    for j, q, t in m.JQT:
        if t + dlo[j, q] > H:  # cannot end by the horizon
            m.x[j, q, t].fix(0)

    @m.Constraint(m.J, m.T)
    def start_pattern(m, j, t):
        return sum(m.x[j, q, t] for q in range(len(pats[j]))) == m.s[j, t]

    @m.Constraint(m.JQ)
    def pattern_start(m, j, q):
        return sum(m.x[j, q, t] for t in m.T) == m.use[j, q]

    @m.Constraint(m.JQT)
    def active_window(m, j, q, t):  # started with q in the last dlo slots => running with q now
        return m.v[j, q, t] >= sum(m.x[j, q, u] for u in range(max(0, t - dlo[j, q] + 1), t + 1))

    @m.Constraint(m.JQT)
    def active_within(m, j, q, t):  # running with q now => started with q in the last dhi slots
        return m.v[j, q, t] <= sum(m.x[j, q, u] for u in range(max(0, t - dhi[j, q] + 1), t + 1))

    # z[t] = 1 while some job is still running (nonincreasing); capacity scaled by it, cmax = sum_t z[t]
    m.z = pyo.Var(m.T, bounds=(0, 1))

    @m.Constraint(m.T)
    def open_monotone(m, t):
        if t == 0:
            return pyo.Constraint.Skip
        return m.z[t] <= m.z[t - 1]

    @m.Constraint(m.S, m.T)
    def open_capacity(m, s, t):
        return sum(pats[j][q][s] * m.v[j, q, t] for j, q in m.JQ if pats[j][q][s] > 0) <= instance.O[s] * m.z[t]

    # dual-feasible functions: any set of items that fits in O_s has sum f(y) <= O_s, so the per-slot
    # capacity also holds with sizes f(y) (a 3-GPU job on a 4-GPU server blocks the last GPU for all but
    # 1-GPU pieces)
    m.DFF = pyo.Set(initialize=[(s_, k) for s_ in range(S) for k in range(len(_dffs(instance.O[s_])))], dimen=2)

    @m.Constraint(m.DFF, m.T)
    def capacity_dff(m, s, k, t):
        f = _dffs(instance.O[s])[k]
        return sum(f[pats[j][q][s]] * m.v[j, q, t] for j, q in m.JQ if f[pats[j][q][s]] > 0) <= instance.O[s] * m.z[t]

    @m.Constraint(m.J, m.T)
    def open_active(m, j, t):
        return m.a[j, t] <= m.z[t]

    @m.Constraint(m.J, m.T)
    def makespan_def(m, j, t):
        return m.cmax >= (t + 1) * m.a[j, t]

    @m.Constraint()
    def makespan_open(m):
        return m.cmax >= sum(m.z[t] for t in m.T)

    # symmetry: servers with equal O_s are interchangeable; one job j* takes a pattern nonincreasing over each
    # group of equal servers (any schedule can be relabelled so that it does). j* is the job with the fewest
    # patterns left unchanged by swapping equal servers (such a pattern leaves the swap unbroken), then the
    # largest G_j * (one-server slots): on 2x4 GPUs an odd G_j breaks the swap completely.
    groups: dict[int, list[int]] = {}
    for s_, o in enumerate(instance.O):
        groups.setdefault(o, []).append(s_)

    def canonical(y):
        return all(y[a] >= y[b] for g in groups.values() for a, b in itertools.pairwise(g))

    def invariant(y):
        return all(y[a] == y[b] for g in groups.values() for a, b in itertools.pairwise(g))

    def sym_key(j):
        d1 = -(-instance.jobs[j].iterations // instance.phi(j, 1, 0))
        return (sum(invariant(y) for y in pats[j]), -instance.jobs[j].gpus * d1, j)

    m.server_groups = [g for g in groups.values() if len(g) > 1]
    m.sym_job = min(range(J), key=sym_key)
    bad = [(m.sym_job, q) for q in range(len(pats[m.sym_job])) if not canonical(pats[m.sym_job][q])]
    m.SYM = pyo.Set(initialize=bad, dimen=2)

    @m.Constraint(m.SYM)
    def symmetry(m, j, q):
        return m.use[j, q] == 0

    # identical jobs (same G_j, F_j, m_j, Delta_j: same patterns and rates) are interchangeable: order their starts
    # (relabelling jobs first, then servers, keeps both orderings)
    twins = []
    for j in range(J):
        for k in range(j + 1, J):
            a, b = instance.jobs[j], instance.jobs[k]
            if (a.gpus, a.iterations, a.grad_size, a.compute) == (b.gpus, b.iterations, b.grad_size, b.compute):
                twins.append((j, k))
                break  # chain j < k < ... : consecutive pairs suffice
    m.twins = twins
    m.TWINS = pyo.Set(initialize=twins, dimen=2)

    @m.Constraint(m.TWINS)
    def identical_order(m, j, k):
        return sum(t * m.s[j, t] for t in m.T) <= sum(t * m.s[k, t] for t in m.T)

    m.makespan = pyo.Objective(expr=m.cmax, sense=pyo.minimize)
    return m


def build_theta_star(instance: RarInstance, *, max_size: int | None = None):
    """(14)-(16) without time: z[j, g] = 1 if job j uses GPU g; each job takes G_j distinct GPUs
    (``gpus_per_job``, (11)/(15)); ``gpu_load`` (16): sum_j rho^_j/u z[j, g] <= theta; minimize ``theta``.

    GPUs are interchangeable here, so GPU g may only be used if GPU g-1 is (``symmetry``).
    """
    import pyomo.environ as pyo

    J, N = instance.n_jobs, instance.N
    check_model_size("rarddls (14)-(16)", J * N + 1, J + 2 * N, max_size)
    u = instance.u
    m = pyo.ConcreteModel(name=f"rarddls-theta-star[{instance.name}]")
    m.J = pyo.RangeSet(0, J - 1)
    m.G = pyo.RangeSet(0, N - 1)
    m.z = pyo.Var(m.J, m.G, domain=pyo.Binary)
    m.th = pyo.Var(domain=pyo.NonNegativeReals)

    @m.Constraint(m.J)
    def gpus_per_job(m, j):
        return sum(m.z[j, g] for g in m.G) == instance.jobs[j].gpus

    @m.Constraint(m.G)
    def gpu_load(m, g):
        return sum(instance.jobs[j].rho_hat / u * m.z[j, g] for j in m.J) <= m.th

    @m.Constraint(m.G)
    def symmetry(m, g):
        if g == 0:
            return pyo.Constraint.Skip
        return sum(instance.jobs[j].rho_hat * m.z[j, g] for j in m.J) <= sum(
            instance.jobs[j].rho_hat * m.z[j, g - 1] for j in m.J
        )

    m.theta = pyo.Objective(expr=m.th, sense=pyo.minimize)
    return m


def set_start(model, instance: RarInstance, starts, placements) -> None:
    """Set every variable of a :func:`build_milp` model to the schedule given by start slots and placements
    (completions and contention replayed with :func:`~optsched.rarddls.evaluate.replay`), for a MIP start.

    Every replayed schedule that ends by the horizon satisfies every row of the model (that is the
    exactness argument of ``formulations/rarddls.md#milp``)."""
    J, H = instance.n_jobs, model.horizon
    starts = [int(a) for a in starts]
    pls = [{int(s): int(y) for s, y in p.items() if y > 0} for p in placements]
    # the same schedule up to the symmetries the model breaks: identical jobs in start order, then servers of
    # equal size relabelled so that job sym_job's pattern is nonincreasing over each group
    nxt = dict(model.twins)
    for head in set(nxt) - set(nxt.values()):
        chain = [head]
        while chain[-1] in nxt:
            chain.append(nxt[chain[-1]])
        pairs = sorted(((starts[j], pls[j]) for j in chain), key=lambda sp: sp[0])
        for j, (a, pl) in zip(chain, pairs, strict=True):
            starts[j], pls[j] = a, pl
    ystar = pls[model.sym_job]
    relabel = {}
    for g in model.server_groups:
        for new, old in zip(g, sorted(g, key=lambda s: -ystar.get(s, 0)), strict=True):
            relabel[old] = new
    pls = [{relabel.get(s, s): y for s, y in p.items()} for p in pls]
    comp = replay_unchecked(instance, starts, pls).completion
    for var in (model.use, model.v, model.s, model.x, model.L, model.prog, model.z):
        for idx in var:
            if not var[idx].fixed:
                var[idx].set_value(0)
    S = len(instance.O)
    for j in range(J):
        y = tuple(pls[j].get(s, 0) for s in range(S))
        q = model.pats[j].index(y)
        model.use[j, q].set_value(1)
        model.s[j, starts[j]].set_value(1)
        model.x[j, q, starts[j]].set_value(1)
    for t in range(H):
        active = [j for j in range(J) if starts[j] <= t < comp[j]]
        p = contention_counts(instance, active, pls)
        for j in active:
            y = tuple(pls[j].get(s, 0) for s in range(S))
            q = model.pats[j].index(y)
            model.v[j, q, t].set_value(1)
            r = sum(1 for v in y if v > 0)
            model.prog[j, t].set_value(instance.phi(j, r, p[j]))
            if r >= 2:
                model.L[j, t, p[j]].set_value(1)
        if any(c > t for c in comp):
            model.z[t].set_value(1)
    model.cmax.set_value(max(comp))


def milp_to_cpsat(model):
    """The rows of a :func:`build_milp` model as a CP-SAT model, for the ``cpsat`` back end.

    Every coefficient of the MILP is an integer, and prog, z and cmax take integer values in every replayed
    schedule (iterations per slot, 0/1, slots), so solving with all variables integral keeps the optimum.
    Returns ``(cp_model, var)`` with ``var[v]`` the CP-SAT variable of the Pyomo variable ``v`` (a ComponentMap);
    each CP-SAT constraint carries the name of its Pyomo row."""
    import pyomo.environ as pyo
    from pyomo.common.collections import ComponentMap
    from pyomo.repn import generate_standard_repn

    cm = new_cp_model()
    var = ComponentMap()
    big = 10**6
    for v in model.component_data_objects(pyo.Var, descend_into=True):
        if v.fixed:
            lo = hi = int(round(v.value))
        else:
            lo = 0 if v.lb is None else int(math.ceil(v.lb - 1e-9))
            hi = big if v.ub is None else int(math.floor(v.ub + 1e-9))
        var[v] = cm.new_int_var(lo, hi, v.name)

    def integral(x, what):
        if abs(x - round(x)) > 1e-9:
            raise InternalError(f"{what}: coefficient {x} is not an integer; the CP-SAT translation needs integers.")
        return int(round(x))

    for c in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        r = generate_standard_repn(c.body)
        if not r.is_linear():
            raise InternalError(f"Row {c.name} is not linear.")
        const = float(r.constant)
        lo = None if c.lower is None else pyo.value(c.lower) - const
        hi = None if c.upper is None else pyo.value(c.upper) - const
        if not r.linear_vars:  # every variable fixed: a constant row
            if (lo is not None and lo > 1e-9) or (hi is not None and hi < -1e-9):
                cm.add_bool_or([]).with_name(c.name)  # violated: the model is infeasible
            continue
        expr = sum(integral(k, c.name) * var[v] for k, v in zip(r.linear_coefs, r.linear_vars, strict=True))
        if lo is not None and hi is not None and abs(lo - hi) < 1e-9:
            cm.add(expr == integral(lo, c.name)).with_name(c.name)
            continue
        if lo is not None:
            cm.add(expr >= math.ceil(lo - 1e-9)).with_name(c.name)
        if hi is not None:
            cm.add(expr <= math.floor(hi + 1e-9)).with_name(c.name)
    cm.minimize(var[model.cmax])
    return cm, var
