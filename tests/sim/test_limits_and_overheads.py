"""Issue 24: per-job load/save times (``Job.load_time`` / ``save_time``, job-table columns), the
run's limits (``Simulator.run(max_time=, max_events=)``) and their bad input."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, SimulationError, SimulationLimitError
from optsched.sim import Policy, Simulator, get_policy


def _frame(res):
    return res.jobs_frame().set_index("job_id")


def test_per_job_load_and_save_times_equal_the_same_times_given_by_a_function():
    jobs = [Job(0, work=9, save_time=1), Job(1, work=6, arrival=1, load_time=4, save_time=1), Job(2, work=1, arrival=4)]
    own = _frame(Simulator(Cluster.homogeneous(1, 2), jobs, get_policy("srtf")).run())
    loads, saves = {0: 0.0, 1: 4.0, 2: 0.0}, {0: 1.0, 1: 1.0, 2: 0.0}
    plain = [Job(j.id, work=j.work, arrival=j.arrival) for j in jobs]
    fn = _frame(
        Simulator(
            Cluster.homogeneous(1, 2),
            plain,
            get_policy("srtf"),
            load_time=lambda j, pl: loads[j.id],
            save_time=lambda j, pl: saves[j.id],
        ).run()
    )
    cols = ["completion", "loading_time", "saving_time", "futile_time", "n_preemptions"]
    pd.testing.assert_frame_equal(own[cols], fn[cols])
    assert own.loc[1, "loading_time"] == pytest.approx(3 + 4)  # a load cut at 4 (3 s, futile), then a whole one


def test_a_job_table_carries_load_and_save_columns_and_a_jobs_own_value_wins():
    df = pd.DataFrame({"arrival": [0.0, 1.0], "gpus": [1, 1], "duration": [10.0, 2.0], "load_time": [2.0, 0.0]})
    res = Simulator(Cluster.homogeneous(1, 1), df, get_policy("fifo"), load_time=100.0).run()
    assert _frame(res)["loading_time"].tolist() == pytest.approx([2.0, 0.0])  # not the option's 100 s
    assert Job(0, work=1, load_time=3).to_dict()["load_time"] == 3.0
    assert Job.from_dict({"id": 0, "work": 1, "save_time": 2}).save_time == 2.0


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_bad_load_or_save_times_are_refused_naming_the_field(bad):
    with pytest.raises(InvalidInstanceError, match="load_time"):
        Job(0, work=1, load_time=bad)
    with pytest.raises(InvalidInstanceError, match="save_time"):
        Job(0, work=1, save_time=bad)
    df = pd.DataFrame({"arrival": [0.0], "gpus": [1], "duration": [1.0], "save_time": [bad]})
    with pytest.raises(InvalidInstanceError, match="'save_time' field of job 0"):
        Simulator(Cluster.homogeneous(1, 1), df, get_policy("srtf"))
    with pytest.raises(InvalidOptionError, match="load_time"):
        Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], get_policy("srtf"), load_time=bad)
    sim = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], get_policy("srtf"), load_time=lambda j, pl: bad)
    with pytest.raises(SimulationError, match=r"'load_time' function gave .* for job 0"):
        sim.run()


@pytest.mark.parametrize("opt", ["max_time", "max_events"])
@pytest.mark.parametrize("bad", [0, -5, math.nan, "soon", True, 2.5])
def test_bad_limits_are_refused_before_the_run(opt, bad):
    if opt == "max_time" and bad == 2.5:
        return  # 2.5 s is a fine time limit
    sim = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], get_policy("fifo"))
    with pytest.raises(InvalidOptionError, match=opt):
        sim.run(**{opt: bad})


class _Churn(Policy):
    """Starts the waiting job and preempts it at every event: a livelock that advances time."""

    name = "churn"

    def on_start(self, sim):
        sim.set_timer(1.0, period=1.0)

    def schedule(self, sim):
        for j in sim.jobs:
            if j.phase in ("loading", "training") and sim.now > j.first_start:
                sim.preempt(j)
            elif j.phase == "waiting":
                sim.start(j)


def test_a_livelock_stops_at_its_limit_with_a_message_naming_policy_time_events_and_jobs():
    jobs = [Job(0, work=10, load_time=2)]
    with pytest.raises(SimulationLimitError) as e:
        Simulator(Cluster.homogeneous(1, 1), jobs, _Churn()).run(max_events=500)
    msg = str(e.value)
    assert "'churn'" in msg and "max_events=500" in msg and "job 0" in msg and "simulated time" in msg
    with pytest.raises(SimulationLimitError, match="max_time=50"):
        Simulator(Cluster.homogeneous(1, 1), jobs, _Churn()).run(max_time=50)
    sim = Simulator(Cluster.homogeneous(1, 1), jobs, _Churn())
    t, n = sim._limits("auto", "auto")  # the defaults are finite: a run cannot hang
    assert t == pytest.approx(1_000 * 10 + 1e6) and n == 1_000_000 + 1_000
    assert sim._limits(None, None) == (math.inf, math.inf)


#: Workloads of up to 30 jobs on 2 x 4 GPUs: arrivals often equal (one instant), 1 to 8 GPUs (a job
#: may span both servers), work from a thousandth of a second to an hour.
workloads = st.lists(
    st.tuples(
        st.integers(0, 20).map(float) | st.floats(0, 3600),
        st.integers(1, 8),
        st.sampled_from([1e-3, 1.0, 3600.0]) | st.floats(1e-3, 3600),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=30, deadline=None)
@given(jobs=workloads)
@example(jobs=[(0.0, 8, 3600.0)] * 30)  # the most work: 30 whole-cluster hours back to back
@example(jobs=[(0.0, 1, 1e-3)] * 30)  # the most events per second of work
def test_the_default_limits_never_stop_a_legitimate_run(jobs):
    df = pd.DataFrame(jobs, columns=["arrival", "gpus", "duration"])
    for name in ("srtf", "las", "srtf-periodic"):
        res = Simulator(Cluster.homogeneous(2, 4), df, get_policy(name), load_time=5.0, save_time=3.0).run()
        f = res.jobs_frame()
        assert (f["status"] == "done").all(), name
        assert (f["completion"] >= df["arrival"] + df["duration"] - 1e-6).all(), name


def test_a_job_file_carries_load_and_save_columns(tmp_path):
    from optsched.exceptions import TraceFormatError
    from optsched.traces import read_jobs

    p = tmp_path / "jobs.csv"
    p.write_text("arrival,gpus,duration,load_time,save_time\n0,1,10,2,1\n1,1,2,0,0\n")
    df = read_jobs(p)
    res = Simulator(Cluster.homogeneous(1, 1), df, get_policy("srtf")).run()
    f = _frame(res)
    assert f["completion"].tolist() == pytest.approx([15.0, 3.0])  # job 0's load is cut at 1 (futile 1 s)
    assert f["futile_time"].tolist() == pytest.approx([1.0, 0.0])
    p.write_text("arrival,gpus,duration,load_time\n0,1,10,-2\n")
    with pytest.raises(TraceFormatError, match="load_time"):
        read_jobs(p)
