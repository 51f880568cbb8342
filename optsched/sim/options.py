"""The options of a :class:`~optsched.sim.Simulator`, checked once, before any engine is built.

:class:`SimOptions` is what ``Simulator(cluster, jobs, policy, **options)`` builds (or takes as
``options=``, :meth:`SimOptions.of`) and passes on to the engine it picks: a frozen
dataclass whose construction checks every option (a clear :class:`InvalidOptionError` naming the
option, the value and the fix) and resolves the defaults (the rate model a policy brings, the
load and save times as functions). The engine choice reads it, and so does the engine that runs.
The job list is checked later, by the engine that converts it
(:mod:`optsched.sim.model.inputs`).

Tested in ``tests/sim/test_engine_choice.py`` and ``tests/sim/test_limits_and_overheads.py``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster
from optsched.core.seeds import SeedLike, as_generator
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.sim.model.state import SimJob
from optsched.sim.policy import Policy
from optsched.sim.rates import ConstantRate, RateModel

#: The engines a Simulator may run on (``engine=``): "auto" picks one (the compiled kernel where it
#: covers the simulation, see :mod:`optsched.sim.compiled.driver`), the others force one.
ENGINES = ("auto", "python", "compiled")
#: What preempting a loading job does (R2 of ``formulations/lazer.md``).
PREEMPT_LOADING = ("abort", "finish")

#: A load or save time: seconds, or a function (job, placement) -> seconds.
Overhead = float | Callable[[SimJob, Mapping[int, int]], float]
OverheadFn = Callable[[SimJob, Mapping[int, int]], float]


def overhead_function(value: Overhead, name: str) -> OverheadFn | None:
    """The option ``name`` (a number of seconds >= 0, or a function) as a function, or None for
    no time at all."""
    if callable(value):
        return value
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float("nan")
    if not (v >= 0 and math.isfinite(v)):
        raise InvalidOptionError(
            f"The '{name}' option must be a number of seconds >= 0 or a function (job, placement) -> seconds; "
            f"got {value!r}."
        )
    return (lambda job, pl: v) if v > 0 else None


@dataclass(frozen=True)
class SimOptions:
    """Every option of a :class:`~optsched.sim.Simulator`, checked (the parameters are documented
    there). Built by ``Simulator(...)``; the engines read it.

    Besides the options as given it holds what the checks resolve: ``rate_model`` is the one
    that runs (the option, else the policy's own ``rate_model``, else ``ConstantRate()``),
    ``load`` and ``save`` are the load and save times as functions (None: zero), ``rng`` is the
    run's NumPy generator (from ``seed``), ``slot`` is a float or None, the flags are bools.

    Raises
    ------
    InvalidInstanceError
        ``cluster`` is not a :class:`~optsched.core.Cluster`.
    InvalidOptionError
        Any other option out of its domain (the message names it, the value and the fix).

    Examples
    --------
    >>> from optsched.core import Cluster
    >>> from optsched.sim import SRTF
    >>> opts = SimOptions(Cluster.homogeneous(1, 2), SRTF(), load_time=5, slot=None)
    >>> opts.load(None, {0: 1}), opts.save, type(opts.rate_model).__name__
    (5.0, None, 'ConstantRate')
    >>> SimOptions(Cluster.homogeneous(1, 2), SRTF(), preempt_loading="later")
    Traceback (most recent call last):
    ...
    optsched.exceptions.InvalidOptionError: The 'preempt_loading' option must be 'abort' or 'finish'; got 'later'.
    """

    cluster: Cluster
    policy: Policy
    _: KW_ONLY
    rate_model: RateModel | None = None
    load_time: Overhead = 0.0
    save_time: Overhead = 0.0
    stages: Mapping[Any, Sequence[float]] | None = None
    terminate_after: Mapping[Any, int] | None = None
    seed: SeedLike = 0
    record_log: bool = True
    progress: bool = False
    allow_unfinished: bool = False
    slot: float | None = None
    preempt_loading: str = "abort"
    time_decisions: bool = False
    attrs_columns: Sequence[str] = ()
    engine: str = "auto"
    record_segments: bool = True
    load: OverheadFn | None = field(init=False, repr=False)
    save: OverheadFn | None = field(init=False, repr=False)
    rng: np.random.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        cluster, policy, slot = self.cluster, self.policy, self.slot
        if not isinstance(cluster, Cluster):
            raise InvalidInstanceError(f"The 'cluster' argument must be a Cluster; got {type(cluster).__name__}.")
        if not isinstance(policy, Policy):
            raise InvalidOptionError(
                f"The 'policy' argument must be an optsched.sim.Policy; got {type(policy).__name__}. "
                f"Subclass Policy, or use get_policy(name)."
            )
        rate_model = self.rate_model
        if rate_model is None:  # a policy that comes with its rate model (e.g. A-SRPT's Heavy-Edge) brings it
            rate_model = getattr(policy, "rate_model", None)
        rm = rate_model if rate_model is not None else ConstantRate()
        if not isinstance(rm, RateModel):
            raise InvalidOptionError(f"The 'rate_model' must be an optsched.sim.RateModel; got {rate_model!r}.")
        load = overhead_function(self.load_time, "load_time")
        save = overhead_function(self.save_time, "save_time")
        if slot is not None and (
            isinstance(slot, bool)
            or not isinstance(slot, (int, float, np.number))
            or not (slot > 0 and math.isfinite(slot))
        ):
            raise InvalidOptionError(
                f"The 'slot' option must be a positive finite number of seconds (or None for "
                f"continuous time); got {slot!r}."
            )
        if self.preempt_loading not in PREEMPT_LOADING:
            raise InvalidOptionError(
                f"The 'preempt_loading' option must be 'abort' or 'finish'; got {self.preempt_loading!r}."
            )
        rng = as_generator(self.seed)  # the run's generator (the 'random' placement, policies)
        if not isinstance(self.engine, str) or self.engine not in ENGINES:
            raise InvalidOptionError(
                f"The 'engine' option must be one of {list(ENGINES)} ('auto': the compiled kernel where it "
                f"covers the simulation, else Python); got {self.engine!r}."
            )
        if not isinstance(self.record_segments, bool):
            raise InvalidOptionError(
                f"The 'record_segments' option must be true or false; got {self.record_segments!r}."
            )
        set_ = object.__setattr__  # a frozen dataclass: the checked values are set once, here
        set_(self, "rate_model", rm)
        set_(self, "load", load)
        set_(self, "save", save)
        set_(self, "rng", rng)
        set_(self, "slot", None if slot is None else float(slot))
        for name in ("record_log", "progress", "allow_unfinished", "time_decisions"):
            set_(self, name, bool(getattr(self, name)))

    @classmethod
    def of(
        cls, cluster: Cluster, policy: Policy, options: SimOptions | None, keywords: Mapping[str, Any]
    ) -> SimOptions:
        """The options of ``Simulator(cluster, jobs, policy, options, **keywords)``, checked once:
        ``options`` with ``keywords`` replacing its fields, or the keywords alone.

        Raises
        ------
        TypeError
            A keyword that is not an option (the message lists them).
        InvalidOptionError
            ``options`` is not a SimOptions, or was built for another cluster or policy; or an
            option out of its domain.
        """
        unknown = sorted(set(keywords) - OPTION_NAMES)
        if unknown:
            raise TypeError(
                f"Simulator() got an unexpected keyword argument {unknown[0]!r}; its options are "
                f"{', '.join(sorted(OPTION_NAMES))} (optsched.sim.options.SimOptions)."
            )
        if options is None:
            return cls(cluster, policy, **keywords)
        if not isinstance(options, SimOptions):
            raise InvalidOptionError(
                f"The 'options' argument must be an optsched.sim.options.SimOptions (or None, with the "
                f"options as keywords); got {type(options).__name__}."
            )
        if options.cluster is not cluster or options.policy is not policy:
            raise InvalidOptionError(
                "The 'options' were built for another cluster or policy; build them with the Simulator's "
                "own: SimOptions(cluster, policy, ...)."
            )
        return dataclasses.replace(options, **keywords) if keywords else options


#: the keyword options of ``Simulator(...)``: the fields of SimOptions but the cluster and the policy
OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(SimOptions) if f.init) - {"cluster", "policy"}
