"""Issue 28 item 4: every numeric field is bounded at load (optsched.core.limits), the schemas
carry the same limits, and whatever an instance file lets through does not crash a solver.

Hypothesis sets one numeric field of a shipped toy instance of each kind to a malformed or
extreme value: loading either works or raises an optsched error naming the field, a value above
the documented maximum is always refused, and an instance that loads is solved (or refused)
with optsched errors only, never OverflowError, MemoryError, a pybind RuntimeError or a hang.
"""

from __future__ import annotations

import copy
import json
import math
import warnings

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import optsched
from optsched.core import limits
from optsched.core.io import instance_from_dict, schema_path
from optsched.exceptions import InvalidInstanceError, ModelTooLargeError, OptschedError
from optsched.solvers import SolveOptions

TOYS = ("rigid-2x2-five", "rarddls-2x2-three", "sojourn-two-jobs", "asrpt-2x2-three", "elastic-intro")


def _doc(toy: str) -> dict:
    return json.loads(optsched.toy_path(toy).read_text())


def _numeric_paths(x, path=()):
    """Every numeric leaf of an instance document (one index per list: jobs[0], servers[0], ...)."""
    if isinstance(x, bool):
        return
    if isinstance(x, (int, float)) and path and path[-1] != "id":
        yield path
    elif isinstance(x, dict):
        for k, v in x.items():
            if k not in ("known_optima", "metadata", "schema_version"):
                yield from _numeric_paths(v, (*path, k))
    elif isinstance(x, list) and x:
        yield from _numeric_paths(x[0], (*path, 0))


def _set(doc: dict, path: tuple, value) -> dict:
    d = copy.deepcopy(doc)
    node = d
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return d


PATHS = [(toy, p) for toy in TOYS for p in _numeric_paths(_doc(toy))]

#: Malformed or extreme values: what a typo, a unit slip or a fuzzer gives.
EXTREMES = st.sampled_from(
    [float("nan"), float("inf"), -float("inf"), -1.0, 0.0, 1e-300, 1e308, 10**30, 1e12, 5e9, 1e9 + 1]
) | st.floats(allow_nan=True, allow_infinity=True)


def _schema_maxima(schema: dict, path: tuple = ()) -> dict:
    """{path in the schema: maximum} for every bounded number."""
    out = {}
    if isinstance(schema, dict):
        if "maximum" in schema and schema.get("type") in ("number", "integer", ["integer", "null"]):
            out[path] = schema["maximum"]
        for k, v in schema.items():
            out.update(_schema_maxima(v, (*path, k)))
    elif isinstance(schema, list):
        for i, v in enumerate(schema):
            out.update(_schema_maxima(v, (*path, i)))
    return out


# -- the limits themselves ----------------------------------------------------------------------


def test_schemas_carry_the_limits_of_optsched_core_limits():
    allowed = {
        limits.MAX_SECONDS,
        limits.MAX_ARRIVAL,
        limits.MAX_WEIGHT,
        limits.MAX_COUNT,
        limits.MAX_SERVERS,
        limits.MAX_SERVER_GPUS,
        limits.MAX_AMOUNT,
        limits.MAX_SECONDS * 1000,  # elastic times are in ms
        1,  # probabilities, xi1
        *limits.MAX_SLOTS.values(),
    }
    from optsched.elastic.constants import MAX_CHUNKS

    allowed.add(MAX_CHUNKS)
    for kind in ("rigid", "asrpt", "elastic", "rarddls", "sojourn"):
        schema = json.loads(schema_path(f"{kind}.schema.json").read_text())
        maxima = _schema_maxima(schema)
        assert maxima, kind
        for where, value in maxima.items():
            assert value in allowed, (kind, where, value)


def test_every_numeric_field_of_every_kind_has_a_maximum():
    """Each numeric leaf of the toys is refused at 1e300 with a message naming it."""
    for toy, path in PATHS:
        field = str(path[-1]) if isinstance(path[-1], str) else str(path[-2])
        if field in ("probs", "xi1"):  # probabilities: bounded by 1 already
            continue
        with pytest.raises(OptschedError) as e:
            instance_from_dict(_set(_doc(toy), path, 1e300))
        assert isinstance(e.value, InvalidInstanceError), (toy, path, e.value)
        assert field in str(e.value) and "1e+300" in str(e.value), (toy, path, str(e.value))


# -- issue 28's cases ---------------------------------------------------------------------------


