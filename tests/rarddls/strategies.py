"""Hypothesis strategies for small rarddls instances."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.core.cluster import Cluster
from optsched.rarddls.model import RarInstance, RarJob


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
def small_instances(draw, max_jobs=3, caps=None, max_iterations=16):
    """Up to ``max_jobs`` jobs drawn field by field in the ranges of
    :func:`optsched.rarddls.generate.random_instance` (G_j in 1..min(4, N), F_j in
    4..``max_iterations``, compute, gradient size, rho^_j), on the servers ``caps`` (drawn if None),
    with alpha and xi drawn: a failure shrinks to its smallest instance."""
    n = draw(st.integers(1, max_jobs))
    if caps is None:
        caps = draw(st.sampled_from([[2, 2], [2, 3], [3, 3], [2, 2, 2], [4, 2]]))
    alpha = draw(st.sampled_from([0.0, 0.5, 1.0]))
    xi = draw(st.sampled_from([0.5, 1.0]))
    N = sum(caps)
    jobs = tuple(
        RarJob(
            i,
            draw(st.integers(1, min(4, N))),
            draw(st.integers(4, max_iterations)),
            draw(st.sampled_from([0.5, 1.0, 2.0])),
            draw(st.sampled_from([0.1, 0.15, 0.2])),
            float(draw(st.integers(2, 8))),
        )
        for i in range(n)
    )
    return RarInstance(
        Cluster(tuple({"gpus": c} for c in caps)),
        jobs,
        b_e=10.0 * (1 + alpha) * max(caps),
        b_i=1000.0,
        C=100.0,
        xi1=xi,
        xi2=0.05,
        alpha=alpha,
        name="hyp",
    )
