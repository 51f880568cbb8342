"""Check registry: each instance kind registers its feasibility checks and its evaluator.

A check is ``check(instance, schedule) -> iterable of Violation``; an evaluator is
``evaluator(instance, schedule, objective_name) -> float``. Paper packages add theirs with
:func:`register_check` and :func:`register_evaluator`.

Tested in ``tests/verify/test_no_kind.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from optsched.core.registry import discover_kind
from optsched.verify.report import Violation

Check = Callable[[Any, Any], Iterable[Violation]]
_CHECKS: dict[str, list[tuple[str, Check]]] = {}
_EVALUATORS: dict[str, Callable[[Any, Any, str], float]] = {}


def register_check(kind: str, label: str) -> Callable[[Check], Check]:
    """Decorator: run ``check`` on every schedule of instances of ``kind``; ``label`` is its
    equation label in the formulation file."""

    def deco(func: Check) -> Check:
        lst = _CHECKS.setdefault(kind, [])
        lst[:] = [(lab, f) for lab, f in lst if lab != label]
        lst.append((label, func))
        return func

    return deco


def _discover(kind: str) -> None:
    """The package of ``kind`` registers its checks when imported: import it if needed."""
    if kind not in _CHECKS:
        discover_kind(kind)


def checks_for(kind: str) -> list[tuple[str, Check]]:
    """The verifier's checks of ``kind``, as ``(label, check)`` pairs in the order they run (importing
    the kind's package the first time).

    Examples
    --------
    >>> from optsched.verify import checks_for
    >>> [label for label, _ in checks_for("rigid")][:3]
    ['one_schedule_per_job', 'release', 'demand']
    """
    _discover(kind)
    return list(_CHECKS.get(kind, []))


def register_evaluator(kind: str, func: Callable[[Any, Any, str], float]) -> None:
    """Register ``func(instance, schedule, objective) -> float`` as the objective evaluator of ``kind``
    (its value replaces the shared objectives when the verifier recomputes a schedule's objective).
    """
    _EVALUATORS[kind] = func


def evaluator_for(kind: str) -> Callable[[Any, Any, str], float] | None:
    """The objective evaluator registered for ``kind`` (``evaluate(instance, schedule, objective) -> float``),
    or None when the kind uses the shared objectives of ``optsched.core.objectives``.

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import list_schedule
    >>> from optsched.verify import evaluator_for
    >>> inst = optsched.load_instance("toy:sojourn-two-jobs")
    >>> evaluate = evaluator_for("sojourn")
    >>> round(evaluate(inst, optsched.solve(inst, backend="dp").schedule, "successful_sojourn_time"), 10)
    9.1
    """
    _discover(kind)
    return _EVALUATORS.get(kind)
