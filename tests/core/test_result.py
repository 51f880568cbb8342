"""optsched.core.result: statuses, the relative gap and a result's row."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.core import Result, Status, relative_gap

finite = st.floats(-1e12, 1e12, allow_nan=False)


@given(finite, finite)
def test_the_gap_is_relative_to_the_objective_and_never_negative(obj, bound):
    gap = relative_gap(obj, bound)
    assert gap is not None and gap >= 0
    assert math.isclose(gap, abs(obj - bound) / max(abs(obj), 1e-10), rel_tol=1e-12)
    assert relative_gap(obj, obj) == 0


@pytest.mark.parametrize(("obj", "bound"), [(None, 1.0), (1.0, None), (math.inf, 1.0), (1.0, math.nan)])
def test_no_gap_without_two_finite_values(obj, bound):
    assert relative_gap(obj, bound) is None


def test_which_statuses_carry_a_solution():
    assert {s for s in Status if s.has_solution} == {Status.OPTIMAL, Status.FEASIBLE, Status.HEURISTIC}


def test_a_result_is_optimal_only_by_its_status_and_its_row_names_it():
    r = Result("a", "i", 3.0, "makespan", status=Status.OPTIMAL, bound=3.0, gap=0.0)
    assert r.optimal and not Result("a", "i", 3.0, "makespan", status=Status.FEASIBLE).optimal
    row = r.to_row()
    assert (row["algorithm"], row["instance"], row["objective_name"], row["status"]) == (
        "a",
        "i",
        "makespan",
        "optimal",
    )
    assert row["objective"] == pytest.approx(3.0) and row["gap"] == 0.0
