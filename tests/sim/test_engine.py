"""Hand-checked engine behaviour: phases, overheads, stages, timers, rate models, illegal decisions."""

import pytest

from optsched.core import Cluster, Job
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, SimulationError
from optsched.sim import (
    FIFO,
    FunctionRate,
    PlacementRate,
    Policy,
    Preempt,
    SetTimer,
    Simulator,
    Start,
    replay_log,
)


def frame(res):
    return res.jobs_frame().set_index("job_id")


def test_fifo_two_jobs_one_server():
    jobs = [Job(0, work=4, gpus=2), Job(1, work=2, gpus=2, arrival=1)]
    df = frame(Simulator(Cluster.homogeneous(1, 2), jobs, FIFO()).run())
    assert df.loc[0, "completion"] == 4 and df.loc[1, "first_start"] == 4 and df.loc[1, "completion"] == 6
    assert df.loc[1, "queue_delay"] == 3 and df.loc[1, "jct"] == 5 and df.loc[1, "waiting"] == 3


def test_load_and_save_times_and_preemption_accounting():
    class PreemptAt(Policy):
        name = "preempt-at"

        def on_start(self, sim):
            sim.set_timer(4.0, data="preempt")

        def on_timer(self, sim, timer):
            return [Preempt(0)]

        def schedule(self, sim):
            j = sim.job(0)
            if j.phase == "waiting" and sim.fits(j):
                sim.start(j)

    res = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=5)], PreemptAt(), load_time=1.0, save_time=2.0).run()
    df = frame(res)
    # load [0,1), train [1,4) -> 3 done, save [4,6), load [6,7), train [7,9)
    assert df.loc[0, "completion"] == pytest.approx(9.0)
    assert df.loc[0, "loading_time"] == pytest.approx(2.0)
    assert df.loc[0, "training_time"] == pytest.approx(5.0)
    assert df.loc[0, "saving_time"] == pytest.approx(2.0)
    assert df.loc[0, "n_preemptions"] == 1 and df.loc[0, "waiting"] == pytest.approx(0.0)
    segs = res.schedule().segments(0)
    assert [(s.start, s.end) for s in segs] == [(0.0, 6.0), (6.0, 9.0)]


def test_futile_preemption_during_loading():
    class CutLoad(Policy):
        name = "cut"

        def on_start(self, sim):
            self.cut = False
            sim.set_timer(0.5)

        def on_timer(self, sim, timer):
            sim.preempt(0)
            self.cut = True

        def schedule(self, sim):
            j = sim.job(0)
            if j.phase == "waiting":
                sim.start(j)

    df = frame(Simulator(Cluster.homogeneous(1, 1), [Job(0, work=2)], CutLoad(), load_time=1.0, save_time=5.0).run())
    # loading cut at 0.5 (futile, nothing to save), restart at 0.5: load to 1.5, train to 3.5
    assert df.loc[0, "futile_time"] == pytest.approx(0.5)
    assert df.loc[0, "saving_time"] == 0.0
    assert df.loc[0, "completion"] == pytest.approx(3.5)


def test_stages_checkpoints_and_hidden_early_termination():
    seen = []

    class Watch(FIFO):
        def on_checkpoint(self, sim, job):
            seen.append((sim.now, job.id, job.stage))

    jobs = [Job(0, work=6, attrs={"stages": [1, 2, 3]}), Job(1, work=4, attrs={"stages": [2, 2]})]
    res = Simulator(Cluster.homogeneous(1, 2), jobs, Watch(), terminate_after={0: 2}).run()
    df = frame(res)
    assert seen == [(1.0, 0, 1), (2.0, 1, 1)]
    assert df.loc[0, "status"] == "failed" and df.loc[0, "completion"] == 3.0 and df.loc[0, "stages_done"] == 2
    assert df.loc[1, "status"] == "done" and df.loc[1, "completion"] == 4.0
    s = res.summary()
    assert s["n_failed"] == 1 and s["n_done"] == 1


