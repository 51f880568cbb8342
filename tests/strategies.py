"""Hypothesis strategies shared by the test suite (paper packages keep theirs in tests/<key>/)."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job, Server


@st.composite
def clusters(draw, max_servers: int = 3, max_gpus: int = 4) -> Cluster:
    n = draw(st.integers(1, max_servers))
    gpus = draw(st.lists(st.integers(1, max_gpus), min_size=n, max_size=n))
    return Cluster(tuple(Server(g, name=f"s{i}") for i, g in enumerate(gpus)))


@st.composite
def rigid_instances(
    draw,
    max_jobs: int = 5,
    max_servers: int = 3,
    max_gpus: int = 4,
    max_work: int = 4,
    max_arrival: int = 4,
    single: bool | None = None,
) -> Instance:
    """Small rigid instances with integer data. ``single``: all single-server (True), all spanning
    (False) or mixed (None)."""
    c = draw(clusters(max_servers, max_gpus))
    n = draw(st.integers(1, max_jobs))
    jobs = []
    for i in range(n):
        ss = draw(st.booleans()) if single is None else single
        cap = c.max_server_gpus if ss else c.total_gpus
        jobs.append(
            Job(
                i,
                work=draw(st.integers(1, max_work)),
                gpus=draw(st.integers(1, cap)),
                arrival=draw(st.integers(0, max_arrival)),
                weight=draw(st.integers(1, 3)),
                single_server=ss,
            )
        )
    return Instance(c, jobs, name="hyp")


# JSON-ish values for malformed-input tests
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
