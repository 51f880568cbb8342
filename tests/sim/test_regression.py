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


@pytest.mark.parametrize("k", range(len(DATA["cases"])))
def test_the_pinned_results_are_schedules(k):
    """The pinned numbers are the engine's own output when the fixture was written: they catch a
    change, not an error. What they must satisfy is checked here from the fixture alone: every job
    ends after its arrival plus its work; the non-preemptive FIFO and SJF never preempt and, each job
    holding its GPUs on [completion - work, completion), never use more GPUs than the cluster has;
    and the preemptive SRTF and LAS finish the same total work, so their last completion is no
    earlier than the total GPU-seconds over the cluster's GPUs after the first arrival."""
    case = DATA["cases"][k]
    c, jobs = case["case"], case["jobs"]
    arrival, work, gpus = (np.asarray(jobs[f], dtype=float) for f in ("arrival", "work", "gpus"))
    total = c["servers"] * c["gpus"]
    for name, res in case["runs"].items():
        policy = name.split("/")[0]
        done = np.asarray(res["completion"])
        assert np.all(done >= arrival + work - 1e-6), name
        if policy in ("fifo", "sjf"):
            assert not any(res["n_preemptions"]), name
            times = np.round(np.concatenate([done - work, done]), 6)  # a start at a completion: equal
            delta = np.concatenate([gpus, -gpus])
            order = np.lexsort((delta, times))  # at one time, releases before starts
            assert np.cumsum(delta[order]).max() <= total, name
        assert done.max() >= arrival.min() + float((work * gpus).sum()) / total - 1e-6, name