def test_work_1e308_is_refused_at_load_naming_the_field_and_the_limit():
    """Was: passed validation, then OverflowError (HiGHS) or a pybind RuntimeError (CP-SAT)."""
    doc = _set(_doc("rigid-2x2-five"), ("jobs", 0, "work"), 1e308)
    with pytest.raises(InvalidInstanceError, match=r"'work' field of job 0 \(jobs\[0\]\) must be <= 1000000000") as e:
        instance_from_dict(doc)
    assert "1e+308" in str(e.value) and limits.LIMITS_DOC in str(e.value)
    from optsched.core import Job

    with pytest.raises(InvalidInstanceError, match="'work' field of job 0 must be a finite number >= 1e-06 and <= 1e"):
        Job(0, work=1e308)  # the same limit for an object built in Python


def test_rarddls_iterations_1e9_is_refused_at_load():
    """Was: "optimal" in 39 ms, then the verifier gave up after 80 s (more than 10^7 slots)."""
    doc = _set(_doc("rarddls-2x2-three"), ("jobs", 0, "iterations"), 10**9)
    with pytest.raises(InvalidInstanceError) as e:
        instance_from_dict(doc)
    msg = str(e.value)
    assert "1,000,000 an instance of kind 'rarddls' may span" in msg and "job 0" in msg and "'iterations'" in msg


def test_rigid_slot_count_is_checked_before_a_model_is_built():
    from optsched.core import Cluster, Instance, Job
    from optsched.rigid.formulation import slot_data

    inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=1e9), Job(1, work=1e9)], slot=1.0)  # loads (simulable)
    with pytest.raises(ModelTooLargeError, match=r"spans 2e\+09 slots .* 10,000,000 an instance of kind 'rigid'"):
        slot_data(inst)


def test_cluster_count_and_gpus_are_bounded():
    doc = _doc("rigid-2x2-five")
    doc["cluster"] = {"servers": {"count": 10**12, "gpus": 8}}  # used to build a trillion servers
    with pytest.raises(InvalidInstanceError, match=r"'count' field .* must be <= 100000"):
        instance_from_dict(doc)
    from optsched.core import Cluster

    with pytest.raises(InvalidInstanceError, match="'gpus_per_server' field of the cluster must be an integer in"):
        Cluster.homogeneous(2, 10**6)


# -- hypothesis: random malformed numeric fields ------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), EXTREMES)
def test_loading_a_malformed_numeric_field_raises_only_optsched_errors(case, value):
    toy, path = case
    doc = _set(_doc(toy), path, value)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            instance_from_dict(doc)
    except OptschedError as e:
        field = str(path[-1]) if isinstance(path[-1], str) else str(path[-2])
        if isinstance(e, InvalidInstanceError) and "must" in str(e):
            assert field in str(e) or "slots" in str(e) or "tau_j" in str(e), (path, str(e))
        return
    # what loads is within the limits
    v = float(value)
    assert math.isfinite(v) and v <= max(limits.MAX_AMOUNT, limits.MAX_SLOTS["rigid"]), (path, value)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), st.sampled_from([1e-300, 1e-3, 3.0, 1e6, 1e9, 4e9, 1e12, 1e308, 10**30]))
@example(("rigid-2x2-five", ("jobs", 0, "work")), 3.0)  # loads and solves: the report is checked
def test_what_loads_is_solved_and_verified_with_optsched_errors_only(case, value):
    """The issue's escapes (OverflowError, pybind RuntimeError, MemoryError, a verifier giving up)
    come from values that loaded; whatever loads now goes through solve and verify cleanly: a
    refusal at load names the field, a solve either refuses with an optsched error or returns a
    schedule the verifier finds feasible with the objective it claims."""
    toy, path = case
    field = str(path[-1]) if isinstance(path[-1], str) else str(path[-2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            inst = instance_from_dict(_set(_doc(toy), path, value))
        except InvalidInstanceError as e:
            if "must" in str(e):  # a field's own check (else a whole-instance one: no job fits, ...)
                assert field in str(e) or "slots" in str(e) or "tau_j" in str(e), (path, str(e))
            return
        try:
            result = optsched.solve(inst, options=SolveOptions(time_limit=2, threads=1))
        except OptschedError:
            return  # refused before or while solving (too large, infeasible, ...): an optsched error
        if result.schedule is not None:
            report = optsched.verify_result(inst, result)
            assert report.ok, (toy, path, value, report.summary())
