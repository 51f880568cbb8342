"""Issue 26 for elastic: (8) with the arrivals (2j) as a public entry point."""

from __future__ import annotations

import pytest

from optsched.core.io import instance_from_dict
from optsched.elastic import solve_maxweight, toy_instance
from optsched.solvers import SolveOptions
from optsched.verify import verify

OPTS = SolveOptions(time_limit=20, threads=1)


def test_maxweight_with_arrivals():
    """Job 1 (weight 5) arrives at slot 1 and needs 10 slots: by tau = 10 it completes only if (8) ignores its
    arrival, as printed ((7) has no (2j)); with ``arrivals=True`` only job 0 (weight 1) does."""
    d = toy_instance().to_dict()
    d["jobs"][1].update(weight=5, arrival=1)
    inst = instance_from_dict(d)
    printed = solve_maxweight(inst, tau=10, options=OPTS)
    assert printed.objective == pytest.approx(5.0) and printed.schedule[1].start == 0
    real = solve_maxweight(inst, tau=10, arrivals=True, options=OPTS)
    assert real.status.value == "optimal" and real.objective == pytest.approx(1.0)
    assert list(real.schedule) == [0]
    full = verify(inst, real.schedule)  # every scheduled job respects (2j)
    assert "2j" not in full.by_label()
