"""The simulator's policy registry: every online policy optsched has, by name.

The baselines register here (``fifo``, ``sjf``, ``srtf``, ``las``); each paper package registers
its policies in its ``register()`` with the job data they need, so that a command (``optsched
compare``) can run every policy on one workload and skip, with the reason, those whose data the
workload lacks::

    from optsched.sim import register_policy

    register_policy("asrpt-a-srpt", ASRPT, needs=("model_profile",), paper="asrpt",
                    description="A-SRPT (Alg. 1): ...")

Names are lower case; ``_`` and ``-`` are the same when looking a policy up.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from optsched.core.registry import doc_summary
from optsched.exceptions import InvalidOptionError, UnknownNameError


@dataclass(frozen=True)
class PolicySpec:
    """A registered policy: ``factory(**options) -> Policy``, the job data it ``needs`` (columns
    of a job table or keys of ``job.attrs``, e.g. ``("model_profile",)``; empty: any workload),
    the paper it comes from (``None`` for the baselines) and a one-line description.

    Examples
    --------
    >>> from optsched.sim import policy_registry
    >>> spec = policy_registry()["srtf"]
    >>> spec.paper is None, spec.factory().preemptive
    (True, True)
    """

    name: str
    factory: Callable[..., Any]
    needs: tuple[str, ...] = ()
    paper: str | None = None
    description: str = ""


_POLICIES: dict[str, PolicySpec] = {}
_PAPERS_LOADED = False


def _load_papers() -> None:
    """Import every paper package once, so that their policies are registered: a user who asks for
    ``"lazer"`` in a fresh interpreter gets it without calling ``optsched.load_plugins()`` first."""
    global _PAPERS_LOADED
    if _PAPERS_LOADED:
        return
    _PAPERS_LOADED = True  # set first: a plugin that looks a policy up while loading does not recurse
    from optsched.core.plugins import load_plugins  # paper packages: imported on first use

    load_plugins()


def _spec(name: str) -> PolicySpec:
    """The registered spec of ``name``, the paper packages loaded when it is not a baseline."""
    key = policy_key(name)
    spec = _POLICIES.get(key)
    if spec is None:
        _load_papers()
        spec = _POLICIES.get(key)
    if spec is None:
        raise UnknownNameError(f"Unknown policy {name!r}; choose one of {sorted(_POLICIES)}.")
    return spec


def policy_key(name: str) -> str:
    """A policy's registry name from the way a user writes it: case and ``_``/``-`` do not matter.

    >>> policy_key(" SRTF_Periodic")
    'srtf-periodic'
    """
    return str(name).strip().lower().replace("_", "-")


def register_policy(
    name: str,
    factory: Callable[..., Any] | None = None,
    *,
    needs: Sequence[str] = (),
    paper: str | None = None,
    description: str = "",
    replace: bool = False,
):
    """Register ``factory`` (a Policy class or a function returning one) under ``name``.

    Usable as a call or as a class decorator. Registering a taken name with another factory
    raises ``InvalidOptionError`` unless ``replace`` (re-importing a module re-registers the same one).

    Examples
    --------
    >>> from optsched.sim import FIFO
    >>> spec = register_policy("doc-fifo", FIFO, description="FIFO again")
    >>> get_policy("doc_fifo").name, policy_registry()["doc-fifo"].needs
    ('fifo', ())
    >>> _ = _POLICIES.pop("doc-fifo")
    """

    def add(f: Callable[..., Any]) -> Callable[..., Any]:
        key = policy_key(name)
        old = _POLICIES.get(key)
        if (
            old is not None
            and old.factory is not f
            and not replace
            and getattr(old.factory, "__qualname__", None) != getattr(f, "__qualname__", None)
        ):
            raise InvalidOptionError(
                f"A policy named {key!r} is registered already ({old.factory!r}); pick another name."
            )
        desc = description or doc_summary(getattr(f, "__doc__", None))
        _POLICIES[key] = PolicySpec(key, f, tuple(needs), paper, desc)
        return f

    if factory is None:
        return add
    add(factory)
    return _POLICIES[policy_key(name)]


def policy_registry() -> dict[str, PolicySpec]:
    """Every registered policy (name -> :class:`PolicySpec`), the baselines first, then the papers'
    (their packages are imported on the first call).

    Examples
    --------
    >>> from optsched.sim import policy_registry
    >>> list(policy_registry())[:4]
    ['fifo', 'sjf', 'srtf', 'las']
    """
    _load_papers()
    return dict(_POLICIES)


def policy_names() -> list[str]:
    """The registered policies' names, the papers' included (see :func:`policy_registry`)."""
    _load_papers()
    return list(_POLICIES)


def get_policy(name: str, **options: Any) -> Any:
    """A registered policy by name, built with its options.

    Examples
    --------
    >>> get_policy("srtf", placement="first_fit")
    SRTF(placement='first_fit', backfill=True, rollback=False, reserve='best')
    """
    spec = _spec(name)
    _check_options(spec, options)
    missing = [p for p in _required_of(spec.factory) if p not in options]
    if missing:
        raise InvalidOptionError(
            f"Policy {spec.name!r} is built for one workload: it needs {', '.join(repr(m) for m in missing)} "
            f"(get_policy({spec.name!r}, {missing[0]}=...)); `optsched compare` builds it from a job table."
        )
    return spec.factory(**options)


def policy_options(name: str) -> list[str] | None:
    """The keyword options policy ``name`` takes (``None``: it passes any on, e.g. ``**options``).

    >>> policy_options("srtf")
    ['placement', 'backfill', 'rollback', 'reserve']
    """
    return _options_of(_spec(name).factory)


def _options_of(factory: Callable[..., Any]) -> list[str] | None:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: its options cannot be listed
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def forwards_options(target: Callable[..., Any], *, set_here: Sequence[str] = ()) -> Callable[[Any], Any]:
    """Declare that a factory (or class) taking ``**options`` passes them on to ``target``, less the
    names it sets itself (``set_here``), so that :func:`get_policy` checks and
    :func:`policy_options` lists them as for any other policy (an option neither takes is an
    :class:`InvalidOptionError` naming it, not a ``TypeError`` from deep in a constructor).

    >>> class Base:
    ...     def __init__(self, *, deferral=None, placement="best"): ...
    >>> @forwards_options(Base, set_here=("deferral",))
    ... def variant(x=1.0, **options):
    ...     return Base(deferral=x, **options)
    >>> import inspect; str(inspect.signature(variant))
    "(x=1.0, *, placement='best')"
    """

    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)

    def declare(factory: Any) -> Any:
        if isinstance(factory, type):
            own = list(inspect.signature(factory.__init__).parameters.values())[1:]  # without self
        else:
            own = list(inspect.signature(factory).parameters.values())
        own = [p for p in own if p.kind is not p.VAR_KEYWORD]
        taken = {p.name for p in own} | set(set_here) | {"self"}
        passed = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in inspect.signature(target).parameters.values()
            if p.kind in kinds and p.name not in taken
        ]
        if any(p.kind is p.VAR_KEYWORD for p in inspect.signature(target).parameters.values()):
            passed.append(inspect.Parameter("options", inspect.Parameter.VAR_KEYWORD))
        factory.__signature__ = inspect.Signature(own + passed)
        return factory

    return declare


def _required_of(factory: Callable[..., Any]) -> list[str]:
    """The arguments ``factory`` cannot be called without (none when they cannot be listed)."""

    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in params if p.kind in kinds and p.default is inspect.Parameter.empty]


def _check_options(spec: PolicySpec, options: dict[str, Any]) -> None:
    """An option the policy does not take is an :class:`InvalidOptionError` naming it, the options
    the policy takes and the policies that take it (not a TypeError from deep in a constructor)."""
    allowed = _options_of(spec.factory)
    if allowed is None:
        return
    bad = [k for k in options if k not in allowed]
    if not bad:
        return
    takers = [n for n, sp in _POLICIES.items() if bad[0] in (_options_of(sp.factory) or ())]
    also = f"; {bad[0]!r} is an option of {', '.join(takers)}" if takers else ""
    raise InvalidOptionError(
        f"Policy {spec.name!r} has no option {bad[0]!r} (got {options[bad[0]]!r}); its options are "
        f"{', '.join(allowed) or 'none'}{also}."
    )
