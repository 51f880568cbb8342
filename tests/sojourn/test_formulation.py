"""formulations/sojourn.md is the spec: the model's value equals the evaluator; builders take the
instance or its pair costs (the labels: tests/test_formulation_labels.py)."""

from __future__ import annotations

import optsched
from optsched.sojourn.evaluate import pair_costs
from optsched.sojourn.formulation import build_lop


def test_model_value_equals_evaluator():
    import pyomo.environ as pyo

    inst = optsched.load_instance(optsched.toy_path("sojourn-four-jobs"))
    pc = pair_costs(inst)
    m = build_lop(pc)
    order = [2, 0, 3, 1]
    pos = {k: p for p, k in enumerate(order)}
    for i, j in m.PAIRS:
        m.y[i, j].value = 1 if pos[i] < pos[j] else 0
    assert pyo.value(m.successful_sojourn_time) == __import__("pytest").approx(pc.order_value(order))
    for i, j, k in m.CYCLES:
        assert 0 <= pyo.value(m.transitivity[i, j, k].body) <= 1


def test_builders_take_the_instance_or_its_pair_costs():
    """Issue 10 item 6: build_<formulation>(instance, *, max_size) like every paper; PairCosts still work."""
    import pytest

    from optsched.exceptions import InvalidInstanceError, ModelTooLargeError
    from optsched.sojourn.formulation import build_lop_cpsat
    from optsched.sojourn.generate import random_instance

    inst = random_instance(5, seed=2)
    pc = pair_costs(inst)
    a, b = build_lop(inst), build_lop(pc)
    assert len(a.y) == len(b.y) == 10 and len(a.transitivity) == len(b.transitivity) == 10
    (_, ha), (_, hb) = build_lop_cpsat(inst), build_lop_cpsat(pc)
    assert ha.scale == pytest.approx(hb.scale) and ha.constant == pytest.approx(hb.constant)
    for build in (build_lop, build_lop_cpsat):
        with pytest.raises(ModelTooLargeError):
            build(inst, max_size=1)
    with pytest.raises(InvalidInstanceError, match="kind 'sojourn'"):
        build_lop(object())
