"""The simulator summary's two waiting measures and two utilisation windows (issue 28 item 5)."""

from __future__ import annotations

import pytest

from optsched.core import Cluster, Job
from optsched.sim import Simulator, get_policy


def test_waiting_counts_the_waits_after_a_preemption_the_queue_delay_does_not():
    # one GPU: A starts at 0, B (shorter) arrives at 1 and preempts A, which waits 2 s and resumes
    res = Simulator(
        Cluster.homogeneous(1, 1), [Job("A", work=10), Job("B", work=2, arrival=1)], get_policy("srtf")
    ).run()
    s = res.summary()
    assert s["n_preemptions"] == 1
    assert s["mean_queue_delay"] == pytest.approx(0.0)  # both jobs started when they arrived
    assert s["total_waiting"] == pytest.approx(2.0) and s["mean_waiting"] == pytest.approx(1.0)
    assert s["p99_waiting"] >= s["p50_waiting"]


def test_utilization_over_the_arrival_window_and_over_the_makespan():
    # A holds the GPU for 1 s of the 10 s in which jobs arrive; B then runs 10 s alone (the drain)
    res = Simulator(
        Cluster.homogeneous(1, 1), [Job("A", work=1), Job("B", work=10, arrival=10)], get_policy("fifo")
    ).run()
    s = res.summary()
    assert s["mean_utilization_arrivals"] == pytest.approx(1 / 10)
    assert s["mean_utilization_makespan"] == pytest.approx(11 / 20)
    assert s["mean_utilization"] == pytest.approx(s["mean_utilization_makespan"])  # the old key, kept


def test_utilization_arrivals_is_none_when_every_job_arrives_at_once():
    res = Simulator(Cluster.homogeneous(1, 2), [Job(0, work=1), Job(1, work=3)], get_policy("fifo")).run()
    s = res.summary()
    assert s["mean_utilization_arrivals"] is None
    assert s["mean_utilization_makespan"] == pytest.approx((1 + 3) / (2 * 3))


def test_cli_summary_names_both_windows(capsys):
    from optsched.cli import main

    code = main(["simulate", "--trace", "synthetic", "--jobs", "300", "--servers", "2", "--policy", "srtf", "--json"])
    import json

    s = json.loads(capsys.readouterr().out)
    assert code == 0
    assert s["mean_utilization_arrivals"] > s["mean_utilization_makespan"] > 0  # the drain tail lowers the latter
    assert s["mean_waiting"] >= s["mean_queue_delay"]
    assert s["utilization_window"].startswith("arrivals: ") and "; makespan: 0 to " in s["utilization_window"]
