"""The shape each elastic baseline runs a job with, and where it goes: :class:`Shape` (worker type m,
PS type p, q, N workers, d slots), the *ideal configuration* of a job (:func:`ideal_config`, Sec. 7
"the same as that in the ideal case": the configuration of the restricted Gamma_j with the least
duration d on the empty cluster, ties by the least total use d * sum_h sum_r f_jh^r, then by
Gamma_j's order), FIFO's drawn shape (:func:`fifo_shape`), and the placement of a shape on the free
resources (:func:`find_placement`): q = 1 puts N workers and one PS on one server, q = 0 puts the
PSs (s = max(1, ceil((N - g) b_m / B_p)), (2i)) with g < N workers on one server (the most workers
there first, so the fewest PSs, then the lowest index) and the other workers on the servers with
the most room (RAR q = 0: at least two servers), so every start is a schedule of the restricted
Gamma_j (``formulations/elastic.md#gamma``).

The policies that use them are in :mod:`optsched.elastic.policy`. Tested in
``tests/elastic/test_policy.py`` and ``tests/elastic/test_baselines.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from optsched.elastic.gamma import Config, make_config, useful_counts_by_index
from optsched.elastic.model import ElasticInstance
from optsched.exceptions import InfeasibleError

TOL = 1e-9


@dataclass(frozen=True)
class Shape:
    """What a baseline fixes for a job before placing it: worker type m, PS type p (None for RAR),
    q (1: one server), N workers and the duration d = d_q(N) in slots."""

    m: int
    p: int | None
    q: int
    n: int
    d: int


def _no_config(instance: ElasticInstance, j: int) -> InfeasibleError:
    return InfeasibleError(
        f"{instance.jobs[j].label} has no configuration that fits the empty cluster (restricted Gamma_j "
        f"is empty); give it a smaller worker/PS type or larger servers."
    )


def candidate_shapes(instance: ElasticInstance, j: int) -> list[Shape]:
    """Every (m, p, q, useful N) of job index ``j`` with d = d_q(N), in that order (a larger N with
    the same d needs no less room, so the useful N of :func:`~optsched.elastic.gamma.useful_counts`
    suffice)."""
    out = []
    for m in range(instance.M):
        for p in range(instance.P) if instance.is_ps else [None]:
            for q in (1, 0):
                out.extend(Shape(m, p, q, n, d) for n, d in useful_counts_by_index(instance, j, m, p, q))
    return out


def shape_config(
    instance: ElasticInstance, j: int, shape: Shape, workers: Mapping[int, int], ps: Mapping[int, int]
) -> Config:
    """The :class:`~optsched.elastic.gamma.Config` of a placed shape."""
    return make_config(instance, j, shape.m, shape.p, shape.q, shape.n, shape.d, dict(workers), dict(ps))


def ideal_config(instance: ElasticInstance, j: int) -> Config:
    """The ideal configuration of job index ``j``: least d on the empty cluster, ties by the least
    total use d * sum_h sum_r f_jh^r, then the order of :func:`candidate_shapes` (see the module
    doc). Computed from the shapes and :func:`find_placement` on the empty servers, without
    enumerating Gamma_j (whose size grows with the compositions of N over H servers); the tests
    check it against Gamma_j.

    Raises
    ------
    InfeasibleError
        Naming the job, if no configuration fits.

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> c = ideal_config(toy_instance(), 0)
    >>> c.m, c.n_workers, c.d
    (1, 1, 10)
    """
    C = np.asarray(instance.C, dtype=float)
    best: tuple[int, float, Config] | None = None
    for sh in sorted(candidate_shapes(instance, j), key=lambda s: s.d):
        if best is not None and sh.d > best[0]:
            break
        got = find_placement(instance, sh, C)
        if got is None:
            continue
        cfg = shape_config(instance, j, sh, *got)
        key = (sh.d, sh.d * cfg.total_use)
        if best is None or key < best[:2]:
            best = (key[0], key[1], cfg)
    if best is None:
        raise _no_config(instance, j)
    return best[2]


def least_total_use(instance: ElasticInstance, j: int) -> float:
    """min over j's configurations of d * sum_h sum_r f_jh^r (slots x resource units), on the empty
    servers: the least total resource use of any schedule of job index ``j``.

    Raises
    ------
    InfeasibleError
        Naming the job, if no configuration fits.
    """
    C = np.asarray(instance.C, dtype=float)
    se = [float(sum(v)) for v in instance.e]
    sz = [float(sum(v)) for v in instance.z]

    def lower(sh: Shape) -> float:  # d (N sum e_m + sum z_p): at least one PS
        return sh.d * (sh.n * se[sh.m] + (sz[sh.p] if sh.p is not None else 0.0))

    best = None
    for sh in sorted(candidate_shapes(instance, j), key=lower):
        if best is not None and lower(sh) >= best - 1e-12:
            break
        got = find_placement(instance, sh, C)
        if got is not None:
            v = sh.d * float(placement_use(instance, sh, *got).sum())
            best = v if best is None else min(best, v)
    if best is None:
        raise _no_config(instance, j)
    return best


def ideal_shape(instance: ElasticInstance, j: int) -> Shape:
    c = ideal_config(instance, j)
    return Shape(c.m, c.p, c.q, c.n_workers, c.d)


def fifo_shape(instance: ElasticInstance, j: int, n: int) -> Shape:
    """The ideal worker/PS types with ``n`` workers (lowered to the largest count that fits the
    empty cluster, at least 1), and the q of least d that can hold them."""
    c = ideal_config(instance, j)
    for k in range(max(1, min(n, instance.jobs[j].chunks)), 0, -1):
        best = None
        for q in (1, 0):
            if instance.placeable(c.m, c.p, q, k):
                d = instance.duration(j, c.m, c.p, q, k)
                if best is None or d < best[0]:
                    best = (d, q)
        if best is not None:
            return Shape(c.m, c.p, best[1], k, best[0])
    raise _no_config(instance, j)  # pragma: no cover - the ideal configuration fits


# -- placement on free resources ------------------------------------------------------------------
def _fit_counts(free: np.ndarray, vec: np.ndarray, cap: int) -> np.ndarray:
    """How many copies of ``vec`` fit on each server of ``free`` (H x R), at most ``cap``."""
    pos = vec > 0
    if not pos.any():
        return np.full(free.shape[0], cap, dtype=np.int64)
    k = np.floor(np.maximum(free[:, pos], 0.0) / vec[pos] + TOL).min(axis=1)
    return np.minimum(k, cap).astype(np.int64)


def _spread(caps: np.ndarray, k: int, exclude: int | None) -> dict[int, int] | None:
    """k workers over the servers with the most room first (lower index among equals)."""
    out: dict[int, int] = {}
    for h in np.argsort(-caps, kind="stable"):
        h = int(h)
        if k == 0 or caps[h] <= 0:
            break
        if h == exclude:
            continue
        y = min(int(caps[h]), k)
        out[h] = y
        k -= y
    return out if k == 0 else None


def find_placement(
    instance: ElasticInstance, shape: Shape, free: np.ndarray
) -> tuple[dict[int, int], dict[int, int]] | None:
    """Workers and PSs per server for ``shape`` within ``free`` (H x R, the order of
    ``instance.resources``), or None (see the module doc for the rule).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> inst = toy_instance()
    >>> find_placement(inst, ideal_shape(inst, 0), np.array(inst.C, dtype=float))
    ({0: 1}, {0: 1})
    """
    e = np.asarray(instance.e[shape.m], dtype=float)
    z = np.asarray(instance.z[shape.p], dtype=float) if shape.p is not None else None
    n = shape.n
    if shape.q == 1:
        need = n * e + (z if z is not None else 0.0)
        ok = np.flatnonzero(np.all(need <= free + TOL, axis=1))
        if not len(ok):
            return None
        h = int(ok[0])
        return {h: n}, ({h: 1} if z is not None else {})
    caps = _fit_counts(free, e, n)
    if z is None:  # RAR, q = 0: at least two servers
        if n < 2:
            return None
        y = _spread(caps, n, None)
        if y is None:
            return None
        if len(y) == 1:
            (h0,) = y
            other = _spread(caps, 1, h0)
            if other is None:
                return None
            y[h0] -= 1
            y.update(other)
        return y, {}
    total = int(caps.sum())
    # the PS server nn holds g < N workers and s = max(1, ceil((N - g) b / B)) PSs; the most workers
    # there first (fewest PSs), then the lowest nn
    for g in range(min(n - 1, int(caps.max())), -1, -1):
        s = instance.ps_needed(shape.m, shape.p, n - g)
        ok = (total - caps >= n - g) & np.all(g * e + s * z <= free + TOL, axis=1)
        for nn in np.flatnonzero(ok):
            y = _spread(caps, n - g, int(nn))
            if y is None:  # pragma: no cover - total - caps[nn] >= n - g
                continue
            if g:
                y[int(nn)] = g
            return dict(sorted(y.items())), {int(nn): s}
    return None


def placement_use(
    instance: ElasticInstance, shape: Shape, workers: Mapping[int, int], ps: Mapping[int, int]
) -> np.ndarray:
    """Per-server use (H x R) of a placement."""
    out = np.zeros((instance.H, instance.R))
    e = np.asarray(instance.e[shape.m], dtype=float)
    for h, y in workers.items():
        out[h] += y * e
    if shape.p is not None:
        z = np.asarray(instance.z[shape.p], dtype=float)
        for h, s in ps.items():
            out[h] += s * z
    return out
