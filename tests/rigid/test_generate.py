"""optsched.rigid.generate: random rigid instances within their stated ranges, reproducible by seed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.rigid.generate import random_instance


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(1, 4), st.sampled_from([1, 2, 4, 8]), st.floats(0, 1), st.integers(0, 99))
def test_the_drawn_data_are_within_the_documented_ranges(n, servers, gpus, single, seed):
    inst = random_instance(n, n_servers=servers, gpus_per_server=gpus, single_server=single, seed=seed, max_work=5)
    assert inst.n_jobs == n and list(inst.cluster.gpus) == [gpus] * servers
    for j in inst.jobs:
        cap = gpus if j.single_server else gpus * servers  # a draw from {1, 2, 4, 8}, capped at what fits
        assert j.gpus <= cap and (j.gpus in (1, 2, 4, 8) or j.gpus == cap)
        assert 1 <= j.work <= 5 and 0 <= j.arrival <= 4 and j.weight in (1, 2, 3)
    if single == 0:
        assert not any(j.single_server for j in inst.jobs)


def test_a_seed_gives_the_same_instance_and_sizes_go_by_keyword():
    assert random_instance(6, seed=4).to_dict() == random_instance(6, seed=4).to_dict()
    assert all(j.weight == 1 for j in random_instance(5, weights=False, seed=1).jobs)
    inst = random_instance(4, n_servers=3, gpus_per_server=2, seed=0)
    assert list(inst.cluster.gpus) == [2, 2, 2]
