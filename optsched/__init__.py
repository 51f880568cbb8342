"""optsched: exact optimization models, paper algorithms and a shared simulator for scheduling
distributed deep-learning training jobs on GPU clusters.

>>> import optsched
>>> inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
>>> inst.n_jobs
5

The top-level names are imported on first use (PEP 562), so ``import optsched`` and the
command line start fast and pull NumPy, pandas, Pyomo or OR-Tools only when needed.

Tested in ``tests/test_doctests.py`` (its examples) and ``tests/core/test_plugins.py``.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> module that defines it (imported lazily by __getattr__)
_LAZY = {
    "Cluster": "optsched.core",
    "Server": "optsched.core",
    "Job": "optsched.core",
    "Instance": "optsched.core",
    "Schedule": "optsched.core",
    "Segment": "optsched.core",
    "Result": "optsched.core",
    "Status": "optsched.core",
    "algorithms": "optsched.core",
    "get_algorithm": "optsched.core",
    "SolveOptions": "optsched.solvers",
    "SolveResult": "optsched.solvers",
    "verify": "optsched.verify",
    "verify_result": "optsched.verify",
    "exceptions": None,
    "InfeasibleError": "optsched.exceptions",
    "InvalidInstanceError": "optsched.exceptions",
    "ModelTooLargeError": "optsched.exceptions",
    "OptschedError": "optsched.exceptions",
    "SolverUnavailableError": "optsched.exceptions",
    "SHARED_PACKAGES": "optsched.core.plugins",
}

if TYPE_CHECKING:  # pragma: no cover
    from optsched import exceptions
    from optsched.core import (
        Cluster,
        Instance,
        Job,
        Result,
        Schedule,
        Segment,
        Server,
        Status,
        algorithms,
        get_algorithm,
    )
    from optsched.exceptions import (
        InfeasibleError,
        InvalidInstanceError,
        ModelTooLargeError,
        OptschedError,
        SolverUnavailableError,
    )
    from optsched.solvers import SolveOptions, SolveResult
    from optsched.verify import verify, verify_result


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        mod = _LAZY[name]
        if mod is None:
            return importlib.import_module(f"optsched.{name}")
        value = getattr(importlib.import_module(mod), name)
        globals()[name] = value
        return value
    if name == "PLUGINS":
        return plugin_packages()
    raise AttributeError(f"module 'optsched' has no attribute {name!r}")


def plugin_packages() -> tuple[str, ...]:
    """The paper packages present in this installation (every subpackage that is not a shared layer);
    see :mod:`optsched.core.plugins`.

    Examples
    --------
    >>> import optsched
    >>> "optsched.rigid" in optsched.plugin_packages()
    True
    """
    from optsched.core.plugins import plugin_packages as _plugin_packages  # loaded on first use (PEP 562)

    return _plugin_packages()


_loaded = False


def load_plugins() -> None:
    """Load every paper package present, so that what each declares in its ``plugin.py`` (kinds,
    algorithms, checks, policies, enrichment, reproductions) is registered; see
    :mod:`optsched.core.plugins`.

    Packages are discovered (no hard-coded list); an error inside one is raised, not hidden.

    Examples
    --------
    >>> import optsched
    >>> optsched.load_plugins()
    >>> "rigid-wspt" in [a.name for a in optsched.algorithms()]
    True
    """
    global _loaded
    if _loaded:
        return
    from optsched.core.plugins import load_plugins as _load_plugins  # loaded on first use (PEP 562)

    _load_plugins()
    _loaded = True


def load_instance(path):
    """Load an instance JSON file of any registered kind, or a shipped instance by name
    (``toy:rigid-2x2-five``; see :func:`optsched.core.load_instance` and ``optsched instances``).

    Examples
    --------
    >>> import optsched
    >>> optsched.load_instance("toy:sojourn-two-jobs").kind
    'sojourn'
    """
    # deferred: ``import optsched`` loads no submodule (each name on first use)
    from optsched.core import load_instance as _core_load_instance
    from optsched.core.library import resolve_instance

    load_plugins()
    return _core_load_instance(resolve_instance(path))


def solve(instance, model: str | None = None, *, backend: str | None = None, options=None, **kw):
    """Solve ``instance`` exactly with a registered model (default: the default exact model of its kind).

    Examples
    --------
    >>> import optsched
    >>> res = optsched.solve(optsched.load_instance("toy:rigid-2x2-five"), backend="cpsat")
    >>> res.status.value, res.objective
    ('optimal', 19.0)
    """
    # deferred: ``import optsched`` loads no submodule (each name on first use)
    from optsched.core import default_exact_model, get_algorithm

    load_plugins()
    if model is None:
        spec = default_exact_model(instance.kind)
    else:
        spec = get_algorithm(model)
    if backend is not None:
        kw["backend"] = backend
    if options is not None:
        kw["options"] = options
    return spec(instance, **kw)


def toy_path(name: str) -> Path:
    """Path of a toy instance shipped in the package (``optsched/instances/toy/<name>.json``).

    Works from an installed wheel in any folder; see :mod:`optsched.core.library` for the whole
    instance library (``optsched instances`` on the command line).

    Examples
    --------
    >>> import optsched
    >>> optsched.toy_path("rigid-2x2-five").name
    'rigid-2x2-five.json'
    """
    # deferred: ``import optsched`` loads no submodule (each name on first use)
    from optsched.core.library import instance_path as _ip

    return _ip(f"toy:{name.removesuffix('.json')}")


def instance_path(name: str) -> Path:
    """Path of a shipped instance named ``collection:name`` (e.g. ``papers/asrpt:lemma1-counterexample``).

    Examples
    --------
    >>> import optsched
    >>> optsched.instance_path("papers/asrpt:lemma1-counterexample").name
    'lemma1-counterexample.json'
    """
    # deferred: ``import optsched`` loads no submodule (each name on first use)
    from optsched.core.library import instance_path as _ip

    return _ip(name)


class _Module(types.ModuleType):
    """``optsched.verify`` is the function :func:`optsched.verify.verify` (as it always was), not the
    subpackage of the same name: importing the subpackage must not replace the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "verify" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Module


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"PLUGINS"})


__all__ = [
    "Cluster",
    "Server",
    "Job",
    "Instance",
    "Schedule",
    "Segment",
    "Result",
    "Status",
    "SolveOptions",
    "SolveResult",
    "load_instance",
    "load_plugins",
    "plugin_packages",
    "solve",
    "verify",
    "verify_result",
    "algorithms",
    "get_algorithm",
    "toy_path",
    "instance_path",
    "exceptions",
    "OptschedError",
    "InvalidInstanceError",
    "InfeasibleError",
    "SolverUnavailableError",
    "ModelTooLargeError",
]
