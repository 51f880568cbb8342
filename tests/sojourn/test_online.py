"""The online heuristic of Sec. V on the shared simulator."""

from __future__ import annotations

import json

import numpy as np
import pytest

import optsched
from optsched.sojourn.evaluate import expected_sojourn, pair_costs
from optsched.sojourn.model import SojournSchedule
from optsched.sojourn.online import (
    INDICES,
    StagedOnlinePolicy,
    online_workload,
    philly_staged_jobs,
    simulate_online,
)
from optsched.sojourn.policies import index_stage_sequence, remaining_expected_size, sr_rank


def _sim_jobs(inst):
    from optsched.core import Job

    return [
        Job(
            j.id,
            work=j.size,
            gpus=1,
            arrival=j.arrival,
            attrs={"sizes": list(j.sizes), "probs": list(j.probs), "stages": list(j.stage_lengths)},
        )
        for j in inst.jobs
    ]


def _cond_rank(j, d):
    x0 = j.sizes[d - 1] if d else 0.0
    return sum((x - x0) * p for x, p in zip(j.sizes[d:], j.probs[d:], strict=True)) / j.success_prob


@pytest.mark.parametrize(
    "index, fn", [("rank", _cond_rank), ("sr", lambda j, d: sr_rank(j, d)[0]), ("serpt", remaining_expected_size)]
)
def test_one_server_no_arrivals_matches_the_exact_static_evaluator(index, fn):
    """W = 1, all arrivals 0: the online policy is the index policy, whose exact value is known;
    the simulator's average over sampled outcomes must agree (99.9 % CI)."""
    inst = optsched.load_instance(optsched.toy_path("sojourn-four-jobs"))
    exact = expected_sojourn(inst, SojournSchedule(stages=index_stage_sequence(inst, fn)), pair_costs(inst))
    rng = np.random.default_rng(0)
    jobs = _sim_jobs(inst)
    vals = []
    for _ in range(1500):
        stop = {j.id: int(rng.choice(np.arange(1, j.n_stages + 1), p=j.probs)) for j in inst.jobs}
        term = {k: v for k, v in stop.items() if v < inst.jobs[inst.index_of(k)].n_stages}
        m, _ = simulate_online(jobs, term, servers=1, index=index)
        vals.append(0.0 if np.isnan(m) else m)
    vals = np.array(vals)
    se = vals.std(ddof=1) / np.sqrt(len(vals))
    assert abs(vals.mean() - exact) <= 3.3 * se, (vals.mean(), exact, se)


def test_section_V_example_switches_at_the_checkpoint():
    from optsched.core import Cluster, Job
    from optsched.sim import Simulator

    jobs = [
        Job(1, work=10, gpus=1, arrival=0, attrs={"sizes": [4, 10], "probs": [0.4, 0.6], "stages": [4, 6]}),
        Job(2, work=2, gpus=1, arrival=2, attrs={"sizes": [1, 2], "probs": [0.2, 0.8], "stages": [1, 1]}),
    ]
    res = Simulator(Cluster.homogeneous(1, 1), jobs, StagedOnlinePolicy("rank")).run()
    df = res.jobs_frame().set_index("job_id")
    assert df.loc[2, "completion"] == pytest.approx(6.0) and df.loc[1, "completion"] == pytest.approx(12.0)
    assert df.loc[1, "n_preemptions"] == 1


def test_online_workload_outcomes_and_policies():
    jobs, term = online_workload(300, servers=4, success=0.5, seed=1)
    assert 100 < len(term) < 200
    for idx in INDICES:
        mean, res = simulate_online(jobs, term, servers=4, index=idx)
        df = res.jobs_frame()
        failed = set(df.loc[df["status"] == "failed", "job_id"])
        assert failed == set(term) and np.isfinite(mean)
        assert (df["n_preemptions"] == 0).all() if idx == "fifo" else True


def test_philly_mapping(tmp_path):
    rows = [
        {
            "status": "Pass",
            "jobid": "a",
            "submitted_time": "2017-10-07 01:00:00",
            "attempts": [
                {"start_time": "2017-10-07 01:00:10", "end_time": "2017-10-07 01:01:10", "detail": []},
                {"start_time": "2017-10-07 01:02:00", "end_time": "2017-10-07 01:02:30", "detail": []},
            ],
        },
        {
            "status": "Killed",
            "jobid": "b",
            "submitted_time": "2017-10-07 01:00:05",
            "attempts": [{"start_time": "2017-10-07 01:00:20", "end_time": "2017-10-07 01:00:40", "detail": []}],
        },
        {"status": "Failed", "jobid": "c", "submitted_time": "2017-10-07 01:00:05", "attempts": []},
    ]
    p = tmp_path / "log.json"
    p.write_text(json.dumps(rows))
    jobs, term = philly_staged_jobs(p, seed=0)
    assert [j.id for j in jobs] == ["a", "b"] and term == {"b": 1}
    a, b = jobs
    assert a.attrs["stages"] == [60.0, 30.0] and a.arrival == 0.0 and b.arrival == 5.0
    assert len(b.attrs["stages"]) >= 2 and b.attrs["stages"][0] == 20.0
    assert sum(a.attrs["probs"]) == pytest.approx(1.0)
    mean, _ = simulate_online(jobs, term, servers=1)
    assert mean > 0
