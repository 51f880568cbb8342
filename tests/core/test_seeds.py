"""optsched.core.seeds: one reading of the seed= option everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.core.seeds import as_generator
from optsched.exceptions import InvalidOptionError


@given(st.integers(0, 2**63 - 1))
def test_the_same_int_gives_the_same_stream(seed):
    assert as_generator(seed).integers(10**9, size=3).tolist() == as_generator(seed).integers(10**9, size=3).tolist()


def test_a_generator_is_used_as_it_is_and_none_draws_fresh_entropy():
    g = np.random.default_rng(1)
    assert as_generator(g) is g
    assert isinstance(as_generator(None), np.random.Generator)
    assert as_generator(np.int64(5)).integers(100) == as_generator(5).integers(100)


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True, [1]])
def test_anything_else_is_refused_naming_the_option(bad):
    with pytest.raises(InvalidOptionError, match="'seed' option must be a non-negative int"):
        as_generator(bad)


def test_job_keys_follow_the_id_not_its_type_or_row():
    import numpy as np

    from optsched.core.seeds import job_keys, job_uniforms

    k = job_keys(5, [7, "7", np.int64(7)], "s")
    assert k[0] == k[2] and k[0] != k[1]  # 7 and np.int64(7) are one id; '7' another
    assert job_keys(5, [7], "t")[0] != k[0] and job_keys(6, [7], "s")[0] != k[0]  # stream and seed matter
    u = job_uniforms(0, range(2000), "s")
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.05  # spread over [0, 1)
