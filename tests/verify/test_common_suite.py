"""The common check suite over every registered algorithm and every registered instance kind."""

from __future__ import annotations

import pytest

import optsched
from optsched.core import algorithms, get_kind, kinds
from optsched.verify.suite import check_algorithm, rejects_malformed, suite_instances

optsched.load_plugins()
SPECS = [a for a in algorithms() if suite_instances(a.kind)]


def test_every_kind_with_algorithms_has_suite_instances():
    for a in algorithms():
        assert suite_instances(a.kind), f"kind {a.kind!r} of {a.name!r} registered no suite instances"


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_common_suite(spec):
    insts = suite_instances(spec.kind)
    if spec.suite_options.get("max_instances"):
        insts = insts[: spec.suite_options["max_instances"]]
    for inst in insts:
        res = check_algorithm(spec, inst)
        failed = {k: v for k, v in res.items() if v is not True}
        assert not failed, f"{spec.name} on {inst.name}: {failed}"


@pytest.mark.parametrize("kind", kinds())
def test_malformed_instances_rejected_at_the_boundary(kind):
    insts = suite_instances(kind)
    if not insts:
        pytest.skip(f"kind {kind!r} registered no suite instance")
    res = rejects_malformed(insts[0].to_dict())
    assert res, "no malformed variants generated"
    bad = {k: v for k, v in res.items() if v is not True}
    assert not bad, bad
    assert get_kind(kind)["schema"], f"kind {kind!r} has no JSON Schema in instances/schema/"


@pytest.mark.parametrize("kind", kinds())
def test_exact_optimum_is_a_lower_bound_for_every_algorithm(kind):
    exact = [a for a in algorithms(kind) if a.exact]
    if not exact:
        pytest.skip(f"no exact model for {kind!r}")
    others = [a for a in algorithms(kind) if not a.exact]
    for inst in suite_instances(kind)[:3]:
        r = exact[0].func(inst, seed=0, **exact[0].suite_options)
        if not r.optimal:
            continue
        for a in others:
            v = a.func(inst, seed=0, **a.suite_options).objective
            assert r.objective <= v + 1e-6 * max(1.0, abs(v)), (a.name, inst.name, r.objective, v)
