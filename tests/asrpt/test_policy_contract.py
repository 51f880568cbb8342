"""Item 4 of issue 10: the A-SRPT policies keep the simulator's policy contract (options only in
``__init__``, cluster and jobs read in ``on_start``, one object reusable across runs)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.asrpt import toy_instance
from optsched.asrpt.generate import random_instance
from optsched.asrpt.online import ASRPT, BASELINES, OrderedPolicy
from optsched.asrpt.policy import simulate_asrpt
from optsched.asrpt.rate import HeavyEdgeRate, sim_jobs
from optsched.core import Job
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.sim import Policy, RateModel, Simulator, get_policy

SET = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _times(res):
    df = res.jobs_frame().set_index("job_id")
    return df[["first_start", "completion"]].to_dict("index")


def _approx(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k]["first_start"] == pytest.approx(b[k]["first_start"], rel=1e-12, abs=1e-9)
        assert a[k]["completion"] == pytest.approx(b[k]["completion"], rel=1e-12, abs=1e-9)


def test_subclasses_of_the_simulator_bases():
    assert issubclass(ASRPT, Policy) and issubclass(OrderedPolicy, Policy)
    assert issubclass(HeavyEdgeRate, RateModel)
    assert isinstance(ASRPT().rate_model, RateModel)


@SET
@given(
    seeds=st.lists(st.integers(0, 10**6), min_size=2, max_size=3),
    make=st.sampled_from(["a-srpt", "SPJF", "WCS-Workload"]),
)
def test_one_policy_object_runs_several_instances(seeds, make):
    """A policy built once gives, on each instance in turn, what a fresh policy gives on it."""

    def fresh():
        return ASRPT(tau=0.5) if make == "a-srpt" else BASELINES()[make]

    shared = fresh()
    for i, s in enumerate(seeds):
        inst = random_instance(
            8,
            n_servers=2 + i % 2,
            gpus_per_server=2 + 2 * (i % 2),
            seed=s,
            arrival_rate=2.0,
            slot=[10.0, 2.5, 1.0][i % 3],
        )
        _approx(_times(simulate_asrpt(inst, shared)), _times(simulate_asrpt(inst, fresh())))


def test_registry_policies_run_on_sim_jobs_with_their_rate_model():
    inst = random_instance(10, n_servers=3, gpus_per_server=4, seed=5, arrival_rate=2.0)
    pol = get_policy("asrpt-a-srpt", tau=1.0)
    res = Simulator(inst.cluster, sim_jobs(inst), pol, rate_model=pol.rate_model).run()
    _approx(_times(res), _times(simulate_asrpt(inst, tau=1.0)))
    for name in BASELINES():
        pol = get_policy(f"asrpt-{name.lower()}-online")
        assert pol.name == name
        res = Simulator(inst.cluster, sim_jobs(inst), pol, rate_model=pol.rate_model).run()
        _approx(_times(res), _times(simulate_asrpt(inst, BASELINES()[name])))


def test_the_policies_take_options_only():
    inst = toy_instance()
    for make in (lambda: ASRPT(inst, tau=1.0), lambda: BASELINES(inst), lambda: HeavyEdgeRate(inst)):
        with pytest.raises(TypeError):
            make()


def test_slot_read_from_the_jobs():
    """The slot length and first slot come from the instance through sim_jobs: every start of the slotted
    policies is a multiple of the slot, at or after the first slot."""
    inst = random_instance(10, n_servers=2, gpus_per_server=4, seed=2, arrival_rate=1.0, slot=2.5)
    for pol in (ASRPT(tau=1.0), *BASELINES().values()):
        df = simulate_asrpt(inst, pol).jobs_frame()
        for t in df["first_start"]:
            k = t / 2.5
            assert k == pytest.approx(round(k), abs=1e-9) and round(k) >= inst.first_slot


def test_jobs_without_the_asrpt_profile_are_refused():
    inst = toy_instance()
    jobs = [Job(j.id, work=float(j.iterations), gpus=j.gpus) for j in inst.jobs]
    pol = ASRPT()
    with pytest.raises(InvalidInstanceError, match=r"attrs\['asrpt_job'\].*sim_jobs\(instance\)"):
        Simulator(inst.cluster, jobs, pol, rate_model=pol.rate_model).run()
    with pytest.raises(InvalidOptionError, match="bind"):
        HeavyEdgeRate().alpha(inst.jobs[0], {0: 2})
