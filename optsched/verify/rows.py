"""Comparison rows: exact results and algorithms on one instance, each verified independently.

Paper packages build their demo rows with :func:`exact_vs_algorithm_rows`; ``optsched.experiments``
assembles the rows of every package into the demo table.

Tested in ``tests/experiments/test_demo.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_listeners: list[Callable[[list[dict]], None]] = []


@contextmanager
def on_rows(fn: Callable[[list[dict]], None]) -> Iterator[None]:
    """While inside, ``fn(rows)`` gets the rows of each instance as soon as
    :func:`exact_vs_algorithm_rows` has built them (``optsched demo --out`` writes them at once,
    so an interrupted run keeps every finished instance)."""
    _listeners.append(fn)
    try:
        yield
    finally:
        _listeners.remove(fn)


def violation_text(report: Any, *, max_items: int = 2) -> str | None:
    """What a failed check says, for a table cell: ``"[label] message"`` of the first violations
    (``; ``-joined, then ``(+k more)``); None when ``report`` passed.

    ``report`` is a :class:`~optsched.verify.report.Report`, a list of violations (objects with
    ``label`` and ``message``, or strings), or anything with ``ok`` (no detail: a generic text).
    """
    if getattr(report, "ok", None) is True:
        return None
    items = getattr(report, "violations", report)
    if isinstance(items, (list, tuple)) and not items and not hasattr(report, "ok"):
        return None  # an empty list of violations: passed
    if not isinstance(items, (list, tuple)) or not items:
        return "verification failed (the check reported no detail)"
    parts = [str(v) for v in items[:max_items]]
    if len(items) > max_items:
        parts.append(f"(+{len(items) - max_items} more)")
    return "; ".join(parts)


def exact_vs_algorithm_rows(instance: Any, exact_results: list, algo_results: list, verify_fn) -> list[dict]:
    """Rows for one instance: exact runs first, then algorithms, with ratio = objective / optimum.

    ``optimum`` is the objective of a proven-optimal exact run (None if no run proved it); a
    row of an exact run stopped by a limit shows its bound and gap. ``violation`` is None for a
    verified row, else the violated checks by label with their messages (:func:`violation_text`).

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import list_schedule, solve_exact
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> rows = exact_vs_algorithm_rows(inst, [solve_exact(inst)], [list_schedule(inst)], optsched.verify_result)
    >>> [(r["algorithm"], r["objective"], r["optimum"], r["verified"]) for r in rows]
    [('rigid-exact[highs]', 19.0, 19.0, True), ('rigid-wspt', 20.0, 19.0, True)]
    """
    opt = next((r.objective for r in exact_results if r.optimal), None)
    rows = []
    for r in list(exact_results) + list(algo_results):
        rep = verify_fn(instance, r)
        rows.append(
            {
                "instance": getattr(instance, "name", "?"),
                "algorithm": r.algorithm,
                "objective": r.objective,
                "optimum": opt,
                "bound": r.bound,
                "gap": r.gap,
                "ratio": (r.objective / opt) if (opt and r.objective is not None) else None,
                "runtime": r.runtime,
                "status": str(r.status),
                "verified": rep.ok,
                "violation": violation_text(rep),
            }
        )
    for fn in list(_listeners):
        fn(rows)
    return rows
