"""Hypothesis strategies for kind ``sojourn``."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from optsched.sojourn.model import SojournInstance, StagedJob


@st.composite
def staged_jobs(draw, jid=0, max_stages: int = 3, integer: bool = False) -> StagedJob:
    m = draw(st.integers(1, max_stages))
    if integer:
        sizes = sorted(draw(st.lists(st.integers(1, 9), min_size=m, max_size=m, unique=True)))
    else:
        steps = draw(st.lists(st.floats(0.05, 5.0), min_size=m, max_size=m))
        sizes = np.cumsum(steps).tolist()
    w = draw(st.lists(st.floats(0.05, 1.0), min_size=m, max_size=m))
    p = (np.array(w) / sum(w)).tolist()
    p[-1] = 1.0 - sum(p[:-1])
    if p[-1] <= 0:
        p = [1.0 / m] * m
    return StagedJob(jid, sizes, p)


@st.composite
def instances(
    draw, min_jobs: int = 1, max_jobs: int = 5, max_stages: int = 3, integer: bool = False
) -> SojournInstance:
    n = draw(st.integers(min_jobs, max_jobs))
    return SojournInstance(tuple(draw(staged_jobs(k, max_stages, integer)) for k in range(n)), name="hyp")
