"""Hypothesis strategies for small rarddls instances."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.rarddls.generate import random_instance


def what_if_replay(instance, starts, placements):
    """``replay(..., validate=False)`` of random decisions, or None (hypothesis discards the example) when they
    are so far over capacity that some job never progresses (phi_j = 0)."""
    from hypothesis import assume

    from optsched.exceptions import InvalidScheduleError
    from optsched.rarddls import replay

    try:
        return replay(instance, starts, placements, validate=False).completion
    except InvalidScheduleError:
        assume(False)


@st.composite
def small_instances(draw, max_jobs=3, caps=None):
    n = draw(st.integers(1, max_jobs))
    if caps is None:
        caps = draw(st.sampled_from([[2, 2], [2, 3], [3, 3], [2, 2, 2], [4, 2]]))
    seed = draw(st.integers(0, 10_000))
    alpha = draw(st.sampled_from([0.0, 0.5, 1.0]))
    xi = draw(st.sampled_from([0.5, 1.0]))
    return random_instance(n, gpus_per_server=list(caps), seed=seed, max_iterations=16, alpha=alpha, xi=xi)
