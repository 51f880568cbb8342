"""optsched.elastic.generate: the random generator's weights and bad options (the Sec. 7 generator
is tested in test_sec7.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.elastic.generate import random_instance
from optsched.elastic.pricing import least_use
from optsched.exceptions import InvalidOptionError


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["ps", "rar"]), st.floats(1.0, 4.0))
def test_resource_weights_are_within_one_and_f_times_the_least_use(seed, arch, F):
    inst = random_instance(3, n_servers=2, seed=seed, architecture=arch, weights="resource", F=F)
    assert math.isclose(inst.F, F * (1 + 1e-6))
    for job in inst.jobs:
        least = least_use(inst, job.id)
        assert least is not None and least > 0
        assert least * (1 - 1e-6) <= job.weight <= F * least * (1 + 1e-6)


def test_the_same_seed_gives_the_same_instance():
    a = random_instance(4, seed=5, weights="resource")
    b = random_instance(4, seed=5, weights="resource")
    assert a.to_dict() == b.to_dict()


def test_resource_weights_need_every_job_within_the_horizon():
    with pytest.raises(InvalidOptionError, match=r"weights='resource' needs a schedule of every job.*horizon=1"):
        random_instance(3, seed=0, horizon=1, weights="resource")


@pytest.mark.parametrize(
    "kwargs, words",
    [({"weights": "big"}, "'weights' option must be 'small' or 'resource'"), ({"n_resources": 5}, "'n_resources'")],
)
def test_bad_options_name_the_option(kwargs, words):
    with pytest.raises(InvalidOptionError, match=words):
        random_instance(2, seed=0, **kwargs)
