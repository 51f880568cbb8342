"""How a paper plugs into optsched: one ``plugin.py`` per paper package, with one ``register()``.

A paper package is every subpackage of ``optsched`` that is not a shared layer
(:data:`SHARED_PACKAGES`): nothing lists them, :func:`plugin_packages` finds them. Its
``plugin.py`` declares, in one function, everything the paper adds to the shared layers:

* its instance kind (:func:`optsched.core.registry.register_kind`);
* its exact models and algorithms (:func:`optsched.core.registry.register_algorithm`);
* its verifier checks, evaluator and suite instances (:mod:`optsched.verify`);
* its online policies (:func:`optsched.sim.register_policy`);
* its enrichment, which turns a generic job table into what its policies need
  (:func:`register_enrichment`, read by ``optsched compare``);
* its reproductions, by the ``module:function`` that runs each (:func:`register_reproduction`,
  read by ``optsched reproduce``: the module is imported only when the reproduction runs).

:func:`load_plugin` imports a package's ``plugin.py`` and calls its ``register()`` once; the
package's ``__init__`` calls it on its last line, so importing a paper package (or asking for its
kind: :func:`optsched.core.registry.discover_kind`) registers it, and
:func:`load_plugins` loads them all. ``docs/adding-a-paper.md`` shows a ``plugin.py`` end to end.
Tested in ``tests/core/test_plugins.py``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from optsched.exceptions import InvalidOptionError, UnknownNameError

#: Subpackages that are shared layers, not paper packages (every other subpackage is a plugin).
SHARED_PACKAGES = frozenset({"core", "solvers", "sim", "traces", "verify", "experiments", "commands", "plot"})

_LOADED: set[str] = set()


def plugin_packages() -> tuple[str, ...]:
    """The paper packages present in this installation (every subpackage that is not a shared
    layer), sorted; found without importing any of them.

    Examples
    --------
    >>> "optsched.rigid" in plugin_packages(), "optsched.sim" in plugin_packages()
    (True, False)
    """
    return tuple(
        f"optsched.{m.name}"
        for m in sorted(pkgutil.iter_modules([str(files("optsched"))]), key=lambda m: m.name)
        if m.ispkg and m.name not in SHARED_PACKAGES
    )


def load_plugin(package: str) -> None:
    """Import ``package`` (``"optsched.<key>"``) and call ``register()`` of its ``plugin.py``, once.

    A paper package calls ``load_plugin(__name__)`` on the last line of its ``__init__``, so that
    importing it registers it; calling this again does nothing. An error inside the plugin is
    raised, not hidden.

    Examples
    --------
    >>> from optsched.core.registry import kinds
    >>> load_plugin("optsched.sojourn")
    >>> "sojourn" in kinds()
    True
    """
    module = importlib.import_module(f"{package}.plugin")  # imports the package (its __init__) first
    if package in _LOADED:  # the package's __init__ has registered it while being imported
        return
    _LOADED.add(package)
    module.register()


def load_plugins() -> None:
    """Load every paper package present (:func:`plugin_packages`), so that everything each one
    declares in its ``plugin.py`` is registered.

    Examples
    --------
    >>> from optsched.core.registry import algorithms
    >>> load_plugins()
    >>> "rigid-wspt" in [a.name for a in algorithms()]
    True
    """
    for package in plugin_packages():
        load_plugin(package)


# -- enrichments ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Enrichment:
    """A paper's enrichment: ``func(table, [cluster,] *, seed, **options)`` turns a generic job table
    (``arrival``, ``gpus``, ``duration``; optional ``model``, ``status``, ``user``) into the view its
    policies run on; ``uses_cluster`` says whether it takes the cluster; ``adds`` says what it adds.
    Calling the spec calls ``func`` with or without the cluster accordingly."""

    paper: str
    func: Callable[..., Any]
    uses_cluster: bool
    adds: str = ""

    def __call__(self, table: Any, cluster: Any = None, *, seed: Any = 0, **options: Any) -> Any:
        if self.uses_cluster:
            return self.func(table, cluster, seed=seed, **options)
        return self.func(table, seed=seed, **options)


_ENRICHMENTS: dict[str, Enrichment] = {}


def register_enrichment(paper: str, func: Callable[..., Any], *, uses_cluster: bool, adds: str = "") -> Enrichment:
    """Declare ``func`` as the enrichment of ``paper`` (see :class:`Enrichment`); returns the spec.

    Examples
    --------
    >>> spec = register_enrichment("doc", lambda table, *, seed: len(table), uses_cluster=False, adds="nothing")
    >>> get_enrichment("doc")([1, 2, 3])
    3
    >>> _ = _ENRICHMENTS.pop("doc")
    """
    spec = Enrichment(paper, func, bool(uses_cluster), adds)
    _ENRICHMENTS[paper] = spec
    return spec


def enrichments() -> dict[str, Enrichment]:
    """paper -> :class:`Enrichment` of every registered paper (after :func:`load_plugins`), by paper name."""
    return dict(sorted(_ENRICHMENTS.items()))


def get_enrichment(paper: str) -> Enrichment:
    """The enrichment of ``paper``; raises :class:`~optsched.exceptions.UnknownNameError` naming the
    papers that have one."""
    try:
        return _ENRICHMENTS[paper]
    except KeyError:
        raise UnknownNameError(
            f"No enrichment is registered for paper {paper!r}; papers with one: {sorted(_ENRICHMENTS)} "
            f"(optsched.load_plugins() registers every paper's)."
        ) from None


# -- reproductions ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReproductionSpec:
    """A paper reproduction declared by its paper: ``target`` is ``"module:function"`` of
    ``run(save, *, quick, seeds, progress)`` (or that function itself); the module is imported
    when :attr:`run` is first read (``optsched reproduce NAME``), not when the reproductions are
    listed. ``quick_seconds``: rough wall time of ``--quick`` on 2 cores. ``seeds``: False when the
    experiment has no seeds to set (``optsched reproduce NAME --seeds N`` is then refused, not ignored).

    Examples
    --------
    >>> from optsched.experiments.registry import get_reproduction
    >>> r = get_reproduction("sojourn-tables")
    >>> r.paper, r.target, callable(r.run)
    ('sojourn', 'optsched.experiments.sojourn:reproduce', True)
    """

    name: str
    target: str | Callable[..., Any]
    description: str
    paper: str
    quick_seconds: float | None = None
    seeds: bool = True

    @property
    def run(self) -> Callable[..., Any]:
        """The function that runs the reproduction (its module imported now)."""
        if callable(self.target):
            return self.target
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


REPRODUCTIONS: dict[str, ReproductionSpec] = {}


def register_reproduction(
    name: str,
    target: str | Callable[..., Any],
    *,
    description: str,
    paper: str,
    quick_seconds: float | None = None,
    seeds: bool = True,
) -> ReproductionSpec:
    """Declare the reproduction ``name`` of ``paper``, run by ``target``: ``"module:function"`` (the
    module imported only when it runs) or the function itself. ``seeds=False``: it has no number of
    seeds to set (``--seeds`` is refused).

    Examples
    --------
    >>> spec = register_reproduction("doc-repro", "math:prod", description="a test", paper="doc")
    >>> spec.run([2, 3])
    6
    >>> _ = forget_reproduction("doc-repro")
    """
    module, sep, attr = ("", ":", "f") if callable(target) else str(target).partition(":")
    if not (sep and (module or callable(target)) and attr.isidentifier()):
        raise InvalidOptionError(
            f"The target of reproduction {name!r} must be 'module:function' (e.g. "
            f"'optsched.experiments.sojourn:reproduce'); got {target!r}."
        )
    spec = ReproductionSpec(name, target, description, paper, quick_seconds, seeds)
    REPRODUCTIONS[name] = spec
    return spec


def forget_reproduction(name: str) -> ReproductionSpec | None:
    """Remove the reproduction ``name`` from the registry (one a test or an example declared);
    returns its spec, or ``None`` when none has that name.

    Examples
    --------
    >>> _ = register_reproduction("doc-gone", "math:prod", description="a test", paper="doc")
    >>> forget_reproduction("doc-gone").name, forget_reproduction("doc-gone")
    ('doc-gone', None)
    """
    return REPRODUCTIONS.pop(name, None)


def reproduction_specs() -> dict[str, ReproductionSpec]:
    """name -> :class:`ReproductionSpec` of every declared reproduction (after :func:`load_plugins`), by name."""
    return dict(sorted(REPRODUCTIONS.items()))
