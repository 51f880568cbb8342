"""Item 6 of issue 10 for asrpt: registry name = Result.algorithm, options in info["params"],
uniform random_instance and builder names, the old forms still working."""

import pytest

from optsched.asrpt import formulation as F
from optsched.asrpt import toy_instance
from optsched.asrpt.generate import random_instance
from optsched.asrpt.policy import BASELINE_NAMES
from optsched.core.registry import algorithms, get_algorithm
from optsched.exceptions import InvalidInstanceError, ModelTooLargeError, UnknownNameError


def test_result_algorithm_is_the_registry_name():
    inst = toy_instance()
    names = {spec.name for spec in algorithms("asrpt", exact=False)}
    assert names == {"asrpt-a-srpt", *BASELINE_NAMES}
    for spec in algorithms("asrpt", exact=False):
        assert spec(inst).algorithm == spec.name
    res = get_algorithm("asrpt-a-srpt")(inst, tau=0.5)
    assert res.info["params"] == {"tau": 0.5}
    assert get_algorithm("asrpt-spwf")(inst).info["params"]["baseline"] == "SPWF"


def test_the_algorithm_has_one_name():
    with pytest.raises(UnknownNameError, match="a-srpt"):
        get_algorithm("a-srpt")
    assert "asrpt-a-srpt" in {a.name for a in algorithms()}


def test_wrong_kind_is_refused_with_the_registry_name():
    from optsched.core import Cluster, Instance, Job

    rigid = Instance(Cluster.homogeneous(1, 2), [Job(0, work=1, gpus=1)])
    with pytest.raises(InvalidInstanceError, match="asrpt-a-srpt needs an instance of kind 'asrpt'"):
        get_algorithm("asrpt-a-srpt")(rigid)


def test_random_instance_takes_its_sizes_by_keyword_only():
    new = random_instance(6, n_servers=2, gpus_per_server=2, seed=4, single_gpu=0.3)
    assert (new.M, new.g) == (2, 2)
    with pytest.raises(TypeError):
        random_instance(6, 2, 2, seed=4)
    with pytest.raises(TypeError, match="gpus"):
        random_instance(6, n_servers=2, gpus=2)
    d = random_instance(5)
    assert (d.M, d.g, d.n_jobs) == (3, 4, 5)


def test_builder_names():
    with pytest.raises(AttributeError, match="no attribute 'build_nothing'"):
        F.build_nothing  # noqa: B018
    inst = toy_instance()
    for build in (F.build_problem8, F.build_problem8_cpsat, F.build_problem8_ti_cpsat):
        with pytest.raises(ModelTooLargeError):
            build(inst, max_size=1)
