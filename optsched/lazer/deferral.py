"""Deferral choosers for Lazer's line 4 (X <- DEFERRALPREDICTOR(j_new, J_r)).

A chooser sees one :class:`Decision` (time, j_new, J_r, context c of (5)) and returns X >= 0.
Choosers with ``needs_feedback`` get the counterfactual F (L3) back through :meth:`observe`
at ``t0 + p* + l_new`` (when every arrival that could cut j_new's load is known).

References (formulations/lazer.md, reading 5): :class:`ZeroDeferral` (X = 0),
:class:`FixedDeferral` (X = x), :class:`OracleDeferral` (X = F, reading the future arrivals).

Tested in ``tests/lazer/test_predictor.py`` and ``tests/lazer/test_policy.py``.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

from optsched.exceptions import InvalidOptionError


@dataclass
class Decision:
    """One preemption decision: j_new at ``t0`` with victims J_r; ``context`` is c of (5):
    (mean gap of the last hour's arrivals, T'_new, l_new, max p over J_r)."""

    t0: float
    job_id: Any
    victims: tuple
    context: tuple[float, float, float, float]
    x: float = 0.0
    f: float | None = None  # counterfactual F, once observed
    stage: str = ""  # the chooser's stage (bootstrap / acquisition / exploitation) if any
    extra: dict = field(default_factory=dict)

    @property
    def p_star(self) -> float:
        return self.context[3]

    @property
    def l_new(self) -> float:
        return self.context[2]

    @property
    def t_new(self) -> float:
        return self.context[1]


def counterfactual_f(times, works, t0: float, p_star: float, l_new: float, t_new: float) -> float:
    """(L3): with arrivals ``times`` (sorted) and their durations ``works``, the load j_new would
    lose if started at ``t0``: ``A' - t0 - p*`` for the first arrival ``A' > t0 + p*`` shorter than
    ``t_new`` if ``A' <= t0 + p* + l_new``, else 0.

    Examples
    --------
    >>> counterfactual_f([0, 5, 9, 12], [50, 30, 3, 1], t0=0, p_star=2, l_new=10, t_new=20)
    7
    >>> counterfactual_f([0, 13], [50, 1], t0=0, p_star=2, l_new=10, t_new=20)   # 13 > 2 + 10
    0.0
    """
    lo = t0 + p_star
    hi = lo + l_new
    i = bisect.bisect_right(times, lo)
    n = len(times)
    while i < n and times[i] <= hi:
        if works[i] < t_new:
            return times[i] - lo
        i += 1
    return 0.0


class DeferralChooser:
    """Base class: X = 0. Subclasses override :meth:`choose` (and :meth:`observe`)."""

    name = "zero"
    needs_feedback = False

    def reset(self, sim: Any, policy: Any) -> None:
        """Before a run (per-run state here; options only in ``__init__``)."""

    def choose(self, sim: Any, policy: Any, decision: Decision) -> float:
        return 0.0

    def observe(self, decision: Decision) -> None:
        """``decision.f`` has been observed (only if ``needs_feedback``)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ZeroDeferral(DeferralChooser):
    """X = 0: Lazer reduces to its orchestrator and completion handler."""

    name = "zero"


class FixedDeferral(DeferralChooser):
    """X = ``x`` seconds for every decision (x > 0; the issue's references use 10, 30, 60)."""

    name = "fixed"

    def __init__(self, x: float):
        if isinstance(x, bool) or not (isinstance(x, (int, float)) and x >= 0 and math.isfinite(x)):
            raise InvalidOptionError(f"The fixed deferral 'x' must be a finite number of seconds >= 0; got {x!r}.")
        self.x = float(x)

    def choose(self, sim, policy, decision):
        return self.x

    def __repr__(self) -> str:
        return f"FixedDeferral({self.x:g})"


class OracleDeferral(DeferralChooser):
    """X = F (L3) computed from the future arrivals (a reference no online scheduler can be)."""

    name = "oracle"

    def reset(self, sim, policy):
        order = sorted(sim.jobs, key=lambda j: (j.arrival, j.index))
        self._t = [j.arrival for j in order]
        self._w = [j.work for j in order]

    def choose(self, sim, policy, decision):
        return counterfactual_f(self._t, self._w, decision.t0, decision.p_star, decision.l_new, decision.t_new)