def test_rollback_to_checkpoint_loses_work():
    class P(Policy):
        name = "p"

        def on_start(self, sim):
            sim.set_timer(2.5)

        def on_timer(self, sim, t):
            sim.preempt(0, rollback=True)

        def schedule(self, sim):
            if sim.job(0).phase == "waiting":
                sim.start(0)

    df = frame(Simulator(Cluster.homogeneous(1, 1), [Job(0, work=4, attrs={"stages": [2, 2]})], P()).run())
    assert df.loc[0, "lost_work"] == pytest.approx(0.5)
    assert df.loc[0, "completion"] == pytest.approx(4.5)


def test_placement_rate_slows_spanning_jobs():
    jobs = [Job(0, work=4, gpus=4)]
    res = Simulator(Cluster.homogeneous(2, 2), jobs, FIFO(), rate_model=PlacementRate(1.0)).run()
    assert frame(res).loc[0, "completion"] == pytest.approx(8.0)


def test_corunner_rate_model_recomputes_completions():
    # two jobs share a link: each runs at 1/(number training); job 1 arrives at 1
    rm = FunctionRate(lambda job, pl, sim: 1.0 / len(sim.training_jobs()), corunner_dependent=True)
    jobs = [Job(0, work=3), Job(1, work=1, arrival=1)]
    res = Simulator(Cluster.homogeneous(1, 2), jobs, FIFO(), rate_model=rm).run()
    df = frame(res)
    # [0,1): job0 rate 1 -> 1 done; [1,3): both at 1/2 -> job1 done at 3, job0 has 2 done; then rate 1 -> 4
    assert df.loc[1, "completion"] == pytest.approx(3.0)
    assert df.loc[0, "completion"] == pytest.approx(4.0)
    rep = replay_log(res.log).set_index("job_id")
    assert rep.loc[0, "work_done"] == pytest.approx(3.0)


def test_migration_moves_job():
    class Mig(Policy):
        name = "mig"

        def on_arrival(self, sim, job):
            sim.start(0, {0: 1})
            sim.set_timer(1.0)

        def on_timer(self, sim, t):
            sim.migrate(0, {1: 1})

    res = Simulator(Cluster.homogeneous(2, 1), [Job(0, work=3)], Mig(), save_time=0.5, load_time=0.0).run()
    segs = res.schedule().segments(0)
    assert [(s.start, s.end, dict(s.placement)) for s in segs] == [(0.0, 1.5, {0: 1}), (1.5, 3.5, {1: 1})]
    # the new GPUs are reserved from t=1 (counted in utilization), the segment starts when loading does
    assert res.utilization()["gpus_in_use"].max() == 2


def test_returned_decisions_are_applied():
    class R(Policy):
        name = "r"

        def on_arrival(self, sim, job):
            return [Start(job.id, {0: 1}), SetTimer(1.0, data="x")]

    res = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=2)], R()).run()
    assert frame(res).loc[0, "completion"] == 2.0


@pytest.mark.parametrize(
    "action, msg",
    [
        (lambda sim: sim.start(0, {0: 3}), "over capacity"),
        (lambda sim: sim.start(0, {0: 1}), "needs 2"),
        (lambda sim: sim.start(0, {5: 2}), "servers are 0..1"),
        (lambda sim: sim.start(99), "Unknown job 99"),
        (lambda sim: sim.start(1), "has not arrived"),
        (lambda sim: sim.preempt(0), "only loading or training"),
        (lambda sim: (sim.start(0), sim.start(0)), "already"),
        (lambda sim: sim.start(2, {0: 1, 1: 1}), "single-server"),
        (lambda sim: sim.set_timer(-1.0), "timer"),
        (lambda sim: sim.apply(["go"]), "returned 'go'"),
    ],
)
def test_illegal_decisions_raise(action, msg):
    class Bad(Policy):
        name = "bad"

        def on_start(self, sim):
            self.done = False

        def schedule(self, sim):
            if not self.done:
                self.done = True
                action(sim)

    jobs = [Job(0, work=1, gpus=2), Job(1, work=1, arrival=5), Job(2, work=1, gpus=2, single_server=True)]
    with pytest.raises(SimulationError, match=msg):
        Simulator(Cluster.homogeneous(2, 2), jobs, Bad()).run()


def test_starving_policy_is_an_error():
    with pytest.raises(SimulationError, match="unfinished"):
        Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], Policy()).run()
    res = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], Policy(), allow_unfinished=True).run()
    assert frame(res).loc[0, "status"] == "waiting"


