"""``benchmarks/mutation.py``, the mutation check: every planted line exists exactly once in the
sources, and a planted bug is caught by its tests while the unmutated copy passes them.

Both are slow-marked: the first fails whenever a mutated line is edited (the list must follow the
code, which is the point, but not in the default run of an engineer editing that line); the
second copies the package and runs pytest twice.
"""

from __future__ import annotations

import pytest

from benchmarks import mutation


@pytest.mark.slow
def test_every_mutant_names_a_line_that_exists_once():
    assert mutation.check_list() == []


@pytest.mark.slow
def test_a_planted_bug_is_killed_and_the_copy_is_restored():
    m = next(m for m in mutation.MUTANTS if m.name == "policy-rigid-random-ignores-seed")
    small = mutation.Mutant(**{**m.__dict__, "tests": ("tests/rigid/test_heuristics.py",)})
    out = mutation.run([small], tests_ref=None, timeout=300, log=lambda *_: None)
    assert out["killed"] == out["total"] == 1 and out["areas"] == {"policies": {"killed": 1, "total": 1}}


def test_the_areas_cover_the_simulator_the_verifier_the_bounds_and_the_policies():
    assert set(mutation.AREA_TESTS) == {"sim", "verify", "bounds", "policies"}
    assert {m.area for m in mutation.MUTANTS} == set(mutation.AREA_TESTS)
    assert all(m.old != m.new for m in mutation.MUTANTS)
    names = [m.name for m in mutation.MUTANTS]
    assert len(names) == len(set(names))
