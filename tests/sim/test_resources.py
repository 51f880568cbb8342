"""FreeGPUs (bit-set placement) gives exactly the placements of core.place."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.core.placement import place
from optsched.exceptions import SimulationError
from optsched.sim import FreeGPUs


@given(caps=st.lists(st.integers(0, 8), min_size=1, max_size=12), data=st.data())
def test_same_placement_as_core(caps, data):
    if sum(caps) == 0:
        caps[0] = 1
    f = FreeGPUs(caps)
    for _ in range(data.draw(st.integers(0, 6))):  # random allocations
        free = f.free_list
        if f.total_free == 0:
            break
        g = data.draw(st.integers(1, f.total_free))
        pl = f.place(g, "first_fit")
        f.allocate(pl)
        assert all(x >= 0 for x in f.free_list)
    free = f.as_array()
    assert f.total_free == free.sum() and f.max_free == free.max()
    g = data.draw(st.integers(1, max(1, int(sum(caps)))))
    for rule in ("consolidate", "first_fit", "least_loaded"):
        for single in (False, True):
            assert f.place(g, rule, single) == place(free, g, rule=rule, single_server=single), (rule, single)
            assert f.fits(g, single) == (place(free, g, rule=rule, single_server=single) is not None)
    rng1, rng2 = np.random.default_rng(3), np.random.default_rng(3)
    assert f.place(g, "random", rng=rng1) == place(free, g, rule="random", rng=rng2)


def test_allocate_release_roundtrip():
    f = FreeGPUs([4, 2])
    f.allocate({0: 3, 1: 2})
    assert f.free_list == [1, 0] and f.total_free == 1
    f.release({0: 3, 1: 2})
    assert f.free_list == [4, 2] and f.max_free == 4


@pytest.mark.parametrize(
    "pl, msg",
    [
        ({}, "non-empty"),
        ({0: 5}, "over capacity"),
        ({2: 1}, "servers are 0..1"),
        ({0: 0}, "positive"),
        ({0: 1}, "needs 2"),
        ({0: 1, 1: 1}, "single-server"),
        ("0:2", "mapping"),
    ],
)
def test_check_rejects(pl, msg):
    with pytest.raises(SimulationError, match=msg):
        FreeGPUs([4, 2]).check(pl, 2, True, "job 1")