def test_bad_inputs():
    c = Cluster.homogeneous(1, 2)
    with pytest.raises(InvalidInstanceError, match="'gpus' field of job 0 must be at most 2"):
        Simulator(c, [Job(0, work=1, gpus=3)], FIFO())
    with pytest.raises(InvalidInstanceError, match="add up to 3"):
        Simulator(c, [Job(0, work=4, attrs={"stages": [1, 2]})], FIFO())
    with pytest.raises(InvalidInstanceError, match="terminate_after"):
        Simulator(c, [Job(0, work=1)], FIFO(), terminate_after={0: 5})
    with pytest.raises(InvalidOptionError, match="load_time"):
        Simulator(c, [Job(0, work=1)], FIFO(), load_time=-1)
    with pytest.raises(InvalidOptionError, match="placement"):
        FIFO(placement="best")


def test_until_stops_early_and_run_once():
    sim = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=5), Job(1, work=5)], FIFO())
    res = sim.run(until=6)
    assert res.jobs_frame().set_index("job_id").loc[1, "status"] == "training"
    with pytest.raises(SimulationError, match="already run"):
        sim.run()


# -- malformed job tables (hypothesis) ------------------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40)
@given(
    col=st.sampled_from(["arrival", "duration", "gpus", "weight"]),
    bad=st.sampled_from([-1.0, float("nan"), float("inf"), 0.0, 2.5, 99.0]),
    row=st.integers(0, 3),
)
def test_malformed_job_table_names_field_and_row(col, bad, row):
    import pandas as pd

    df = pd.DataFrame(
        {
            "job_id": ["a", "b", "c", "d"],
            "arrival": [0.0, 1.0, 2.0, 3.0],
            "duration": [1.0, 2.0, 3.0, 4.0],
            "gpus": [1, 2, 1, 2],
            "weight": [1.0] * 4,
        }
    )
    df[col] = df[col].astype(float)
    df.loc[row, col] = bad
    valid = {
        "arrival": bad >= 0 and bad < float("inf"),
        "duration": 0 < bad < float("inf"),
        "weight": 0 < bad < float("inf"),
        "gpus": bad in (1.0, 2.0),
    }[col]
    if valid:
        Simulator(Cluster.homogeneous(1, 2), df, FIFO()).run()
        return
    with pytest.raises(InvalidInstanceError, match=rf"'{col}' field of job '{df.loc[row, 'job_id']}'"):
        Simulator(Cluster.homogeneous(1, 2), df, FIFO())


def test_job_table_missing_columns():
    import pandas as pd

    with pytest.raises(InvalidInstanceError, match="no 'gpus' column"):
        Simulator(Cluster.homogeneous(1, 2), pd.DataFrame({"arrival": [0.0], "work": [1.0]}), FIFO())
    with pytest.raises(InvalidInstanceError, match="neither a 'work' nor a 'duration'"):
        Simulator(Cluster.homogeneous(1, 2), pd.DataFrame({"arrival": [0.0], "gpus": [1]}), FIFO())


@pytest.mark.parametrize("col", ["arrival", "duration", "gpus", "weight"])
@pytest.mark.parametrize("as_frame", [True, False])
def test_a_yes_no_value_in_a_numeric_column_is_refused(col, as_frame):
    # True became 1.0 without a word (Job(gpus=True) is refused)
    import numpy as np
    import pandas as pd

    table = {"arrival": [0.0, 1.0], "duration": [1.0, 2.0], "gpus": [1, 1], "weight": [1.0, 1.0]}
    table[col] = [True, True] if as_frame else [1, np.True_]
    with pytest.raises(InvalidInstanceError, match=rf"'{col}' column .*yes/no"):
        Simulator(Cluster.homogeneous(1, 2), pd.DataFrame(table) if as_frame else table, FIFO())


def test_zero_time_livelock_is_detected(monkeypatch):
    import optsched.sim.engine as eng

    monkeypatch.setattr(eng, "_MAX_BATCHES_AT_ONE_TIME", 50)

    class PingPong(Policy):
        name = "ping-pong"

        def schedule(self, sim):
            j = sim.job(0)
            if j.phase == "waiting":
                sim.start(j)
                sim.preempt(j)  # GPUs free at once; on_preempted comes as an event at the same time

    with pytest.raises(SimulationError, match="livelock"):
        Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], PingPong()).run()
