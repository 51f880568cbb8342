"""Baselines of paper 001 (issue 13, item 7): run_baseline, the kind algorithms and jain_greedy."""

from __future__ import annotations

import pytest

from optsched.elastic import toy_instance
from optsched.elastic.baselines import BASELINES, run_baseline
from optsched.elastic.checks import violations
from optsched.elastic.generate import random_instance


@pytest.mark.parametrize("name", BASELINES)
def test_every_baseline_finishes_the_toy(name):
    r = run_baseline(toy_instance(), name, seed=0)
    assert r.algorithm == f"elastic-{name}"
    assert set(r.info["completions"]) == {0, 1}


def test_fifo_schedule_passes_the_verifier():
    inst = random_instance(5, seed=3)
    r = run_baseline(inst, "fifo", seed=1)
    assert violations(inst, r.schedule) == [] or all(v.label == "horizon" for v in violations(inst, r.schedule))
