"""Simulator: GPU identities, resource vectors (a CPU-only parameter server), configs at start."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job
from optsched.core.cluster import Server
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, SimulationError
from optsched.sim import Policy, RateModel, Simulator, Start, get_policy
from optsched.verify import gpu_exclusive_check, verify

from .test_invariants import RULES, workloads


def _cluster():
    # a GPU server and a CPU-only server (for parameter servers)
    return Cluster(
        [Server(gpus=4, resources={"cpu": 16, "net": 10.0}), Server(gpus=0, resources={"cpu": 32, "net": 10.0})]
    )


class PSPolicy(Policy):
    """Each job: its GPUs on server 0, one parameter server (4 CPUs, 5 net) on server 1."""

    name = "ps"

    def schedule(self, sim):
        for j in sim.jobs:
            if j.phase == "waiting" and sim.free_gpus[0] >= j.gpus and sim.res.free[1, sim.res.index["net"]] >= 5:
                sim.start(j, {0: j.gpus, 1: {"gpus": 0, "cpu": 4, "net": 5.0}}, config={"ps": 1, "worker": "v100"})


class ConfigRate(RateModel):
    def rate(self, job, placement, sim):
        return 2.0 if job.config and job.config.get("worker") == "v100" else 1.0


def test_a_job_with_a_cpu_only_parameter_server_end_to_end():
    jobs = [Job(0, work=10, gpus=2), Job(1, work=10, gpus=2), Job(2, work=10, gpus=1)]
    res = Simulator(_cluster(), jobs, PSPolicy(), rate_model=ConfigRate()).run()
    df = res.jobs_frame().set_index("job_id")
    # net 10 on server 1 holds two parameter servers at once: job 2 waits for one to finish
    assert df["first_start"].tolist() == pytest.approx([0, 0, 5])
    assert df["completion"].tolist() == pytest.approx([5, 5, 10])  # rate 2 from the config
    assert df.loc[0, "config"] == {"ps": 1, "worker": "v100"}
    s = res.schedule()
    seg = s.segments(0)[0]
    assert seg.placement == {0: 2, 1: 0} and seg.usage == {1: {"cpu": 4.0, "net": 5.0}}
    assert seg.gpu_ids == {0: (0, 1)} and s.segments(1)[0].gpu_ids == {0: (2, 3)}
    inst = Instance(_cluster(), jobs)
    rep = verify(inst, s)
    assert not [v for v in rep.violations if v.label in ("capacity", "resource_capacity", "gpu_exclusive", "demand")], (
        rep.summary()
    )


def test_resources_not_free_name_job_server_resource_requested_and_free():
    class Greedy(PSPolicy):
        def schedule(self, sim):
            for j in sim.jobs:
                if j.phase == "waiting":
                    sim.start(j, {0: j.gpus, 1: {"gpus": 0, "net": 6.0}})

    with pytest.raises(SimulationError) as e:
        Simulator(_cluster(), [Job(0, work=1, gpus=1), Job(1, work=1, gpus=1)], Greedy()).run()
    msg = str(e.value)
    assert "job 1" in msg and "'net'" in msg and "server 1" in msg and "6" in msg and "4 free" in msg


def test_declared_job_resources_are_shared_by_gpus_and_respected_by_baselines():
    cl = Cluster([Server(gpus=4, resources={"cpu": 8})])
    jobs = [Job(0, work=10, gpus=1, resources={"cpu": 6}), Job(1, work=10, gpus=1, resources={"cpu": 6})]
    df = Simulator(cl, jobs, get_policy("fifo")).run().jobs_frame()
    assert df["first_start"].tolist() == pytest.approx([0, 10])  # 6 + 6 CPUs > 8: the second waits
    with pytest.raises(InvalidInstanceError, match="no server declares"):
        Simulator(Cluster.homogeneous(1, 4), [Job(0, work=1, resources={"mem": 1})], get_policy("fifo"))
    with pytest.raises(InvalidOptionError, match="random"):
        Simulator(cl, jobs, get_policy("fifo", placement="random"))


def test_gpu_ids_named_by_the_policy_and_checked():
    class Named(Policy):
        name = "named"
        gpu_ids = True  # it names GPU ids: the engine tracks them during the run

        def __init__(self, ids):
            super().__init__()
            self.ids = ids

        def schedule(self, sim):
            return [Start(j, {0: j.gpus}, gpu_ids={0: self.ids[j.id]}) for j in sim.jobs if j.phase == "waiting"]

    cl = Cluster.homogeneous(1, 4)
    jobs = [Job(0, work=1, gpus=2), Job(1, work=1, gpus=2)]
    s = Simulator(cl, jobs, Named({0: (3, 1), 1: (0, 2)})).run().schedule()
    assert s.segments(0)[0].gpu_ids == {0: (1, 3)} and s.segments(1)[0].gpu_ids == {0: (0, 2)}
    for ids, msg in [
        ({0: (3, 1), 1: (1, 2)}, "not free"),
        ({0: (0, 0), 1: (1, 2)}, "distinct"),
        ({0: (0, 9), 1: (1, 2)}, "GPUs 0..3"),
    ]:
        with pytest.raises(SimulationError, match=msg):
            Simulator(cl, jobs, Named(ids)).run()


@settings(max_examples=60, deadline=None)
@given(
    w=workloads(),
    policy=st.sampled_from(["fifo", "sjf", "srtf", "las"]),
    rule=st.sampled_from(RULES),
    save=st.sampled_from([0.0, 1.0]),
    until=st.sampled_from([None, 3.0]),
)
def test_recorded_gpu_ids_never_overlap_and_equal_tracking_them_during_the_run(w, policy, rule, save, until):
    cluster, jobs = w
    opts = {"quantum": 2.0} if policy == "las" else {}

    def run(track):
        pol = get_policy(policy, placement=rule, **opts)
        pol.gpu_ids = track  # the instance attribute overrides the class default
        sim = Simulator(cluster, jobs, pol, save_time=save, load_time=save / 2, allow_unfinished=until is not None)
        return sim.run(until=until)

    lazy, eager = run(False), run(True)
    s = lazy.schedule()
    assert all(sg.gpu_ids is not None for _, segs in s.items() for sg in segs)
    assert not list(gpu_exclusive_check(require_ids=True)(Instance(cluster, jobs), s))
    assert s == eager.schedule()  # ids given after the run = ids tracked during it


def test_naming_gpu_ids_needs_a_tracking_policy():
    class Untracked(Policy):
        name = "untracked"

        def schedule(self, sim):
            return [Start(j, {0: 1}, gpu_ids={0: (0,)}) for j in sim.jobs if j.phase == "waiting"]

    with pytest.raises(SimulationError, match="gpu_ids = True"):
        Simulator(Cluster.homogeneous(1, 2), [Job(0, work=1)], Untracked()).run()


def _brute_contention(alpha):
    from optsched.sim import FunctionRate

    def f(job, placement, sim):
        if len(placement) <= 1:
            return 1.0
        counts: dict[int, int] = {}
        for o in sim.training_jobs():
            if o.placement is not None and len(o.placement) > 1:
                for m in o.placement:
                    counts[m] = counts.get(m, 0) + 1
        return 1.0 / (1.0 + alpha * (max(counts.get(m, 0) for m in placement) - 1))

    return FunctionRate(f, corunner_dependent=True)


@settings(max_examples=60, deadline=None)
@given(
    w=workloads(),
    policy=st.sampled_from(["fifo", "srtf", "las"]),
    alpha=st.sampled_from([0.0, 0.3, 1.0]),
    rule=st.sampled_from(["first_fit", "least_loaded", "consolidate"]),
)
def test_incremental_split_contention_equals_recounting_every_event(w, policy, alpha, rule):
    from optsched.sim import SplitContentionRate

    cluster, jobs = w
    opts = {"quantum": 2.0} if policy == "las" else {}
    a = (
        Simulator(cluster, jobs, get_policy(policy, placement=rule, **opts), rate_model=SplitContentionRate(alpha))
        .run()
        .jobs_frame()
    )
    b = (
        Simulator(cluster, jobs, get_policy(policy, placement=rule, **opts), rate_model=_brute_contention(alpha))
        .run()
        .jobs_frame()
    )
    assert a["completion"].tolist() == pytest.approx(b["completion"].tolist(), rel=1e-9, abs=1e-9)
