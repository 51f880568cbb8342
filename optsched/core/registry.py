"""Registries that let each paper package plug into the shared layers.

* instance kinds: ``kind`` name -> instance class (with ``from_dict``) and its JSON Schema;
* algorithms (exact models and heuristics): name -> :class:`AlgorithmSpec`.

The CLI, the demo and the common check suite read these registries; paper packages fill them
when imported (``optsched.load_plugins()`` imports them all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from optsched.exceptions import UnknownNameError

__all__ = [
    "AlgorithmSpec",
    "register_kind",
    "get_kind",
    "kinds",
    "register_algorithm",
    "get_algorithm",
    "algorithms",
]

_KINDS: dict[str, dict[str, Any]] = {}
_ALGORITHMS: dict[str, AlgorithmSpec] = {}


def register_kind(kind: str, cls: type, *, schema: str | None = None,
                  objective: str = "total_weighted_completion_time") -> None:
    """Register an instance class for the ``"kind"`` field of instance JSON files.

    ``cls`` needs ``from_dict(d)`` and ``to_dict()``; ``schema`` is a file name in
    ``optsched/core/schemas/`` (= ``instances/schema/``); ``objective`` is the kind's default
    objective (what ``optsched verify`` recomputes unless told otherwise).
    """
    _KINDS[kind] = {"cls": cls, "schema": schema, "objective": objective}


def get_kind(kind: str) -> dict[str, Any]:
    try:
        return _KINDS[kind]
    except KeyError:
        raise UnknownNameError(
            f"Unknown instance kind {kind!r}; known kinds: {sorted(_KINDS)}. Set the 'kind' field "
            f"of the instance to one of them."
        ) from None


def kinds() -> list[str]:
    return sorted(_KINDS)


@dataclass(frozen=True)
class AlgorithmSpec:
    """A registered algorithm.

    ``func(instance, *, seed=None, **options) -> Result``. Exact ones accept ``backend=`` (one
    of ``backends``) and ``options=`` (:class:`optsched.solvers.SolveOptions`).
    """

    name: str
    kind: str
    func: Callable[..., Any]
    exact: bool = False
    randomized: bool = False
    backends: tuple[str, ...] = ()
    description: str = ""
    suite_options: dict[str, Any] = field(default_factory=dict)

    def __call__(self, instance: Any, **kwargs: Any) -> Any:
        return self.func(instance, **kwargs)


def register_algorithm(
    name: str,
    kind: str,
    *,
    exact: bool = False,
    randomized: bool = False,
    backends: tuple[str, ...] = (),
    description: str = "",
    suite_options: dict[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register ``func`` under ``name`` for instances of ``kind``."""

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        doc = (func.__doc__ or "").strip().splitlines()
        _ALGORITHMS[name] = AlgorithmSpec(
            name=name,
            kind=kind,
            func=func,
            exact=exact,
            randomized=randomized,
            backends=tuple(backends),
            description=description or (doc[0] if doc else ""),
            suite_options=dict(suite_options or {}),
        )
        return func

    return deco


def get_algorithm(name: str) -> AlgorithmSpec:
    try:
        return _ALGORITHMS[name]
    except KeyError:
        raise UnknownNameError(
            f"Unknown algorithm or model {name!r}; known: {sorted(_ALGORITHMS)}. "
            f"List them with `optsched info`."
        ) from None


def algorithms(kind: str | None = None, *, exact: bool | None = None) -> list[AlgorithmSpec]:
    out = [a for a in _ALGORITHMS.values() if (kind is None or a.kind == kind)
           and (exact is None or a.exact == exact)]
    return sorted(out, key=lambda a: a.name)
