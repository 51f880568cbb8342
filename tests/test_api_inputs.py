"""No input to a public entry gives anything but a result or an optsched error: hypothesis feeds
malformed arguments (wrong types, missing and extra columns, NaN, text in number columns, repeated
ids, unknown names, deeply nested or odd JSON, random CSV text) to ``Simulator``, ``get_policy``,
``compare``, ``read_jobs``, ``load_instance`` and ``verify``. An ``OptschedError`` (whose message
is cut to a readable length) is a clean refusal; any other exception is a failure."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import optsched
from optsched.core import Cluster
from optsched.exceptions import MESSAGE_LIMIT, OptschedError

optsched.load_plugins()

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

VALUES = st.one_of(
    st.integers(-3, 10),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "x", "1", None, True, 1e308, -0.0, [1], {"a": 1}]),
)
COLUMNS = ["arrival", "gpus", "duration", "work", "job_id", "weight", "model", "status", "load_time", "user"]


@st.composite
def job_tables(draw):
    n = draw(st.integers(0, 6))
    cols = draw(st.lists(st.sampled_from(COLUMNS), min_size=0, max_size=6, unique=True))
    good = {"arrival": [float(i) for i in range(n)], "gpus": [1] * n, "duration": [5.0] * n}
    table = {}
    for c in cols:
        if draw(st.booleans()) and c in good:
            table[c] = good[c]
        else:
            table[c] = [draw(VALUES) for _ in range(n)]
    if draw(st.booleans()):
        table = {**{c: v for c, v in good.items() if draw(st.booleans())}, **table}
    return pd.DataFrame(table) if draw(st.booleans()) else table


def _refused_cleanly(f) -> None:
    try:
        f()
    except OptschedError as e:
        assert 0 < len(str(e)) <= MESSAGE_LIMIT + 100, type(e)
    except KeyboardInterrupt:  # pragma: no cover - never expected here
        raise


PAPER_POLICIES = ["asrpt-a-srpt", "elastic-fifo", "sojourn-online-rank", "lazer"]  # one of each enrichment
CLUSTERS = st.one_of(
    st.just(Cluster.homogeneous(2, 4)),
    st.sampled_from(["8 gpus", 8, None, [4, 4], {"servers": 2}]),
)


@SETTINGS
@given(table=job_tables(), policy=st.sampled_from(["fifo", "srtf", "las", "sojourn-online-rank", "lazer"]))
def test_simulator(table, policy):
    from optsched.sim import Simulator, get_policy

    _refused_cleanly(lambda: Simulator(Cluster.homogeneous(2, 4), table, get_policy(policy)).run())


@SETTINGS
@given(
    name=st.one_of(st.text(max_size=20), st.sampled_from(["fifo", "elastic-fifo", "srtf-periodic", "asrpt-a-srpt"])),
    options=st.dictionaries(
        st.sampled_from(["placement", "period", "quantum", "backfill", "nope"]), VALUES, max_size=2
    ),
)
def test_get_policy(name, options):
    from optsched.sim import get_policy

    _refused_cleanly(lambda: get_policy(name, **options))


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    table=job_tables(),
    cluster=CLUSTERS,
    policies=st.sampled_from([["fifo"], ["nope"], [], ["fifo", "srtf"], PAPER_POLICIES, "none"]),
)
def test_compare(table, cluster, policies):  # "none": not a list of names
    from optsched.experiments.compare import compare

    if isinstance(table, dict):
        table = pd.DataFrame(table)
    _refused_cleanly(lambda: compare(table, cluster, policies=policies, progress=False, exact_max_jobs=0))


@SETTINGS
@given(
    text=st.text(alphabet="arivlgpusdtonjb_,.-0123456789e\n x", max_size=200),
    columns=st.sampled_from([None, "arrival=a", "x=y", "gpus="]),
)
def test_read_jobs(tmp_path_factory, text, columns):
    from optsched.traces import read_jobs

    p = tmp_path_factory.mktemp("csv") / "jobs.csv"
    p.write_text(text)
    _refused_cleanly(lambda: read_jobs(p, columns=columns))


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.integers(), st.text(max_size=5)),
    lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=6), kids, max_size=3)),
    max_leaves=12,
)


@st.composite
def instance_docs(draw):
    doc = json.loads(optsched.toy_path("rigid-2x2-five").read_text())
    where = draw(st.sampled_from(["root", "jobs", "job", "cluster", "kind", "field"]))
    value = draw(JSON)
    if where == "root":
        return value
    if where == "jobs":
        doc["jobs"] = value
    elif where == "job":
        doc["jobs"][0] = value
    elif where == "cluster":
        doc["cluster"] = value
    elif where == "kind":
        doc["kind"] = value
    else:
        doc["jobs"][0][draw(st.sampled_from(["work", "gpus", "arrival", "weight", "id", "extra"]))] = value
    return doc


@SETTINGS
@given(doc=instance_docs(), depth=st.sampled_from([0, 0, 900, 5000]))
def test_load_instance(tmp_path_factory, doc, depth):
    p = tmp_path_factory.mktemp("inst") / "i.json"
    text = json.dumps(doc, allow_nan=True)
    if depth:
        text = "[" * depth + text + "]" * depth
    p.write_text(text)
    _refused_cleanly(lambda: optsched.load_instance(p))


@pytest.fixture(scope="module")
def toy_solved():
    from optsched.rigid import solve_exact

    inst = optsched.load_instance("toy:rigid-2x2-five")
    return inst, solve_exact(inst).schedule


@SETTINGS
@given(
    objective=st.one_of(
        st.none(), st.text(max_size=10), st.sampled_from(["makespan", "total_weighted_completion_time"])
    ),
    claimed=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
)
def test_verify(toy_solved, objective, claimed):
    inst, sched = toy_solved
    _refused_cleanly(lambda: optsched.verify(inst, sched, objective=objective, claimed=claimed))


@pytest.mark.parametrize(
    "call",
    [
        lambda: __import__("optsched.sim", fromlist=["get_policy"]).get_policy("x" * 1_000_000),
        lambda: __import__("optsched.sim", fromlist=["get_policy"]).get_policy("fifo", placement=list(range(20_000))),
    ],
)
def test_a_message_that_echoes_a_huge_value_is_cut(call):
    with pytest.raises(OptschedError) as e:
        call()
    msg = str(e.value)
    assert len(msg) <= MESSAGE_LIMIT + 100 and "characters cut" in msg
