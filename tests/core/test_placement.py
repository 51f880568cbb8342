"""optsched.core.placement: the placement rules take exactly the GPUs asked, within the free ones."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from optsched.core import place


@given(
    st.lists(st.integers(0, 8), min_size=1, max_size=6),
    st.integers(1, 16),
    st.sampled_from(["consolidate", "first_fit", "least_loaded", "random"]),
    st.booleans(),
)
def test_place_is_within_free_and_exact(free, g, rule, single):
    free = np.array(free)
    pl = place(free, g, rule=rule, single_server=single, rng=np.random.default_rng(0))
    fits = (free.max() >= g) if single else (free.sum() >= g)
    if rule == "consolidate" and not single:
        fits = free.sum() >= g
    assert (pl is not None) == fits
    if pl is not None:
        assert sum(pl.values()) == g
        assert all(0 < v <= free[m] for m, v in pl.items())
        if single:
            assert len(pl) == 1
