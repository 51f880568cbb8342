"""Incumbents shared between the portfolio's members while they run (docs/exact.md#portfolio).

A forked portfolio member is a process of its own; this module holds that process's side of
the sharing, installed by :mod:`optsched.solvers.portfolio` before the member solves:

* **Publishing** (CP-SAT members): :func:`solve_cpsat <optsched.solvers.solve_cpsat>` asks
  :func:`cpsat_callback` for a solution callback for its model. On each solution CP-SAT reports,
  the callback decodes the schedule (the member's own decoder), recomputes its objective (the
  kind's evaluator) and, when it is better than everything sent so far (and than the warm
  start), puts ``(schedule, objective)`` on the channel of every member that takes incumbents.
* **Taking** (HiGHS members, through Pyomo): :func:`solve_pyomo <optsched.solvers.solve_pyomo>`
  asks :func:`highs_feed` for a ``kCallbackMipUserSolution`` callback for its model. HiGHS calls it
  many times a second during the branch and bound (after setup, before dives, ...); it drains
  the channel and, when the newest schedule is better than HiGHS's incumbent, maps it to the
  model's columns with the model's own warm-start mapping (``ExactModel.warm_start``, registered
  with :func:`register`) and hands it over with ``data_in.setSolution``; HiGHS checks it and, if
  feasible, prunes with it.

The other way is not possible: CP-SAT takes hints only before a solve and has no call to add a
solution during one, so HiGHS's incumbents are not sent to it.

Nothing here may stop a solve: every failure (a schedule the model cannot represent, a value
HiGHS refuses, a broken channel) is counted in :func:`stats` and skipped. The result is
certified afterwards as always (:func:`optsched.solvers.exact.run_exact`).
"""

from __future__ import annotations

import math
import queue as _queue
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any


@dataclass
class _Mapper:
    fn: Callable[[Any], None]  # schedule -> values on the model's variables
    scale: float
    offset: float


@dataclass
class _State:
    inbox: Any = None  # a multiprocessing queue this process reads (None: takes nothing)
    outboxes: tuple = ()  # queues this process writes to
    publish: dict[int, Callable[[Any], tuple[Any, float] | None]] | None = None  # id(CpModel) -> decoder
    maximize: bool = False
    best_sent: float | None = None
    latest: tuple[int, Any, float] | None = None  # (seq, schedule, kind objective) last received
    seq: int = 0


_state = _State()
_mappers: dict[int, _Mapper] = {}
_stats: dict[str, int] = {}


def _zero() -> dict[str, int]:
    return {"sent": 0, "received": 0, "given": 0, "taken": 0, "failed": 0}


_stats.update(_zero())


def reset() -> None:
    """Back to no sharing (what a process starts with)."""
    global _state
    _state = _State()
    _mappers.clear()
    _stats.clear()
    _stats.update(_zero())


def install(
    *,
    inbox: Any = None,
    outboxes: tuple = (),
    publish: dict[int, Callable[[Any], tuple[Any, float] | None]] | None = None,
    maximize: bool = False,
    start: float | None = None,
) -> None:
    """Set this process up as a sharing member: read incumbents from ``inbox``; publish the
    solutions of the CP-SAT models in ``publish`` (``id(model) -> decode(solution_callback) ->
    (schedule, kind objective)``) to ``outboxes``, only those better than ``start`` (the warm
    start's objective) and than every one sent before."""
    reset()
    _state.inbox, _state.outboxes, _state.publish = inbox, tuple(outboxes), publish
    _state.maximize, _state.best_sent = maximize, start


def stats() -> dict[str, int]:
    """Counts in this process: ``sent`` (published), ``received`` (read from the channel),
    ``given`` (handed to HiGHS), ``taken`` (HiGHS's incumbent was as good at its next call, or
    of exactly that value at the end of the solve: HiGHS accepted it), ``failed``
    (could not be decoded, mapped, sent or set)."""
    return dict(_stats)


