"""The engine's structure (issue 10 item 7): per-run state before run(), phases as a StrEnum,
results built from an explicit record."""

from __future__ import annotations

import json

import pytest

from optsched.core import Cluster, Job
from optsched.sim import SRTF, Phase, RunRecord, SimResult, Simulator
from optsched.sim.model.state import TRAINING, WAITING


def _sim():
    jobs = [Job(0, work=4, gpus=2), Job(1, work=2, gpus=2, arrival=1)]
    return Simulator(Cluster.homogeneous(1, 2), jobs, SRTF())


def test_views_work_before_run():
    sim = _sim()
    assert sim.training_jobs() == []
    assert sim.running_jobs() == []
    assert sim.n_events == 0


def test_phases_are_a_str_enum_that_compares_with_strings():
    assert Phase.WAITING == "waiting" and WAITING is Phase.WAITING and TRAINING == "training"
    res = _sim().run()
    status = res.jobs_frame()["status"].tolist()
    assert status == ["done", "done"] and all(type(s) is str for s in status)  # plain strings in tables
    json.dumps(res.summary())  # nothing an encoder cannot write


def test_result_is_built_from_a_record():
    sim = _sim()
    res = sim.run()
    rec = sim.record()
    assert isinstance(rec, RunRecord)
    again = SimResult(rec)
    assert again.jobs_frame().equals(res.jobs_frame())
    assert again.summary() == pytest.approx(res.summary())
    with pytest.raises(AttributeError):
        rec.policy = "x"  # frozen


def test_a_policy_brings_its_rate_model():
    from optsched.sim import FIFO, ConstantRate, PlacementRate

    class Slow(FIFO):
        name = "slow-fifo"

        def __init__(self):
            super().__init__()
            self.rate_model = PlacementRate(0.0)

    jobs = [Job(0, work=4, gpus=1)]
    pol = Slow()
    sim = Simulator(Cluster.homogeneous(1, 1), jobs, pol)
    assert sim.rate_model is pol.rate_model
    explicit = ConstantRate(2.0)
    assert Simulator(Cluster.homogeneous(1, 1), jobs, Slow(), rate_model=explicit).rate_model is explicit
    assert Simulator(Cluster.homogeneous(1, 1), jobs, FIFO()).rate_model.__class__ is ConstantRate
