"""Item 6 of issue 10 for rigid: uniform random_instance and builder names, old forms kept."""

import warnings

import pytest

import optsched.rigid as R
from optsched.exceptions import InvalidOptionError, ModelTooLargeError


def test_random_instance_keywords_and_the_old_positional_form():
    new = R.random_instance(7, n_servers=3, gpus_per_server=2, seed=5, single_server=0.5)
    assert (new.cluster.n_servers, new.cluster.max_server_gpus) == (3, 2)
    with pytest.warns(DeprecationWarning, match="pass n_servers=3, gpus_per_server=2 by keyword"):
        old = R.random_instance(7, 3, 2, seed=5, single_server=0.5)
    assert old.to_dict() == new.to_dict()
    with pytest.warns(DeprecationWarning):
        one = R.random_instance(7, 3, seed=5)
    assert one.to_dict() == R.random_instance(7, n_servers=3, seed=5).to_dict()
    with pytest.raises(InvalidOptionError, match="at most 2"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        R.random_instance(7, 3, 2, 1)
    assert R.random_instance(3, seed=0).cluster.total_gpus == 8


def test_builder_names_and_aliases():
    assert R.build_cpsat is R.build_interval_cpsat
    inst = R.random_instance(4, n_servers=2, gpus_per_server=2, seed=1)
    for build in (R.build_time_indexed, R.build_interval_cpsat):
        with pytest.raises(ModelTooLargeError):
            build(inst, max_size=1)