@contextmanager
def register(model: Any, fn: Callable[[Any], None], *, scale: float = 1.0, offset: float = 0.0) -> Iterator[None]:
    """While inside: shared schedules reach ``model`` (a Pyomo model solved by HiGHS) through
    ``fn(schedule)``, which sets its variables' values (the model's warm-start mapping); the
    kind's objective is ``offset + scale * (model objective)``."""
    add_mapping(model, fn, scale=scale, offset=offset)
    try:
        yield
    finally:
        _mappers.pop(id(model), None)


def add_mapping(model: Any, fn: Callable[[Any], None], *, scale: float = 1.0, offset: float = 0.0) -> None:
    """:func:`register` for the rest of the process (a forked member's own model)."""
    _mappers[id(model)] = _Mapper(fn, scale, offset)


def _better(a: float, b: float | None) -> bool:
    if b is None:
        return True
    tol = 1e-9 * max(1.0, abs(b))
    return a > b + tol if _state.maximize else a < b - tol


def _send(schedule: Any, obj: float) -> None:
    if not _better(obj, _state.best_sent):
        return
    _state.best_sent = obj
    for q in _state.outboxes:
        try:
            q.put_nowait((schedule, obj))
        except Exception:
            _stats["failed"] += 1
            continue
    _stats["sent"] += 1


