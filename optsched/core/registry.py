"""Registries that let each paper package plug into the shared layers.

* instance kinds: ``kind`` name -> instance class (with ``from_dict``) and its JSON Schema;
* algorithms (exact models and heuristics): name -> :class:`AlgorithmSpec`.

The CLI, the demo and the common check suite read these registries; paper packages fill them
in the ``register()`` of their ``plugin.py`` (:mod:`optsched.core.plugins`; ``optsched.load_plugins()``
loads them all).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from optsched.core.paths import is_library_name
from optsched.core.plugins import SHARED_PACKAGES, load_plugin, plugin_packages
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, UnknownNameError

_KINDS: dict[str, KindSpec] = {}
_ALGORITHMS: dict[str, AlgorithmSpec] = {}

SENSES = ("min", "max")


@dataclass(frozen=True)
class KindSpec:
    """What optsched knows about an instance kind (one per paper problem).

    ``instance_cls`` needs ``from_dict(d)`` and ``to_dict()``; ``schema`` is a file name in
    ``optsched/core/schemas/``; ``objective`` is the kind's default objective (what ``optsched
    verify`` recomputes) and ``sense`` whether it is minimised or maximised; ``schedule_cls``
    reads schedule files (default: :class:`optsched.core.Schedule`); ``default_exact`` names the
    exact model ``optsched solve`` uses when none is given. Checks, the evaluator and the suite
    instances are registered with :mod:`optsched.verify` (a layer above core), by kind name.

    ``spec["cls"]``, ``spec["schema"]`` and ``spec["objective"]`` still work (the former dict).
    """

    name: str
    instance_cls: type
    schema: str | None = None
    objective: str = "total_weighted_completion_time"
    sense: str = "min"
    schedule_cls: type | None = None
    default_exact: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.sense not in SENSES:
            raise InvalidOptionError(f"KindSpec {self.name!r}: sense must be one of {SENSES}; got {self.sense!r}.")

    _LEGACY: ClassVar[dict[str, str]] = {"cls": "instance_cls"}

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._LEGACY.get(key, key))

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, self._LEGACY.get(key, key), default)

    def better(self, a: float, b: float, *, rtol: float = 1e-9) -> bool:
        """True if objective ``a`` is at least as good as ``b`` (within ``rtol``) for this sense."""
        tol = rtol * max(1.0, abs(a), abs(b))
        return a <= b + tol if self.sense == "min" else a >= b - tol


def register_kind(
    kind: str | KindSpec,
    cls: type | None = None,
    *,
    schema: str | None = None,
    objective: str = "total_weighted_completion_time",
    sense: str = "min",
    schedule_cls: type | None = None,
    default_exact: str | None = None,
    description: str = "",
) -> KindSpec:
    """Register an instance kind: either a :class:`KindSpec`, or its fields as arguments
    (``register_kind("rigid", Instance, schema="rigid.schema.json")``). Returns the spec."""
    if isinstance(kind, KindSpec):
        spec = kind
    else:
        if cls is None:
            raise TypeError("register_kind(name, cls, ...) needs the instance class")
        spec = KindSpec(
            kind,
            cls,
            schema=schema,
            objective=objective,
            sense=sense,
            schedule_cls=schedule_cls or getattr(cls, "schedule_class", None),
            default_exact=default_exact,
            description=description,
        )
    _KINDS[spec.name] = spec
    return spec


def discover_kind(kind: str) -> bool:
    """Import the package that registers ``kind`` if it is not registered yet: the subpackage
    ``optsched.<kind>`` when one exists (plugins are found by the packages present, never by a
    list). Returns True if ``kind`` is registered afterwards.

    So ``optsched.core.load_instance("rigid.json")`` works without importing ``optsched.rigid``
    first, although the kind is registered by that package."""
    if kind in _KINDS:
        return True
    if not isinstance(kind, str) or not kind.isidentifier() or kind in SHARED_PACKAGES:
        return False
    name = f"optsched.{kind}"
    if name in plugin_packages():  # a paper package of that name is present
        load_plugin(name)
    return kind in _KINDS


def get_kind(kind: str) -> KindSpec:
    """The registered instance kind ``kind`` (a :class:`KindSpec`), importing ``optsched.<kind>`` the
    first time it is asked for; raises :class:`~optsched.exceptions.UnknownNameError` listing the known kinds.

    Examples
    --------
    >>> from optsched.core import get_kind
    >>> get_kind("rigid").objective
    'total_weighted_completion_time'
    """
    if kind not in _KINDS:
        discover_kind(kind)
    try:
        return _KINDS[kind]
    except KeyError:
        raise UnknownNameError(
            f"Unknown instance kind {kind!r}; known kinds: {sorted(_KINDS)}. Set the 'kind' field "
            f"of the instance to one of them."
        ) from None


def kinds() -> list[str]:
    """The names of the registered instance kinds, sorted (``optsched.load_plugins()`` registers every paper's).

    Examples
    --------
    >>> import optsched
    >>> from optsched.core import kinds
    >>> optsched.load_plugins()
    >>> "rigid" in kinds() and "sojourn" in kinds()
    True
    """
    return sorted(_KINDS)


def check_kind(instance: Any, kind: str, who: str = "This algorithm") -> Any:
    """Return ``instance`` if it is of ``kind``, else raise :class:`InvalidInstanceError` saying
    what was expected and how to load one (the one wrong-kind guard of every paper).

    Examples
    --------
    >>> import optsched
    >>> from optsched.core import check_kind
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> check_kind(inst, "rigid") is inst
    True
    """
    got = getattr(instance, "kind", None)
    spec = _KINDS.get(kind)
    ok = got == kind and (spec is None or isinstance(instance, spec.instance_cls))
    if not ok and isinstance(instance, (str, os.PathLike)):  # a name or a path, not loaded yet
        what = "name" if isinstance(instance, str) and is_library_name(instance) else "path"
        raise InvalidInstanceError(
            f"{who} needs an instance of kind {kind!r}, not the {what} {str(instance)!r}: load it first, "
            f"e.g. optsched.load_instance({str(instance)!r})."
        )
    if not ok:
        raise InvalidInstanceError(
            f"{who} needs an instance of kind {kind!r}; got "
            f"{got if got is not None else type(instance).__name__!r}. Load one with optsched.load_instance "
            f"(`optsched instances --kind {kind}` lists shipped ones)."
        )
    return instance


def requires_kind(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: the function's first argument must be an instance of ``kind`` (see :func:`check_kind`).

    >>> @requires_kind("rigid")
    ... def f(instance): return instance.n_jobs
    >>> f(object())
    Traceback (most recent call last):
    ...
    optsched.exceptions.InvalidInstanceError: f needs an instance of kind 'rigid'; got 'object'. ...
    """

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(instance: Any, *args: Any, **kwargs: Any) -> Any:
            check_kind(instance, kind, func.__name__)
            return func(instance, *args, **kwargs)

        return wrapper

    return deco


def default_exact_model(kind: str) -> AlgorithmSpec:
    """The exact model used when none is named: the kind's ``default_exact``, else its only exact
    model. Several without a default is an error naming them (never an alphabetical pick).

    Examples
    --------
    >>> import optsched
    >>> from optsched.core import default_exact_model
    >>> optsched.load_plugins()
    >>> default_exact_model("rigid").name
    'rigid-exact'
    """
    spec = get_kind(kind)
    if spec.default_exact:
        return get_algorithm(spec.default_exact)
    exact = algorithms(kind, exact=True)
    if len(exact) == 1:
        return exact[0]
    if not exact:
        raise UnknownNameError(f"No exact model is registered for kind {kind!r}; name an algorithm with --model.")
    raise UnknownNameError(
        f"Kind {kind!r} has several exact models {[a.name for a in exact]} and no default; "
        f"name one with --model (or set default_exact in its KindSpec)."
    )


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


def doc_summary(doc: str | None) -> str:
    """The first paragraph of a docstring on one line (a registry's description): not only its first
    line, which may stop mid-sentence.

    >>> doc_summary('''DRF: progressive filling among the waiting jobs at each slot
    ...     boundary, one bundle at a time.
    ...
    ...     Details.''')
    'DRF: progressive filling among the waiting jobs at each slot boundary, one bundle at a time.'
    """
    lines = []
    for line in (doc or "").strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


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
    """Decorator: register ``func`` under ``name`` for instances of ``kind``.

    ``name`` is ``<key>-<algorithm>`` and equals the ``Result.algorithm`` the function returns
    (exact models: ``<name>[<backend>]``).

    >>> @register_algorithm("doc-first", "doc")
    ... def first(instance): return instance
    >>> get_algorithm("doc-first").name, [a.name for a in algorithms("doc")]
    ('doc-first', ['doc-first'])
    >>> _ = _ALGORITHMS.pop("doc-first")
    """

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        _ALGORITHMS[name] = AlgorithmSpec(
            name=name,
            kind=kind,
            func=func,
            exact=exact,
            randomized=randomized,
            backends=tuple(backends),
            description=description or doc_summary(func.__doc__),
            suite_options=dict(suite_options or {}),
        )
        return func

    return deco


def get_algorithm(name: str) -> AlgorithmSpec:
    """The registered algorithm or exact model ``name`` (an :class:`AlgorithmSpec`, callable on an
    instance); raises :class:`~optsched.exceptions.UnknownNameError` listing the known names.

    Examples
    --------
    >>> import optsched
    >>> from optsched.core import get_algorithm
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> get_algorithm("rigid-wspt")(inst).objective
    20.0
    """
    try:
        return _ALGORITHMS[name]
    except KeyError:
        raise UnknownNameError(
            f"Unknown algorithm or model {name!r}; known: {sorted(_ALGORITHMS)}. List them with `optsched info`."
        ) from None


def algorithms(kind: str | None = None, *, exact: bool | None = None) -> list[AlgorithmSpec]:
    """The registered algorithms, by name; only those of ``kind`` and/or only exact ones (``exact=True``)
    or only heuristics (``exact=False``) if given. ``optsched.load_plugins()`` registers every paper's.

    Examples
    --------
    >>> import optsched
    >>> from optsched.core import algorithms
    >>> optsched.load_plugins()
    >>> [a.name for a in algorithms("rigid", exact=True)]
    ['rigid-exact']
    """
    out = [a for a in _ALGORITHMS.values() if (kind is None or a.kind == kind) and (exact is None or a.exact == exact)]
    return sorted(out, key=lambda a: a.name)
