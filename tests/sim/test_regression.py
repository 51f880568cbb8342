"""Per-job results pinned: FIFO, SJF, SRTF and LAS under every placement rule on two seeded
workloads (``data/regression.json``, written by ``make_regression_fixture.py``). Engine work must
keep every decision: a difference here is a change of behaviour, to be intended and explained."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from .make_regression_fixture import POLICIES, RULES, run

DATA = json.loads((Path(__file__).parent / "data" / "regression.json").read_text())


@pytest.mark.parametrize("k", range(len(DATA["cases"])))
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("policy", POLICIES)
def test_per_job_results_unchanged(policy, rule, k):
    case = DATA["cases"][k]
    want = case["runs"][f"{policy}/{rule}"]
    got = run(case["case"], case["jobs"], policy, rule)
    np.testing.assert_allclose(got["completion"], want["completion"], rtol=1e-12, atol=1e-9)
    assert got["n_preemptions"] == want["n_preemptions"]
