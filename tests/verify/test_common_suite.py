"""The common check suite over every registered algorithm and every registered instance kind.

One pytest item per (algorithm, suite instance, check), with readable ids such as
``rigid-wspt/rigid-2x2-five/feasible`` or ``rigid-exact/rigid-2x2-five/optimal``; each algorithm
runs once per (algorithm, instance) and each kind's exact model once per instance. A suite
instance the exact model does not prove optimal fails its ``optimal`` item and every
``exact_is_lower`` item on it (never skipped).
"""

from __future__ import annotations

from functools import cache

import pytest

import optsched
from optsched.core import algorithms, default_exact_model, get_kind, kinds
from optsched.verify.suite import (
    check_algorithm,
    check_optimal,
    exact_optimum,
    rejects_malformed,
    suite_instances,
)

optsched.load_plugins()
SPECS = [a for a in algorithms() if suite_instances(a.kind)]
CHECKS = ("feasible", "objective", "deterministic", "rejects_wrong_kind", "algorithm_name")


def _has_exact(kind: str) -> bool:
    return any(a.exact for a in algorithms(kind))


@cache
def _instances(kind: str) -> tuple:
    return tuple(suite_instances(kind))


@cache
def _labels(kind: str) -> tuple[str, ...]:
    """Instance names for the ids; a name that occurs twice in a kind's suite gets ``#<index>``."""
    names = [str(getattr(inst, "name", i)) for i, inst in enumerate(_instances(kind))]
    return tuple(n if names.count(n) == 1 else f"{n}#{i}" for i, n in enumerate(names))


def _cases():
    out = []
    for spec in SPECS:
        insts = _instances(spec.kind)
        if spec.suite_options.get("max_instances"):
            insts = insts[: spec.suite_options["max_instances"]]
        checks = CHECKS + (("exact_is_lower",) if _has_exact(spec.kind) and not spec.exact else ())
        for i in range(len(insts)):
            for check in checks:
                out.append(pytest.param(spec.name, i, check, id=f"{spec.name}/{_labels(spec.kind)[i]}/{check}"))
    return out


def _optimal_cases():
    out = []
    for kind in kinds():
        if not _has_exact(kind):
            continue
        name = default_exact_model(kind).name
        for i, label in enumerate(_labels(kind)):
            out.append(pytest.param(kind, i, id=f"{name}/{label}/optimal"))
    return out


@cache
def _optimum(kind: str, i: int):
    return exact_optimum(kind, _instances(kind)[i])


@cache
def _run(name: str, i: int) -> dict:
    spec = optsched.get_algorithm(name)
    inst = _instances(spec.kind)[i]
    optimum = _optimum(spec.kind, i) if _has_exact(spec.kind) and not spec.exact else None
    return check_algorithm(spec, inst, optimum=optimum)


def test_every_kind_with_algorithms_has_suite_instances():
    for a in algorithms():
        assert suite_instances(a.kind), f"kind {a.kind!r} of {a.name!r} registered no suite instances"


def test_ids_are_unique_and_readable():
    ids = [p.id for p in _cases() + _optimal_cases()]
    assert len(ids) == len(set(ids))
    assert all(i.count("/") >= 2 and " " not in i for i in ids)
    assert "rigid-wspt/rigid-2x2-five/exact_is_lower" in ids and "rigid-exact/rigid-2x2-five/optimal" in ids


@pytest.mark.parametrize(("kind", "i"), _optimal_cases())
def test_suite_instance_solved_to_optimality(kind, i):
    res = check_optimal(_optimum(kind, i))
    assert res is True, res


@pytest.mark.parametrize(("name", "i", "check"), _cases())
def test_common_suite(name, i, check):
    res = _run(name, i)
    assert res[check] is True, f"{name} on suite instance {i}: {check}: {res[check]}"


@pytest.mark.parametrize("kind", kinds())
def test_malformed_instances_rejected_at_the_boundary(kind):
    insts = suite_instances(kind)
    if not insts:
        pytest.skip(f"kind {kind!r} registered no suite instance")
    res = rejects_malformed(insts[0].to_dict())
    assert res, "no malformed variants generated"
    bad = {k: v for k, v in res.items() if v is not True}
    assert not bad, bad
    assert get_kind(kind)["schema"], f"kind {kind!r} has no JSON Schema in optsched/core/schemas/"
