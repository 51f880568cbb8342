"""The paper's results as checkable statements (static setting).

* :func:`pairwise_lower_bound` - ``sum_i d_i + sum_{i<j} min(c[i,j], c[j,i])`` <= objective (1) of
  every order, and (Thm III.1) of every static stage sequence; attained iff the pairwise
  preferences are transitive.
* :func:`thm_III_2_holds` - adjacent-pair criterion (3) at an order (necessary for optimality).
* :func:`alpha_limit_closed_form` - the right-hand side of Eq. (22) (Lemma III.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from optsched.sojourn.evaluate import PairCosts, pair_costs
from optsched.sojourn.model import SojournInstance
from optsched.sojourn.policies import adjacent_pair_violations


def pairwise_lower_bound(pc: PairCosts) -> float:
    """Lower bound on objective (1) over all orders: each pair takes its cheaper orientation.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> round(pairwise_lower_bound(pair_costs(inst)), 10)
    9.1
    """
    iu = np.triu_indices(pc.n, 1)
    return float(pc.d.sum() + np.minimum(pc.c[iu], pc.c.T[iu]).sum())


def thm_III_2_holds(instance: SojournInstance, order: Sequence[Any], pc: PairCosts | None = None) -> bool:
    """True iff every adjacent pair (i before j) of ``order`` has R^N_ij(i) <= R^N_ij(j)."""
    return not adjacent_pair_violations(instance, order, pc or pair_costs(instance))


def alpha_limit_closed_form(beta: float, n: int) -> float:
    """Eq. (22): [N b (b+1)^(N-1) - (b+1)^N + 1] / [N (N-1) b^2]  /  [((b+1)^(N-1) - 1) / ((N-1) b)],
    the value of alpha_ij(N) when every other job has s/(1-s) = beta; tends to 1 as N grows.

    >>> [round(alpha_limit_closed_form(2.0, n), 4) for n in (3, 10, 200)]  # = alpha_ij(N) when all s = 2/3
    [0.5833, 0.85, 0.9925]
    """
    b, N = float(beta), int(n)
    # work in logs of (b+1)^(N-1) to avoid overflow
    lg = (N - 1) * math.log1p(b)
    num = (N * b - (b + 1) + math.exp(-lg)) / (N * (N - 1) * b * b)
    den = (1 - math.exp(-lg)) / ((N - 1) * b)
    return num / den
