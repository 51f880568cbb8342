"""The common check suite, run over every registered algorithm.

For each algorithm and each suite instance of its kind:

* ``feasible``: the result's schedule passes :func:`optsched.verify.verify`;
* ``objective``: the result's objective equals the verifier's recomputed value;
* ``deterministic``: the same seed gives the same objective and schedule;
* ``rejects_wrong_kind``: an instance of another kind raises ``InvalidInstanceError``;
* ``algorithm_name``: ``Result.algorithm`` is the registry name (exact models: ``<name>[<backend>]``);
* ``optimal``: the kind's default exact model proves the instance optimal (:func:`exact_optimum`);
* ``exact_is_lower``: that optimum is at least as good as the algorithm's objective, in the
  kind's sense (never skipped: an instance not proven optimal fails it).

And for each kind, malformed instance dicts are rejected at the boundary with
``InvalidInstanceError`` (``rejects_malformed``).

Tested in ``tests/verify/test_suite_checks.py`` and ``tests/verify/test_common_suite.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from optsched.core.io import instance_from_dict
from optsched.core.registry import AlgorithmSpec, default_exact_model, discover_kind, get_kind
from optsched.exceptions import InvalidInstanceError
from optsched.verify.core import verify_result

_SUITE: dict[str, Callable[[], list[Any]]] = {}


def register_suite_instances(kind: str, factory: Callable[[], list[Any]]) -> None:
    """``factory()`` returns a few small instances of ``kind`` (solvable exactly in seconds)."""
    _SUITE[kind] = factory


def suite_instances(kind: str) -> list[Any]:
    if kind not in _SUITE:  # the kind's package registers them when imported
        discover_kind(kind)
    f = _SUITE.get(kind)
    return list(f()) if f else []


class WrongKindInstance:
    """An object that is no valid instance of any algorithm's kind."""

    kind = "__not_a_kind__"
    name = "wrong-kind"
    jobs = ()


def _same(a: Any, b: Any) -> bool:
    if hasattr(a, "to_dict") and hasattr(b, "to_dict"):
        return a.to_dict() == b.to_dict()
    return a == b


def check_algorithm(spec: AlgorithmSpec, instance: Any, *, seed: int = 7, optimum: Any = None) -> dict[str, bool | str]:
    """Run the per-instance checks of the suite; returns {check: True or a failure message}.

    With ``optimum`` (the Result of :func:`exact_optimum` on ``instance``) a heuristic also gets
    ``exact_is_lower``."""
    out: dict[str, bool | str] = {}
    kw = dict(spec.suite_options)
    r1 = spec.func(instance, seed=seed, **kw)
    rep = verify_result(instance, r1)
    out["feasible"] = True if rep.ok or all(v.label == "objective" for v in rep.violations) else rep.summary()
    out["objective"] = True if not any(v.label == "objective" for v in rep.violations) else rep.summary()
    name_ok = r1.algorithm == spec.name or (spec.exact and r1.algorithm.startswith(spec.name + "["))
    out["algorithm_name"] = (
        True if name_ok else (f"Result.algorithm is {r1.algorithm!r}, not the registry name {spec.name!r}")
    )
    if optimum is not None and not spec.exact:
        out["exact_is_lower"] = check_exact_is_lower(spec.kind, optimum, r1.objective)
    r2 = spec.func(instance, seed=seed, **kw)
    same = (r1.objective == r2.objective) and _same(r1.schedule, r2.schedule)
    out["deterministic"] = True if same else f"two runs with seed={seed} differ: {r1.objective} vs {r2.objective}"
    try:
        spec.func(WrongKindInstance(), seed=seed, **kw)
        out["rejects_wrong_kind"] = "accepted an object that is not an instance of its kind"
    except InvalidInstanceError:
        out["rejects_wrong_kind"] = True
    except Exception as e:
        out["rejects_wrong_kind"] = f"raised {type(e).__name__} instead of InvalidInstanceError: {e}"
    return out


def exact_optimum(kind: str, instance: Any) -> Any:
    """The kind's default exact model run on ``instance`` with its suite options (seed 0): a Result."""
    exact = default_exact_model(kind)
    return exact.func(instance, seed=0, **exact.suite_options)


def check_optimal(result: Any) -> bool | str:
    """True if ``result`` is proven optimal, else why not."""
    if result.optimal:
        return True
    return (
        f"{result.algorithm} did not prove suite instance {result.instance!r} optimal: {result.status} "
        f"(objective {result.objective}, bound {result.bound}); a suite instance must be solved exactly "
        f"within the suite options' limits"
    )


def check_exact_is_lower(kind: str, optimum: Any, objective: float | None, *, rtol: float = 1e-6) -> bool | str:
    """True if the proven ``optimum`` (a Result) is at least as good as ``objective`` in the kind's sense."""
    if not optimum.optimal:
        return f"no proven optimum to compare with ({optimum.algorithm}: {optimum.status})"
    if objective is None:
        return "the algorithm returned no objective"
    spec = get_kind(kind)
    if spec.better(optimum.objective, objective, rtol=rtol):
        return True
    return (
        f"the proven optimum {optimum.objective} of {optimum.algorithm} is worse than the algorithm's "
        f"{objective} ({spec.sense}imised): the exact model or the algorithm is wrong"
    )


def _wrong_type(value: Any) -> Any:
    """A JSON value of another type than ``value`` that no field accepts in its place: a list of
    mixed junk for scalars and objects, a string for lists."""
    return "not-a-list" if isinstance(value, list) else ["not", {"a": "scalar"}]


def malformed_variants(doc: dict) -> list[tuple[str, dict]]:
    """Mutations of a valid instance dict that must be rejected: each top-level field and each
    field of the first job replaced by a value of the wrong type, and the job list removed."""
    out = []
    for key in list(doc):
        if key in ("kind",):
            continue
        bad = copy.deepcopy(doc)
        bad[key] = _wrong_type(doc[key])
        out.append((f"{key}: wrong type", bad))
    if "jobs" in doc:
        bad = copy.deepcopy(doc)
        del bad["jobs"]
        out.append(("jobs: missing", bad))
    if isinstance(doc.get("jobs"), list) and doc["jobs"] and isinstance(doc["jobs"][0], dict):
        for k in list(doc["jobs"][0]):
            b2 = copy.deepcopy(doc)
            b2["jobs"][0][k] = _wrong_type(doc["jobs"][0][k])
            out.append((f"jobs[0].{k}: wrong type", b2))
    return out


def rejects_malformed(doc: dict) -> dict[str, bool | str]:
    res: dict[str, bool | str] = {}
    for what, bad in malformed_variants(doc):
        try:
            instance_from_dict(bad)
            res[what] = "accepted"
        except InvalidInstanceError:
            res[what] = True
        except Exception as e:
            res[what] = f"raised {type(e).__name__}: {e}"
    return res
