"""The compiled schema check (optsched.core.schemacheck) says "valid" exactly when jsonschema
does: shipped instances of every kind, mutated at random (a field set to a value of another
type, at or beyond a bound, NaN, a float with an integral value, a NumPy number; a field
removed or added), are judged by both."""

from __future__ import annotations

import copy
import json
import math
from importlib.resources import files

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core.io import _validator, validate_against_schema
from optsched.core.schemacheck import compile_schema
from optsched.exceptions import InvalidInstanceError

TOY = files("optsched.instances") / "toy"
CASES = {
    "rigid": "rigid-3x2-single.json",
    "asrpt": "asrpt-2x2-three.json",
    "elastic": "elastic-intro.json",
    "rarddls": "rarddls-2x2-three.json",
    "sojourn": "sojourn-four-jobs.json",
}

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0, 1, 1e-6, 1e-7, 1e6, 1e9, 1e9 + 1, 4e9, 1e18, 2e18, 10**10, 2**63, 1000000000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 2.0, -0.0, 0.5, math.nan]),
    st.sampled_from([np.int64(2), np.float64(1.5), np.bool_(True), np.float64(math.nan)]),
    st.text(max_size=3),
    st.sampled_from(["rigid", "ps", "rar", "tar", "max1", "servers"]),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["gpus", "x", "cpu"]), st.integers(-1, 3), max_size=2),
)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _mutate(doc, data):
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        what = data.draw(st.sampled_from(["set", "set", "set", "delete", "add"]))
        if what == "set":
            parent[path[-1]] = data.draw(values)
        elif what == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif what == "add" and isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["bogus", "gpus", "weight", "resources", "kind"]))] = data.draw(values)
    return doc


@pytest.mark.parametrize("kind", sorted(CASES))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_compiled_check_agrees_with_jsonschema(kind, data):
    doc = json.loads((TOY / CASES[kind]).read_text())
    v = _validator(f"{kind}.schema.json")
    check = compile_schema(v.schema, type(v))
    assert check is not None  # every shipped schema compiles
    assert check(doc) and v.is_valid(doc)
    bad = _mutate(doc, data)
    assert check(bad) == v.is_valid(bad)


def test_a_schema_with_an_unknown_keyword_is_left_to_jsonschema():
    assert compile_schema({"type": "string", "pattern": "^a"}, jsonschema.Draft202012Validator) is None


def test_the_message_names_the_invalid_item_of_a_long_array():
    doc = json.loads((TOY / "rigid-2x2-five.json").read_text())
    job = doc["jobs"][0]
    doc["jobs"] = [dict(job, id=i) for i in range(500)]
    doc["jobs"][321]["gpus"] = 0
    with pytest.raises(InvalidInstanceError, match=r"'gpus' field of job 321 \(jobs\[321\]\) must be >= 1; got 0"):
        validate_against_schema(doc, "rigid.schema.json")
    doc["jobs"][321]["gpus"] = 1
    doc["cluster"]["bogus"] = 1  # valid jobs, an error elsewhere
    with pytest.raises(InvalidInstanceError, match="unknown field"):
        validate_against_schema(doc, "rigid.schema.json")
