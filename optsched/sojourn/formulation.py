"""Exact models of the static problem (``formulations/sojourn.md``): build, never solve.

Objective (1) of a job order is ``sum_i d_i + sum_{k before i} c[k, i]``
(:func:`optsched.sojourn.evaluate.pair_costs`), so the best order is a *linear ordering
problem*:

* :func:`build_lop` - Pyomo MILP with ``y[i,j] = 1`` if job i runs before job j (i < j),
  objective ``successful_sojourn_time`` (1) and 3-cycle rows ``transitivity`` (L2), all of them
  or none (to be added lazily by :func:`add_transitivity`).
* :func:`build_lop_cpsat` - the same model for CP-SAT with integer (scaled) costs.

Both take the instance (``build_lop(instance, *, max_size)``, the shape of every paper's
builders) or its :class:`~optsched.sojourn.evaluate.PairCosts` (computed once and shared by the
exact back ends).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.registry import check_kind
from optsched.exceptions import InvalidOptionError
from optsched.sojourn.evaluate import PairCosts, pair_costs
from optsched.sojourn.model import KIND
from optsched.solvers.size import check_model_size

#: CP-SAT needs integer costs: the largest |pair weight| is scaled to this value.
CPSAT_SCALE = 1e9


def _pair_costs(x) -> PairCosts:
    """``x`` itself if it is a PairCosts, else the pair costs of the instance ``x``."""
    if isinstance(x, PairCosts):
        return x
    return pair_costs(check_kind(x, KIND, "build_lop"))


def pair_weights(pc: PairCosts) -> tuple[float, np.ndarray]:
    """``(constant, w)`` with objective (1) = ``constant + sum_{i<j} w[i,j] y[i,j]``,
    ``w[i,j] = c[i,j] - c[j,i]`` (upper triangle) and ``constant = sum_i d_i + sum_{i<j} c[j,i]``."""
    iu = np.triu_indices(pc.n, 1)
    w = np.zeros((pc.n, pc.n))
    w[iu] = pc.c[iu] - pc.c.T[iu]
    const = float(pc.d.sum() + pc.c.T[iu].sum())
    return const, w


def build_lop(
    pc, *, cycles: str | Iterable[tuple[int, int, int]] = "all", max_size: int | None = None, name: str = "sojourn"
):
    """Pyomo linear-ordering MILP of objective (1).

    Parameters
    ----------
    pc : SojournInstance or PairCosts
    cycles : "all", "none" or iterable of (i, j, k) with i < j < k
        Which 3-cycle rows (L2) to build now; "none" starts empty for lazy addition.

    Returns
    -------
    pyomo ConcreteModel
        Components: ``y`` (L1 order variables), ``transitivity`` (L2, indexed by ``CYCLES``),
        ``successful_sojourn_time`` (1). ``model.pc`` holds the pair costs.

    Raises
    ------
    ModelTooLargeError
        Above ``max_size`` variables + constraints.

    Examples
    --------
    >>> import optsched
    >>> from optsched.sojourn.evaluate import pair_costs
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> m = build_lop(pair_costs(inst))
    >>> sorted(c.name for c in m.component_objects(descend_into=False) if c.name[0].islower())
    ['successful_sojourn_time', 'transitivity', 'y']
    >>> len(build_lop(inst).y) == len(m.y)  # the instance itself works too
    True
    """
    import pyomo.environ as pyo

    pc = _pair_costs(pc)

    n = pc.n
    if isinstance(cycles, str):
        if cycles not in ("all", "none"):
            raise InvalidOptionError(f"The 'cycles' option must be 'all', 'none' or a list of triples; got {cycles!r}.")
        triples = list(itertools.combinations(range(n), 3)) if cycles == "all" else []
    else:
        triples = [tuple(sorted(t)) for t in cycles]
    n_pairs = n * (n - 1) // 2
    check_model_size(
        "sojourn linear-ordering", n_pairs, n * (n - 1) * (n - 2) // 6 if cycles == "all" else len(triples), max_size
    )
    const, w = pair_weights(pc)
    m = pyo.ConcreteModel(name=f"sojourn_lop[{name}]")
    m.pc = pc
    m.J = pyo.Set(initialize=range(n), ordered=True)
    m.PAIRS = pyo.Set(dimen=2, initialize=list(itertools.combinations(range(n), 2)), ordered=True)
    m.CYCLES = pyo.Set(dimen=3, initialize=triples, ordered=True)
    m.y = pyo.Var(m.PAIRS, domain=pyo.Binary, doc="(L1) y[i,j] = 1 if job i runs before job j (i < j)")

    @m.Constraint(m.CYCLES, doc="(L2) no 3-cycle: 0 <= y_ij + y_jk - y_ik <= 1 for i < j < k")
    def transitivity(m, i, j, k):
        return (0, m.y[i, j] + m.y[j, k] - m.y[i, k], 1)

    @m.Objective(sense=pyo.minimize, doc="(1) expected mean sojourn time of successful jobs")
    def successful_sojourn_time(m):
        return const + sum(float(w[i, j]) * m.y[i, j] for (i, j) in m.PAIRS)

    return m


def add_transitivity(model, triples: Iterable[tuple[int, int, int]]) -> int:
    """Add the (L2) rows of ``triples`` (any order of the three indices) not yet in ``model``;
    return how many were added."""
    added = 0
    for t in triples:
        i, j, k = sorted(int(v) for v in t)
        if (i, j, k) in model.CYCLES:
            continue
        model.CYCLES.add((i, j, k))
        model.transitivity[i, j, k] = (0, model.y[i, j] + model.y[j, k] - model.y[i, k], 1)
        added += 1
    return added


def before_matrix(n: int, y: dict[tuple[int, int], float]) -> np.ndarray:
    """Full 0/1 matrix ``B[i, j] = 1`` if i before j from the upper-triangle values ``y``."""
    B = np.zeros((n, n), dtype=bool)
    for (i, j), v in y.items():
        if v > 0.5:
            B[i, j] = True
        else:
            B[j, i] = True
    return B


def three_cycles(B: np.ndarray, limit: int | None = None) -> list[tuple[int, int, int]]:
    """Triples (i, j, k) forming a 3-cycle of the tournament ``B`` (a tournament is acyclic iff
    it has none)."""
    Bi = B.astype(np.int8)
    cyc = np.argwhere(Bi[:, :, None] & Bi[None, :, :] & Bi.T[:, None, :])  # i->j, j->k, k->i
    out = sorted({tuple(sorted(t)) for t in cyc.tolist()})
    return out[:limit] if limit is not None else out


def order_from_y(B: np.ndarray) -> list[int]:
    """Order of an acyclic tournament: by number of successors, descending (ties by index)."""
    wins = B.sum(axis=1)
    return [int(k) for k in sorted(range(len(wins)), key=lambda k: (-wins[k], k))]


@dataclass(frozen=True)
class LopVariables:
    """The variables of a :func:`build_lop` model: ``y[i, j]`` (L1) for i < j (the Pyomo
    component) and the pair costs ``pc`` of objective (1)."""

    y: Any
    pc: PairCosts

    @classmethod
    def of(cls, model: Any) -> LopVariables:
        """The handles of a model built by :func:`build_lop`."""
        return cls(y=model.y, pc=model.pc)


@dataclass(frozen=True)
class LopCpsatVariables:
    """The variables of a :func:`build_lop_cpsat` model: ``y[(i, j)]`` (L1) Booleans for i < j, the
    integer cost ``scale``, the ``constant`` of (1) and the rounding ``eps``:
    ``|objective (1) - (constant + model objective / scale)| <= eps`` for every order."""

    y: dict[tuple[int, int], Any]
    scale: float
    constant: float
    eps: float


def build_lop_cpsat(pc, *, max_size: int | None = None, hint: list[int] | None = None) -> tuple[Any, LopCpsatVariables]:
    """CP-SAT linear-ordering model with integer costs ``W = round(w * scale)``.

    Returns ``(model, variables)`` (:class:`LopCpsatVariables`): a CP-SAT bound ``B`` gives the
    valid bound ``constant + B/scale - eps`` on objective (1). The (L2) rows are named
    ``transitivity``.
    """
    from ortools.sat.python import cp_model

    pc = _pair_costs(pc)
    n = pc.n
    n_tri = n * (n - 1) * (n - 2) // 6
    check_model_size("sojourn linear-ordering (CP-SAT)", n * (n - 1) // 2, n_tri, max_size)
    const, w = pair_weights(pc)
    wmax = float(np.abs(w).max()) if n > 1 else 0.0
    scale = CPSAT_SCALE / wmax if wmax > 0 else 1.0
    W = np.rint(w * scale).astype(np.int64)
    iu = np.triu_indices(n, 1)
    eps = float(np.abs(W[iu] / scale - w[iu]).sum())  # |(1) - scaled model| <= eps for every order
    model = cp_model.CpModel()
    y = {(i, j): model.new_bool_var(f"y_{i}_{j}") for i, j in itertools.combinations(range(n), 2)}
    for i, j, k in itertools.combinations(range(n), 3):  # (L2)
        model.add(y[i, j] + y[j, k] - y[i, k] <= 1).with_name("transitivity")
        model.add(y[i, j] + y[j, k] - y[i, k] >= 0).with_name("transitivity")
    model.minimize(sum(int(W[i, j]) * y[i, j] for (i, j) in y if W[i, j] != 0))  # (1), scaled
    if hint is not None:
        pos = {k: p for p, k in enumerate(hint)}
        for (i, j), v in y.items():
            model.add_hint(v, pos[i] < pos[j])
    return model, LopCpsatVariables(y=y, scale=scale, constant=const, eps=eps)
