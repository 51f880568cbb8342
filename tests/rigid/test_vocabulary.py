"""Rigid's uniform random_instance and builder names."""

import pytest

import optsched.rigid as R
from optsched.exceptions import ModelTooLargeError


def test_random_instance_takes_its_sizes_by_keyword_only():
    new = R.random_instance(7, n_servers=3, gpus_per_server=2, seed=5, single_server=0.5)
    assert (new.cluster.n_servers, new.cluster.max_server_gpus) == (3, 2)
    with pytest.raises(TypeError):
        R.random_instance(7, 3, 2, seed=5)
    assert R.random_instance(3, seed=0).cluster.total_gpus == 8


def test_builder_names_and_aliases():
    assert R.build_cpsat is R.build_interval_cpsat
    inst = R.random_instance(4, n_servers=2, gpus_per_server=2, seed=1)
    for build in (R.build_time_indexed, R.build_interval_cpsat):
        with pytest.raises(ModelTooLargeError):
            build(inst, max_size=1)
