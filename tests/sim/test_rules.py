"""``optsched.sim.rules`` stays honest: R1-R12 are all there, every function it names as a carrier
exists (the compiled ones found by parsing the kernel's source, without importing numba) and cites
its rule by number, every rule has a carrier in the Python engine, the statements are the ones the
documentation shows, and the rules' small functions say what the rules say."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import optsched.sim
from optsched.sim.rules import RULES, available, las_value, outranks, soon_available, started_now

COMPILED = Path(optsched.sim.__file__).parent / "compiled"
DOCS = Path(__file__).parents[2] / "docs" / "simulator.md"


def _python_object(name: str):
    module, _, qualname = name.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _compiled_functions(module: str) -> dict[str, ast.FunctionDef]:
    path = COMPILED / f"{module}.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_the_rules_are_r1_to_r12():
    assert sorted(RULES) == list(range(1, 13))
    assert all(r.number == n and r.anchor == f"R{n}" for n, r in RULES.items())
    assert len({r.name for r in RULES.values()}) == 12


@pytest.mark.parametrize("number", sorted(RULES))
def test_every_rule_has_a_python_carrier_that_exists_and_cites_it(number):
    rule = RULES[number]
    assert rule.python, f"R{number} has no carrier in the Python engine"
    for name in rule.python:
        obj = _python_object(name)  # AttributeError / ImportError: a carrier that does not exist
        src = inspect.getsource(obj)
        assert re.search(rf"\bR{number}\b", src), f"{name} carries R{number} but does not cite it"


@pytest.mark.parametrize("number", sorted(RULES))
def test_every_compiled_carrier_exists(number):
    for name in RULES[number].compiled:
        module, _, func = name.partition(":")
        assert func in _compiled_functions(module), f"{name} (R{number}) is not a function of compiled/{module}.py"


def test_the_documentation_states_each_rule_as_the_code_does():
    """docs/simulator.md has one table row per rule with the statement of RULES, word for word."""
    text = DOCS.read_text()
    for n, rule in RULES.items():
        rows = [line for line in text.splitlines() if line.startswith(f"| R{n} |")]
        assert len(rows) == 1, f"R{n}: {len(rows)} table rows"
        cells = [c.strip() for c in rows[0].strip("|").split("|")]
        assert cells[1] == rule.name and cells[2] == rule.statement.replace("|", "\\|"), f"R{n}"


# -- the rules' functions --------------------------------------------------------------------------
values = st.floats(-1e6, 1e6, allow_nan=False)


@given(values, values)
def test_outranks_is_strict(a, b):
    assert outranks(a, b) == (a < b)
    assert not (outranks(a, b) and outranks(b, a))
    assert not outranks(a, a)  # R5: ties never preempt


@given(values, values)
def test_started_now_is_equality_of_times(t, now):
    assert started_now(t, now) == (t == now)
    assert started_now(now, now) and not started_now(None, now)


@given(st.integers(0, 64), st.integers(0, 64), st.integers(0, 64), st.integers(0, 64))
def test_available_gpus(free, claimed, own, saving):
    assert available(free, claimed) + own == available(free, claimed, own)
    assert soon_available(free, claimed, saving) == available(free, claimed) + saving
    assert available(free, 0) == free


@given(st.floats(0, 1e6), st.integers(1, 64))
def test_las_value(attained, gpus):
    assert las_value(attained, gpus, False) == attained
    assert las_value(attained, gpus, True) == pytest.approx(attained * gpus)
