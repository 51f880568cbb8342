"""The common check suite over every registered algorithm and every registered instance kind.

One pytest item per (algorithm, suite instance, check), with readable ids such as
``rigid-wspt/rigid-2x2-five/feasible``; the algorithm runs once per (algorithm, instance).
"""

from __future__ import annotations

from functools import cache

import pytest

import optsched
from optsched.core import algorithms, get_kind, kinds
from optsched.verify.suite import check_algorithm, rejects_malformed, suite_instances

optsched.load_plugins()
SPECS = [a for a in algorithms() if suite_instances(a.kind)]
CHECKS = ("feasible", "objective", "deterministic", "rejects_wrong_kind")


def _cases():
    out = []
    for spec in SPECS:
        insts = suite_instances(spec.kind)
        if spec.suite_options.get("max_instances"):
            insts = insts[: spec.suite_options["max_instances"]]
        for i, inst in enumerate(insts):
            for check in CHECKS:
                out.append(pytest.param(spec.name, i, check, id=f"{spec.name}/{getattr(inst, 'name', i)}/{check}"))
    return out


@cache
def _run(name: str, i: int) -> dict:
    spec = optsched.get_algorithm(name)
    inst = suite_instances(spec.kind)[i]
    return check_algorithm(spec, inst)


def test_every_kind_with_algorithms_has_suite_instances():
    for a in algorithms():
        assert suite_instances(a.kind), f"kind {a.kind!r} of {a.name!r} registered no suite instances"


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


def _exact_cases():
    out = []
    for kind in kinds():
        if not [a for a in algorithms(kind) if a.exact]:
            continue
        for i, inst in enumerate(suite_instances(kind)[:3]):
            out.append(pytest.param(kind, i, id=f"{kind}/{getattr(inst, 'name', i)}"))
    return out


@pytest.mark.parametrize(("kind", "i"), _exact_cases())
def test_exact_optimum_bounds_every_algorithm(kind, i):
    """The suite instances are solved to proven optimality (a failure otherwise), and the
    optimum is at least as good as every algorithm's objective, in the kind's sense."""
    from optsched.core import default_exact_model

    spec = get_kind(kind)
    exact = default_exact_model(kind)
    inst = suite_instances(kind)[i]
    r = exact.func(inst, seed=0, **exact.suite_options)
    assert r.optimal, f"{exact.name} did not prove suite instance {getattr(inst, 'name', i)} optimal: {r.status}"
    for a in algorithms(kind):
        if a.exact:
            continue
        v = a.func(inst, seed=0, **a.suite_options).objective
        assert spec.better(r.objective, v, rtol=1e-6), (a.name, r.objective, v, spec.sense)
