"""optsched: exact optimization models, paper algorithms and a shared simulator for scheduling
distributed deep-learning training jobs on GPU clusters.

>>> import optsched
>>> inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
>>> inst.n_jobs
5
"""

from __future__ import annotations

import importlib
from pathlib import Path

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
from optsched.core import load_instance as _core_load_instance
from optsched.exceptions import (
    InfeasibleError,
    InvalidInstanceError,
    ModelTooLargeError,
    OptschedError,
    SolverUnavailableError,
)
from optsched.solvers import SolveOptions, SolveResult
from optsched.verify import verify, verify_result

__version__ = "0.1.0"

#: Subpackages that register instance kinds, algorithms and checks when imported.
PLUGINS = ("optsched.rigid", "optsched.sojourn", "optsched.asrpt", "optsched.rarddls",
           "optsched.elastic", "optsched.lazer")

_loaded = False


def load_plugins() -> None:
    """Import every paper package present so that its kinds, algorithms and checks are registered."""
    global _loaded
    if _loaded:
        return
    for name in PLUGINS:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:  # a real missing dependency inside the package: report it
                raise
    _loaded = True


def load_instance(path):
    """Load an instance JSON file of any registered kind (see :func:`optsched.core.load_instance`)."""
    load_plugins()
    return _core_load_instance(path)


def solve(instance, model: str | None = None, *, backend: str | None = None, options: SolveOptions | None = None,
          **kw):
    """Solve ``instance`` exactly with a registered model (default: the first exact model of its kind)."""
    load_plugins()
    if model is None:
        exact = algorithms(instance.kind, exact=True)
        if not exact:
            raise exceptions.UnknownNameError(f"No exact model is registered for kind {instance.kind!r}.")
        spec = exact[0]
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
    """
    from optsched.core.library import instance_path

    return instance_path(f"toy:{name.removesuffix('.json')}")


def instance_path(name: str) -> Path:
    """Path of a shipped instance named ``collection:name`` (e.g. ``papers/asrpt:lemma1-counterexample``)."""
    from optsched.core.library import instance_path as _ip

    return _ip(name)


__all__ = [
    "Cluster", "Server", "Job", "Instance", "Schedule", "Segment", "Result", "Status",
    "SolveOptions", "SolveResult", "load_instance", "load_plugins", "solve", "verify", "verify_result",
    "algorithms", "get_algorithm", "toy_path", "instance_path", "exceptions", "OptschedError",
    "InvalidInstanceError", "InfeasibleError", "SolverUnavailableError", "ModelTooLargeError",
]