def cpsat_callback(model: Any) -> Any:
    """A ``CpSolverSolutionCallback`` that publishes ``model``'s improving solutions, or ``None``
    when this process publishes nothing for it."""
    if not _state.publish or id(model) not in _state.publish or not _state.outboxes:
        return None
    from ortools.sat.python import cp_model

    decode = _state.publish[id(model)]

    class _Publisher(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            try:
                out = decode(self)
                if out is not None:
                    _send(*out)
            except Exception:  # a solve never stops for the sharing
                _stats["failed"] += 1

    return _Publisher()


def _poll() -> tuple[int, Any, float] | None:
    """The newest incumbent received (drains the inbox)."""
    q = _state.inbox
    if q is None:
        return _state.latest
    while True:
        try:
            schedule, obj = q.get_nowait()
        except _queue.Empty:
            break
        except Exception:
            _stats["failed"] += 1
            break
        _stats["received"] += 1
        if _state.latest is None or _better(obj, _state.latest[2]):
            _state.seq += 1
            _state.latest = (_state.seq, schedule, obj)
    return _state.latest


def takes(model: Any) -> bool:
    """Whether this process hands shared incumbents to ``model`` (cheap: checked per solve)."""
    return _state.inbox is not None and id(model) in _mappers


def objective_shift(costs: Any, lower: Any, upper: Any) -> float:
    """A constant to subtract from a minimisation's objective for the solve so that HiGHS 1.14
    does not drop improving user solutions (0.0 when no safe one is known).

    HiGHS checks a user solution's feasibility on the original model, then compares its
    *original* objective (with the model's constant) with its incumbent's value in the
    *presolved* space (without the presolved model's offset) before transforming it; where
    presolve or a restart leaves a positive offset, an improving solution above ``incumbent -
    offset`` is dropped silently (``HighsMipSolverData::queryExternalSolution``). Lowering the
    constant by more than any offset presolve can create (``sum |c_j| max(|l_j|, |u_j|)``) makes
    that first test pass; the second, after the transformation, is exact. A power of two, so
    integer objectives stay exact; 0.0 when a column with a cost is unbounded.

    >>> objective_shift([5.0, -2.0, 1.5], [0, 0, -2], [1, 4, 3])
    32.0
    >>> objective_shift([1.0], [0], [None])
    0.0
    """
    import numpy as np

    c = np.abs(np.asarray(costs, dtype=float))
    lo = np.abs(np.asarray([np.inf if v is None else v for v in lower], dtype=float))
    up = np.abs(np.asarray([np.inf if v is None else v for v in upper], dtype=float))
    used = c > 0
    if not used.any():
        return 0.0
    reach = np.maximum(lo[used], up[used])
    if not np.all(np.isfinite(reach)):
        return 0.0
    total = float(np.sum(c[used] * reach)) + 1.0
    shift = 2.0 ** math.ceil(math.log2(total))
    return shift if shift < 2.0**52 else 0.0


def objective_shift_of(model: Any) -> float:
    """:func:`objective_shift` of a Pyomo model's linear objective (0.0 when it is not linear)."""
    import pyomo.environ as pyo
    from pyomo.repn import generate_standard_repn

    try:
        objective = next(model.component_data_objects(pyo.Objective, active=True))
        repn = generate_standard_repn(objective.expr, quadratic=False)
        if not repn.is_linear():
            return 0.0
        vs = repn.linear_vars
        return objective_shift(repn.linear_coefs, [v.lb for v in vs], [v.ub for v in vs])
    except Exception:
        return 0.0


def highs_feed(opt: Any, model: Any, minimize: bool, shift: float = 0.0) -> Callable[[], None] | None:
    """Subscribe a ``kCallbackMipUserSolution`` callback to the HiGHS object of the Pyomo
    persistent solver ``opt`` (``set_instance(model)`` already called) when this process takes
    incumbents and ``model`` has a mapping (:func:`register`); return the function that
    unsubscribes it (``None``: nothing subscribed). ``shift``: the objective HiGHS sees is the
    model's minus ``shift`` (:func:`objective_shift`)."""
    mapper = _mappers.get(id(model))
    if _state.inbox is None or mapper is None:
        return None
    import numpy as np
    import pyomo.environ as pyo

    highs = opt._solver_model  # noqa: SLF001 - highspy's model, no public handle
    cols = opt._pyomo_var_to_solver_var_map  # noqa: SLF001 - Pyomo has no public column map
    variables = [
        (v, cols[id(v)]) for v in model.component_data_objects(pyo.Var, active=True, descend_into=True) if id(v) in cols
    ]
    sign = 1.0 if minimize else -1.0
    st: dict[str, Any] = {"seq": 0, "pending": None}

    def callback(e: Any) -> None:
        try:
            primal = float(e.data_out.mip_primal_bound) + shift
            pend = st["pending"]
            if pend is not None:
                if math.isfinite(primal) and sign * primal <= sign * pend + 1e-6 * max(1.0, abs(pend)):
                    _stats["taken"] += 1
                st["pending"] = None
            item = _poll()
            if item is None or item[0] <= st["seq"]:
                return
            st["seq"] = item[0]
            obj = (item[2] - mapper.offset) / mapper.scale  # in the model's units
            if math.isfinite(primal) and sign * obj >= sign * primal - 1e-9 * max(1.0, abs(primal)):
                return  # HiGHS has as good an incumbent already
            mapper.fn(item[1])
            idx, val = [], []
            for v, c in variables:
                if v.value is not None:
                    idx.append(c)
                    val.append(float(v.value))
            status = e.data_in.setSolution(np.asarray(idx, dtype=np.int32), np.asarray(val, dtype=np.float64))
            if getattr(status, "name", "") == "kError":
                _stats["failed"] += 1
                return
            _stats["given"] += 1
            st["pending"] = obj
        except Exception:  # a solve never stops for the sharing (an exception here would end it)
            _stats["failed"] += 1

    highs.cbMipUserSolution.subscribe(callback)

    def done() -> None:
        # given at HiGHS's last call: taken if its final incumbent has exactly that value (better
        # says nothing: HiGHS may have found it itself)
        pend = st["pending"]
        if pend is not None:
            with suppress(Exception):
                primal = float(highs.getInfo().mip_primal_bound) + shift
                if math.isfinite(primal) and abs(primal - pend) <= 1e-6 * max(1.0, abs(pend)):
                    _stats["taken"] += 1
            st["pending"] = None
        with suppress(Exception):
            highs.cbMipUserSolution.unsubscribe(callback)

    return done
