"""Exact models of the rigid-job problem (``formulations/rigid.md``): build, never solve.

Problem: non-preemptive rigid jobs (GPU demand g_j, processing p_j slots, release r_j,
weight w_j) on servers with G_m GPUs; minimise sum_j w_j C_j. A job either spans servers
(any split of its GPUs, fixed for its run) or is single-server.

* :func:`build_time_indexed` - Pyomo MILP, time-indexed (T1)-(T5).
* :func:`build_interval_cpsat` - CP-SAT model with one interval per job and per-server cumulatives
  with variable demands (C1)-(C4) (former name ``build_cpsat``, kept as an alias).

Tested in ``tests/rigid/test_bounds.py``, ``tests/rigid/test_exact.py`` and
``tests/rigid/test_time_limit.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.limits import check_slots
from optsched.core.registry import check_kind
from optsched.core.units import to_slots
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, ModelTooLargeError, TimeLimitReached
from optsched.solvers import interrupt
from optsched.solvers.size import check_model_size


@dataclass(frozen=True)
class SlotData:
    """Instance data in whole slots (``Instance.slot`` seconds each)."""

    p: list[int]
    r: list[int]
    g: list[int]
    w: list[float]
    single: list[bool]
    G: list[int]
    T: int

    @property
    def n(self) -> int:
        return len(self.p)

    @property
    def mixed(self) -> bool:
        """True if per-server variables are needed (some job is single-server, or resources)."""
        return any(self.single)


@dataclass(frozen=True)
class TimeIndexedVariables:
    """The variables of a :func:`build_time_indexed` model (Pyomo components).

    ``x[j, t]`` (T1) start of job j at slot t; ``y[j, m, t]`` and ``w[j, m, t]`` the server of a
    single-server job and the split of a spanning one (``None`` when every job may span
    servers); ``data`` the slot data.
    """

    x: Any
    y: Any
    w: Any
    data: SlotData

    @classmethod
    def of(cls, model: Any) -> TimeIndexedVariables:
        """The handles of a model built by :func:`build_time_indexed`."""
        return cls(x=model.x, y=getattr(model, "y", None), w=getattr(model, "w", None), data=model.data)


@dataclass(frozen=True)
class IntervalVariables:
    """The variables of a :func:`build_interval_cpsat` model (CP-SAT).

    ``start[j]`` (C1) start slot; ``interval[j]`` its fixed-size interval; ``on[j]`` (C2)
    ``{server: BoolVar}`` for a single-server job (empty for a spanning job); ``alloc[j][m]``
    (C2) GPUs of job j on server m (an ``IntVar`` of a spanning job, ``g_j * on[j][m]`` or 0 of a
    single-server job); ``data`` the slot data; ``objective`` the linear expression (C4) (so a
    bound row can be added after the build).
    """

    start: list[Any]
    interval: list[Any]
    on: list[dict[int, Any]]
    alloc: list[list[Any]]
    data: SlotData
    objective: Any = None


def _whole_slots(jobs, name: str, s: float) -> list[int]:
    """``[to_slots(getattr(j, name), s) for j in jobs]``, with NumPy (the same rounding: half to
    even, the same tolerance); a value that is not a whole number of slots goes through
    :func:`~optsched.core.units.to_slots` one job at a time, which raises naming the first."""
    q = np.fromiter((getattr(j, name) for j in jobs), float, len(jobs)) / float(s)
    k = np.round(q)
    if (np.abs(q - k) <= 1e-9 * np.maximum(1.0, np.abs(q))).all():
        return k.astype(np.int64).tolist()
    return [to_slots(getattr(j, name), s, what=f"'{name}' of {j.label}") for j in jobs]


def slot_data(instance: Instance, horizon_slots: int | None = None) -> SlotData:
    """The instance's data in whole slots of ``instance.slot`` seconds (work, releases, demands,
    weights, server sizes and the horizon ``T`` of the time-indexed model), as the exact models read
    them; work or releases that are not whole slots raise
    :class:`~optsched.exceptions.InvalidInstanceError`.

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import slot_data
    >>> d = slot_data(optsched.load_instance("toy:rigid-2x2-five"))
    >>> d.G, d.n
    ([2, 2], 5)
    """
    check_kind(instance, "rigid", "The rigid exact models")
    s = instance.slot
    # the slot count first, in floats (a huge one must not become a huge Python int or array)
    span = max((j.arrival for j in instance.jobs), default=0.0) / s + sum(j.work for j in instance.jobs) / s
    check_slots("rigid", span, "latest arrival + the sum of the jobs' work, in slots of 'slot' seconds")
    p, r = _whole_slots(instance.jobs, "work", s), _whole_slots(instance.jobs, "arrival", s)
    if any(x == 0 for x in p):
        raise InvalidInstanceError("Every job needs at least one slot of work; lower the instance 'slot'.")
    T = max(r, default=0) + sum(p)  # a serial schedule finishes by then: a valid horizon
    if horizon_slots is not None:
        if horizon_slots < max((ri + pi for ri, pi in zip(r, p, strict=True)), default=0):
            raise InvalidOptionError(f"horizon_slots={horizon_slots} is shorter than some job's release + work.")
        T = int(horizon_slots)
    return SlotData(
        p=p,
        r=r,
        g=[j.gpus for j in instance.jobs],
        w=[j.weight for j in instance.jobs],
        single=[j.single_server for j in instance.jobs],
        G=[int(x) for x in instance.cluster.gpus],
        T=T,
    )


@dataclass(frozen=True)
class ModelSize:
    """Size of a time-indexed model, computed from the slot data before it is built."""

    variables: int
    rows: int
    nonzeros: int


def time_indexed_size(d: SlotData, *, aggregated: bool = False) -> ModelSize:
    """The size :func:`build_time_indexed` would build from ``d`` (with ``aggregated``: every job
    spanning servers, the model of the relaxation and of the LP bound), in O(n): variables,
    rows and non-zeros of the rows and the objective (an upper bound: start windows cut at the
    horizon are counted whole).

    >>> d = SlotData(p=[2, 1], r=[0, 0], g=[1, 1], w=[1, 1], single=[False, False], G=[2], T=3)
    >>> time_indexed_size(d)
    ModelSize(variables=5, rows=5, nonzeros=17)
    """
    n, M, T = d.n, len(d.G), d.T
    starts = [max(0, T - d.p[j] - d.r[j] + 1) for j in range(n)]
    n_x = sum(starts)
    nnz = 2 * n_x  # (T1) and the objective (T5)
    if aggregated or not d.mixed:
        return ModelSize(n_x, n + T, nnz + sum(starts[j] * d.p[j] for j in range(n)))
    fit = [sum(1 for G in d.G if d.g[j] <= G) if d.single[j] else M for j in range(n)]
    extra = sum(starts[j] * fit[j] for j in range(n))  # y or w
    nnz += n_x + extra  # (T3)
    nnz += sum(starts[j] * d.p[j] * fit[j] for j in range(n))  # (T4)
    return ModelSize(n_x + extra, n + n_x + M * T, nnz)


def build_time_indexed(
    instance: Instance,
    *,
    horizon_slots: int | None = None,
    max_size: int | None = None,
    deadline: float | None = None,
):
    """Time-indexed MILP of ``formulations/rigid.md`` (T1)-(T5).

    Returns a Pyomo ``ConcreteModel`` with components named after the labels:
    ``x`` (start of job j at slot t), ``y``/``w`` (per-server starts and GPU splits, only when
    some job is single-server), ``one_start_per_job`` (T1), ``capacity`` (T2 or T4),
    ``split_demand`` (T3), ``total_weighted_completion_time`` (T5). ``model.data`` holds the
    slot data.

    ``deadline`` (a ``time.monotonic()`` value): the build stops with
    :class:`~optsched.exceptions.TimeLimitReached` once it is past (checked between components
    and every 256 rows), so a whole-call time limit also bounds the build.

    Raises
    ------
    ModelTooLargeError
        If the estimated size exceeds ``max_size`` (default ``OPTSCHED_MAX_MODEL_SIZE``).
    TimeLimitReached
        ``deadline`` passed during the build.

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import build_time_indexed
    >>> m = build_time_indexed(optsched.load_instance("toy:rigid-2x2-five"))
    >>> len(m.one_start_per_job)
    5
    """
    import pyomo.environ as pyo

    tick = _deadline_check(deadline, f"building the time-indexed model of {instance.name!r}")
    d = slot_data(instance, horizon_slots)
    n, M, T = d.n, len(d.G), d.T
    starts = {j: range(d.r[j], T - d.p[j] + 1) for j in range(n)}
    n_x = sum(len(starts[j]) for j in range(n))
    n_vars = n_x * (1 + (M if d.mixed else 0))
    n_cons = n + (T * M if d.mixed else T) + (n_x if d.mixed else 0)
    check_model_size("rigid time-indexed", n_vars, n_cons, max_size)

    m = pyo.ConcreteModel(name=f"rigid_time_indexed[{instance.name}]")
    m.data = d
    m.J = pyo.Set(initialize=range(n), ordered=True)
    m.S = pyo.Set(initialize=range(M), ordered=True)
    m.T = pyo.Set(initialize=range(T), ordered=True)
    m.JT = pyo.Set(dimen=2, initialize=[(j, t) for j in range(n) for t in starts[j]], ordered=True)
    tick(force=True)
    m.x = pyo.Var(m.JT, domain=pyo.Binary, doc="x[j,t] = 1 if job j starts at slot t")
    tick(force=True)

    @m.Constraint(m.J, doc="(T1) every job starts exactly once")
    def one_start_per_job(m, j):
        tick()
        return sum(m.x[j, t] for t in starts[j]) == 1

    def running(j, t):
        """Start slots tau with tau <= t < tau + p_j (job j runs in slot t)."""
        lo, hi = max(d.r[j], t - d.p[j] + 1), min(t, T - d.p[j])
        return range(lo, hi + 1)

    if not d.mixed:
        G = sum(d.G)

        @m.Constraint(m.T, doc="(T2) GPUs in use in slot t <= cluster GPUs (jobs may span servers)")
        def capacity(m, t):
            tick()
            expr = sum(d.g[j] * m.x[j, tau] for j in range(n) for tau in running(j, t))
            if isinstance(expr, int):
                return pyo.Constraint.Skip
            return expr <= G
    else:
        single = [j for j in range(n) if d.single[j]]
        span = [j for j in range(n) if not d.single[j]]
        m.JST_single = pyo.Set(
            dimen=3, initialize=[(j, s, t) for j in single for s in range(M) for t in starts[j] if d.g[j] <= d.G[s]]
        )
        m.JST_span = pyo.Set(dimen=3, initialize=[(j, s, t) for j in span for s in range(M) for t in starts[j]])
        tick(force=True)
        m.y = pyo.Var(m.JST_single, domain=pyo.Binary, doc="y[j,m,t] = 1 if single-server job j starts on m at t")
        tick(force=True)
        m.w = pyo.Var(
            m.JST_span,
            domain=pyo.NonNegativeIntegers,
            bounds=lambda m, j, s, t: (0, min(d.g[j], d.G[s])),
            doc="w[j,m,t] = GPUs of spanning job j on server m if it starts at t",
        )

        @m.Constraint(m.JT, doc="(T3) a started job gets its g_j GPUs: on one server, or split over servers")
        def split_demand(m, j, t):
            tick()
            if d.single[j]:
                return sum(m.y[j, s, t] for s in range(M) if d.g[j] <= d.G[s]) == m.x[j, t]
            return sum(m.w[j, s, t] for s in range(M)) == d.g[j] * m.x[j, t]

        @m.Constraint(m.S, m.T, doc="(T4) GPUs in use on server m in slot t <= G_m")
        def capacity(m, s, t):
            tick()
            expr = sum(d.g[j] * m.y[j, s, tau] for j in single if d.g[j] <= d.G[s] for tau in running(j, t))
            expr += sum(m.w[j, s, tau] for j in span for tau in running(j, t))
            if isinstance(expr, int):
                return pyo.Constraint.Skip
            return expr <= d.G[s]

    tick(force=True)
    m.total_weighted_completion_time = pyo.Objective(
        expr=sum(d.w[j] * (t + d.p[j]) * m.x[j, t] for (j, t) in m.JT),
        sense=pyo.minimize,
        doc="(T5) sum_j w_j C_j in slots",
    )
    return m


def _deadline_check(deadline: float | None, what: str) -> Any:
    """``tick(force=False)``: raises TimeLimitReached once ``deadline`` is past (the clock read
    every 256 calls, or at once with ``force``); with ``force`` (between components, where nothing
    is half built) also KeyboardInterrupt once a signal arrived (:func:`optsched.solvers.interrupt.check`)."""

    calls = [0]

    def tick(force: bool = False) -> None:
        if force:
            interrupt.check()
        if deadline is None:
            return
        calls[0] += 1
        if (force or calls[0] % 256 == 0) and time.monotonic() >= deadline:
            raise TimeLimitReached(f"the time limit was reached while {what}")

    return tick


def add_packing_rows(model: Any, single: list[bool]) -> int:
    """Add the packing rows (P) of ``formulations/rigid.md#relax-and-repair`` to an aggregated
    time-indexed model (:func:`build_time_indexed` with every job spanning): when all M servers
    have the same G GPUs, a single-server job with g_j > G/2 needs a server of its own and two
    with g_j = G/2 share one, so in every slot sum_j f(g_j) [j runs] <= M with f = 1, 1/2, 0
    (a dual-feasible function of bin packing; times 2 for integer rows). Valid for every
    schedule of the instance with ``single`` single-server jobs; spanning jobs get f = 0.
    Returns the number of rows (0 when the servers differ). The component is ``packing``."""
    import pyomo.environ as pyo

    d: SlotData = model.data
    if len(set(d.G)) != 1:
        return 0
    G, M, T = d.G[0], len(d.G), d.T
    f = [(2 if 2 * gj > G else 1 if 2 * gj == G else 0) if single[j] else 0 for j, gj in enumerate(d.g)]
    model.packing = pyo.ConstraintList(doc="(P) big single-server jobs per slot <= servers")
    for t in range(T):
        terms = [
            f[j] * model.x[j, tau]
            for j in range(d.n)
            if f[j]
            for tau in range(max(d.r[j], t - d.p[j] + 1), min(t, T - d.p[j]) + 1)
        ]
        if sum(f[j] for j in range(d.n) if d.r[j] <= t) > 2 * M and terms:  # else implied
            model.packing.add(sum(terms) <= 2 * M)
    return len(model.packing)


#: Most non-zeros of the energy rows (E) in a CP-SAT model: all rows of n jobs with R distinct
#: releases have up to R n^2 / 2 (4.4 million at 2,000 jobs and 5 releases, 11 s to build in
#: Python before CP-SAT's presolve reads them). Above it every s-th row is kept (each row is valid
#: on its own, so any subset is), and the model gets the area bound as a row instead.
ENERGY_MAX_NONZEROS = 200_000


def energy_rows(
    d: SlotData, max_nonzeros: int | None = None, *, deadline: float | None = None
) -> list[tuple[list[int], list[int], int]]:
    """The energy (area) inequalities (E) of ``formulations/rigid.md`` as ``(jobs, coefficients, rhs)``:
    ``sum_k coefficients[k] * s_{jobs[k]} >= rhs`` with s_j the start slot.

    For a set S of jobs released at or after r, with areas e_j = g_j p_j (GPU-slots) on the G
    GPUs of the cluster, the GPU-usage profile u(t) <= G of S gives
    sum_{j in S} e_j (s_j + p_j / 2) = integral of t u(t) dt >= e(S) r + e(S)^2 / (2G);
    times 2, integer: sum_{j in S} 2 e_j s_j >= ceil(2 e(S) r + e(S)^2 / G - sum_{j in S} e_j p_j).
    Rows: for every distinct release r, the nested prefixes of S_r = {j : r_j >= r} in Smith's
    order (largest w_j / e_j first; ties by release, index): the sets whose rows are tight at the
    optimum of the relaxation min sum_j w_j C_j over these rows. O(n * releases) rows.

    ``max_nonzeros``: when the rows have more non-zeros in all, every s-th row (in the order
    above; s the smallest stride whose rows have at most ``max_nonzeros``) is returned instead,
    a valid subset. ``deadline`` (a ``time.monotonic()`` value): past it,
    :class:`~optsched.exceptions.TimeLimitReached`.

    Notes
    -----
    Prefix sums per release in NumPy (exact 64-bit integers when the largest right-hand side fits,
    Python integers otherwise): O(R n) arithmetic, plus the returned rows' non-zeros."""
    import numpy as np

    n, G = d.n, sum(d.G)
    if n == 0:
        return []
    e = [d.g[j] * d.p[j] for j in range(n)]
    smith = sorted(range(n), key=lambda j: (-d.w[j] / e[j], d.r[j], j))  # per release: a filter of it
    order = np.array(smith, dtype=np.int64)
    rel = np.array(d.r, dtype=np.int64)[order]
    area_total, r_max = sum(e), max(d.r)
    exact64 = (
        float(area_total) * (2.0 * r_max * G + area_total) + float(sum(e[j] * d.p[j] for j in range(n))) * G < 2.0**62
    )
    dtype = np.int64 if exact64 else object
    e_o = np.array([e[j] for j in smith], dtype=dtype)
    ep_o = np.array([e[j] * d.p[j] for j in smith], dtype=dtype)
    er_o = np.array([2 * e[j] * d.r[j] for j in smith], dtype=dtype)
    found = []  # per release: (positions in `smith` of S_r, kept prefix lengths, their right-hand sides)
    tick = _deadline_check(deadline, "computing the energy rows")
    for r in sorted(set(d.r)):
        tick(force=True)
        pos = np.flatnonzero(rel >= r)
        area = np.cumsum(e_o[pos])
        area_p = np.cumsum(ep_o[pos])
        implied = np.cumsum(er_o[pos])  # sum 2 e_j r_j: what the releases alone give
        num = 2 * area * r * G + area * area - area_p * G
        rhs = -((-num) // G)  # exact integer ceil
        keep = np.flatnonzero(rhs > implied)
        if len(keep):
            found.append((pos, keep + 1, rhs[keep]))
    stride = 1
    if max_nonzeros is not None and found:
        lengths_all = np.concatenate([lengths for _, lengths, _ in found])
        stride = max(1, -(-int(lengths_all.sum()) // max(1, max_nonzeros)))
        while stride < len(lengths_all) and int(lengths_all[stride - 1 :: stride].sum()) > max_nonzeros:
            stride += 1  # rows differ in length: the smallest stride whose rows fit
    out = []
    k = 0  # rows before this release's
    for pos, lengths, rhs in found:
        take = np.flatnonzero((k + 1 + np.arange(len(lengths))) % stride == 0)
        k += len(lengths)
        if not len(take):
            continue
        top = int(lengths[take[-1]])  # the longest row kept (prefixes grow)
        members = order[pos[:top]].tolist()
        coef = (2 * e_o[pos[:top]]).tolist()
        for q in take.tolist():
            length = int(lengths[q])
            out.append((members[:length], coef[:length], int(rhs[q])))
    return out


#: CP-SAT's integers are 64-bit; rows and objectives are kept below 2^62 (room for its own sums).
CPSAT_INT_LIMIT = 2**62


def build_interval_cpsat(
    instance: Instance,
    *,
    horizon_slots: int | None = None,
    max_size: int | None = None,
    energy: bool = True,
    objective_lower_bound: int | None = None,
    max_energy_nonzeros: int | None = ENERGY_MAX_NONZEROS,
    deadline: float | None = None,
) -> tuple[Any, IntervalVariables]:
    """CP-SAT model of ``formulations/rigid.md`` (C1)-(C4), with the energy rows (E).

    Parameters
    ----------
    energy : bool
        Add the energy (area) inequalities (E) (:func:`energy_rows`), named ``energy``: valid
        for every schedule; they give CP-SAT's LP relaxation a bound beyond sum_j w_j (r_j + p_j).
    objective_lower_bound : int, optional
        A proven lower bound on (C4) (e.g. the LP relaxation of the time-indexed model, rounded
        up), added as the row ``objective_bound``.
    max_energy_nonzeros : int or None
        At most this many non-zeros of energy rows (:func:`energy_rows`; default
        :data:`ENERGY_MAX_NONZEROS`, ``None``: all of them).
    deadline : float, optional
        A ``time.monotonic()`` value: past it the build stops with
        :class:`~optsched.exceptions.TimeLimitReached` (checked every 256 jobs and rows).

    Returns
    -------
    tuple
        ``(model, variables)``: the ``CpModel`` and its :class:`IntervalVariables`
        (``start``, ``interval``, ``on``, ``alloc``, ``data``). Constraints are named after the
        labels of the markdown (``one_server``, ``split_demand``, ``capacity``,
        ``cluster_capacity``, ``energy``, ``objective_bound``).

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import build_interval_cpsat
    >>> model, variables = build_interval_cpsat(optsched.load_instance("toy:rigid-2x2-five"))
    >>> len(variables.start)
    5
    """
    from ortools.sat.python import cp_model

    d = slot_data(instance, horizon_slots)
    n, M, T = d.n, len(d.G), d.T
    if any(abs(w - round(w)) > 1e-9 for w in d.w):
        raise InvalidOptionError("CP-SAT needs integer job weights; use backend='highs' for fractional weights.")
    check_model_size("rigid CP-SAT", n * (2 + M), M + 1 + n, max_size)
    tick = _deadline_check(deadline, f"building the CP-SAT model of {instance.name!r}")
    tick(force=True)
    model = cp_model.CpModel()
    start, ivs, on, alloc = [], [], [], []
    for j in range(n):
        tick()
        s = model.new_int_var(d.r[j], T - d.p[j], f"start_{j}")  # (C1) release by domain
        start.append(s)
        ivs.append(model.new_fixed_size_interval_var(s, d.p[j], f"run_{j}"))
        bs: dict[int, Any] = {}
        row: list[Any] = []
        if d.single[j]:
            for srv in range(M):
                if d.g[j] <= d.G[srv]:
                    bs[srv] = model.new_bool_var(f"on_{j}_{srv}")
                    row.append(d.g[j] * bs[srv])
                else:
                    row.append(0)
            model.add_exactly_one(list(bs.values())).with_name("one_server")  # (C2) one server
        else:
            row = [model.new_int_var(0, min(d.g[j], d.G[srv]), f"alloc_{j}_{srv}") for srv in range(M)]
            model.add(sum(row) == d.g[j]).with_name("split_demand")  # (C2) the split adds up to g_j
        on.append(bs)
        alloc.append(row)
    for srv in range(M):  # (C3) per-server cumulative with variable demands
        model.add_cumulative(ivs, [alloc[j][srv] for j in range(n)], d.G[srv]).with_name("capacity")
    # (C3) redundant whole-cluster cumulative (stronger propagation)
    model.add_cumulative(ivs, d.g, sum(d.G)).with_name("cluster_capacity")
    if energy:  # (E) energy (area) rows on the whole cluster
        tick(force=True)
        for jobs, coef, rhs in energy_rows(d, max_energy_nonzeros, deadline=deadline):
            tick()
            if max(rhs, sum(coef) * T) >= CPSAT_INT_LIMIT:  # a valid row, left out: beyond 64-bit integers
                continue
            model.add(cp_model.LinearExpr.weighted_sum([start[j] for j in jobs], coef) >= rhs).with_name("energy")
    w = [int(round(d.w[j])) for j in range(n)]
    if sum(w) * T >= CPSAT_INT_LIMIT:
        raise ModelTooLargeError(
            f"The rigid CP-SAT objective could reach {sum(w) * T:.3g} (sum of weights {sum(w)} x horizon {T} slots), "
            f"beyond CP-SAT's 64-bit integers; use backend='highs', a coarser 'slot' or smaller weights."
        )
    objective = cp_model.LinearExpr.weighted_sum(start, w) + sum(w[j] * d.p[j] for j in range(n))
    if objective_lower_bound is not None:
        model.add(objective >= int(objective_lower_bound)).with_name("objective_bound")
    model.minimize(objective)  # (C4)
    return model, IntervalVariables(start=start, interval=ivs, on=on, alloc=alloc, data=d, objective=objective)


#: Former name (``build_<formulation>_cpsat``).
build_cpsat = build_interval_cpsat
