"""Pricing: the cheapest schedule of one job at given resource prices, (12)/(13) (PS) and (20)/(21) (RAR).

* :func:`min_cost` - the **exact oracle** (ties in cost: earliest completion first). By the dominance argument of
  ``formulations/elastic.md#gamma`` (nonnegative prices never make a dominating schedule dearer)
  it enumerates worker type m, PS type p, q, the useful N with d = d_q(N), the start t^-, and for
  q = 0 the PS server n and its worker count g < N; the other N - g workers go greedily to the
  servers with the least window price per worker (exact: workers of one type are identical, so the
  cost is linear in the per-server counts with per-server caps). RAR q = 0 must span two servers:
  when the greedy puts every worker on the cheapest server, one worker moves to the next cheapest
  (that is the best spanning placement). Every schedule respects the residual capacity
  omega = C - beta over its whole window (or the empty servers with ``residual=False``, which is
  what the dual (9) needs).
* :func:`a_mincost1` (Alg. 4, q = 0), :func:`a_mincost2` (Alg. 5, q = 1), :func:`a_ramincost1`
  (Alg. 6, q = 1), :func:`a_ramincost2` (Alg. 7, q = 0) - the paper's subroutines as printed, with
  the readings of ``formulations/elastic.md#pricing``.
* :func:`brute_force` - every feasible schedule (``gamma.all_configs`` x starts); tiny sizes only;
  with the random pricings that check the others against it in :mod:`optsched.elastic.pricing_audit`.

This module is the public face, a job by its id; the work is done by job position in
:mod:`~optsched.elastic.prices` (prices, costs), :mod:`~optsched.elastic.pricing_oracle` (the exact
oracle), :mod:`~optsched.elastic.pricing_subroutines` (Alg. 3-7 as printed) and
:mod:`~optsched.elastic.pricing_audit` (enumeration and random pricings). Tested in
``tests/elastic/test_pricing.py``.

Prices live in :class:`Prices`: ``beta[t, h, r]`` allocated, ``delta[t, h, r]`` unit prices, for
t in [0, tau).

>>> from optsched.elastic import toy_instance
>>> inst = toy_instance()
>>> pr = Prices.zero(inst, 20)
>>> pr.allocate(inst, 0, Priced(0.0, _toy_cfg(inst), 0).config, 0, lam=10.0)
>>> c = min_cost(inst, 1, pr)
>>> c.config.d, c.start, round(c.cost, 6)
(10, 10, 0.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from optsched.elastic.gamma import Config, make_config
from optsched.elastic.model import ElasticInstance
from optsched.elastic.prices import Priced, Prices
from optsched.elastic.pricing_oracle import least_use_by_index, min_cost_by_index, min_cost_reference_by_index
from optsched.elastic.pricing_subroutines import (
    a_mincost1_by_index,
    a_mincost2_by_index,
    a_ramincost1_by_index,
    a_ramincost2_by_index,
    paper_min_cost_by_index,
)


def _toy_cfg(instance: ElasticInstance) -> Config:
    """The 2-GPU configuration of job 0 of the Sec. 1 toy (for the module doctest)."""
    return make_config(instance, 0, 1, 0, 1, 1, 10, {0: 1}, {0: 1})


# -- public forms: a job by its id (docs/conventions.md#ids) ----------------------------------------
def min_cost(
    instance: ElasticInstance,
    job: Any,
    prices: Prices,
    *,
    q: int | None = None,
    residual: bool = True,
    types: Iterable[tuple[int, Any]] | None = None,
) -> Priced | None:
    """The exact oracle for the job with id ``job``: its least-cost schedule completing by tau (see
    the module doc); ``q`` restricts to one case; ``None`` if no schedule fits."""
    return min_cost_by_index(instance, instance.job_index(job, "min_cost"), prices, q=q, residual=residual, types=types)


def min_cost_reference(
    instance: ElasticInstance,
    job: Any,
    prices: Prices,
    *,
    q: int | None = None,
    residual: bool = True,
    types: Iterable[tuple[int, Any]] | None = None,
) -> Priced | None:
    """The exact oracle one start at a time in plain loops (the reference for :func:`min_cost`), job by id."""
    j = instance.job_index(job, "min_cost_reference")
    return min_cost_reference_by_index(instance, j, prices, q=q, residual=residual, types=types)


def least_use(instance: ElasticInstance, job: Any, T: int | None = None) -> float | None:
    """The least total use sum_{t, h, r} f_jh^r(l) over the schedules of the job with id ``job`` completing
    within ``T`` slots (default the horizon): the oracle at unit prices on the empty cluster;
    ``None`` if no schedule fits.

    >>> from optsched.elastic import toy_instance
    >>> round(least_use(toy_instance(), 0), 6)
    40.0
    """
    return least_use_by_index(instance, instance.job_index(job, "least_use"), T)


def a_mincost1(
    instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True, reset_n_hat: bool = True
) -> Priced | None:
    """Alg. 4 (A_mincost1, PS, q = 0) for the job with id ``job``; see :func:`a_mincost1_by_index` for the readings
    (``reset_n_hat=False``: the literal text, N^ set once per L)."""
    j = instance.job_index(job, "a_mincost1")
    return a_mincost1_by_index(instance, j, prices, residual=residual, reset_n_hat=reset_n_hat)


def a_mincost2(instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 5 (A_mincost2, PS, q = 1) for the job with id ``job`` (see :func:`a_mincost2_by_index`)."""
    return a_mincost2_by_index(instance, instance.job_index(job, "a_mincost2"), prices, residual=residual)


def a_ramincost1(instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 6 (A_RAmincost1, RAR, q = 1) for the job with id ``job`` (see :func:`a_ramincost1_by_index`)."""
    return a_ramincost1_by_index(instance, instance.job_index(job, "a_ramincost1"), prices, residual=residual)


def a_ramincost2(instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 7 (A_RAmincost2, RAR, q = 0) for the job with id ``job`` (see :func:`a_ramincost2_by_index`)."""
    return a_ramincost2_by_index(instance, instance.job_index(job, "a_ramincost2"), prices, residual=residual)


def paper_min_cost(instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 3 lines 3-7 for the job with id ``job``: the cheaper of the two printed subroutines."""
    return paper_min_cost_by_index(instance, instance.job_index(job, "paper_min_cost"), prices, residual=residual)
