"""The members of a portfolio (:mod:`optsched.solvers.portfolio`) as they run: one member's solve
and its result row (:func:`run_member`), in this process or in forked ones side by side
(:func:`run_forked`), with the incumbents they share during the run (:mod:`optsched.solvers.sharing`).

The portfolio plans (which members, built when, on which time share) and combines their rows;
this module runs them.

Tested in ``tests/solvers/test_sharing.py`` and ``tests/solvers/test_portfolio.py``.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

from optsched.core.result import Status
from optsched.exceptions import SolverLimitWarning
from optsched.solvers import interrupt, progress, sharing
from optsched.solvers.model import ExactModel, default_solve
from optsched.solvers.options import SolveOptions, SolveResult

#: ``portfolio`` (fork): a CP-SAT member sends each improving incumbent to the HiGHS member, which
#: takes it mid-solve (:mod:`optsched.solvers.sharing`); False: members share only the warm start.
SHARE_INCUMBENTS = True
#: A forked member still running this many seconds after the whole call's deadline is stopped
#: (its incumbent is lost; the others' and the warm start remain).
KILL_GRACE = 3.0


@dataclass
class Member:
    """One back end of a portfolio: its name, its built model, and whether it has the warm start."""

    name: str
    em: ExactModel
    warm: bool = False


def kind_value(em: ExactModel, v: float | None) -> float | None:
    """A member's model value in the kind's units (``None`` for none or a non-finite one)."""
    return None if v is None or not math.isfinite(v) else em.offset + em.scale * v


def run_forked(pf: Any, em: ExactModel, members: list[Member], options: SolveOptions) -> dict[str, dict]:
    """Solve ``members`` side by side in forked processes, one thread each, for the portfolio
    ``pf``; stop the others once the gap is closed (or ``KILL_GRACE`` s after the deadline);
    one row per member."""
    ctx = mp.get_context("fork")
    procs: dict[str, Any] = {}
    conns: dict[Any, str] = {}
    rows: dict[str, dict] = {}
    inboxes = _inboxes(ctx, em, members)
    for m in members:
        recv, send = ctx.Pipe(duplex=False)
        p = ctx.Process(
            target=_child,
            args=(m, pf.member_options(em, m, options, 1), pf.decode_one, send, _sharing(pf, m, inboxes, em)),
            name=f"optsched-portfolio-{m.name}",
            daemon=True,
        )
        p.start()
        send.close()
        procs[m.name], conns[recv] = p, m.name
    # a member that ignores its time limit is stopped after the limit + 50 % + 30 s, or
    # KILL_GRACE seconds after the whole call's deadline
    ends = [None if options.time_limit is None else time.monotonic() + 1.5 * options.time_limit + 30]
    if options.deadline is not None:
        ends.append(options.deadline + KILL_GRACE)
    deadline = min((e for e in ends if e is not None), default=None)
    # Ctrl-C: each member stops its solver and sends its incumbent (the signal is forwarded:
    # `kill -INT` reaches this process only, a terminal's Ctrl-C every member too)
    with interrupt.stoppable(interrupt.forward([p.pid for p in procs.values() if p.pid is not None])):
        _collect(pf, em, members, options, procs, conns, rows, deadline)
    for c, name in conns.items():  # still running: another member closed the gap (or the deadline passed)
        procs[name].terminate()
        rows[name] = {
            "stopped": True,
            "message": "stopped: the gap was closed by another member"
            if pf.closed(em, rows, options)
            else "stopped: past the time limit",
        }
        c.close()
    for p in procs.values():
        p.join(timeout=10)
        if p.is_alive():  # pragma: no cover - terminate was ignored
            p.kill()
            p.join()
    for q in inboxes.values():  # never written here: nothing to flush
        q.cancel_join_thread()
        q.close()
    return rows


def _collect(
    pf: Any,
    em: ExactModel,
    members: list[Member],
    options: SolveOptions,
    procs: dict[str, Any],
    conns: dict[Any, str],
    rows: dict[str, dict],
    deadline: float | None,
) -> None:
    """Receive the members' rows until all are in, the gap is closed or ``deadline`` passes
    (``conns`` keeps the members still running)."""

    while conns:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready = wait(list(conns), timeout=timeout)
        if not ready:
            break
        for c in ready:
            conn: Any = c
            name = conns.pop(conn)
            try:
                rows[name] = with_kind_bound(conn.recv(), next(m for m in members if m.name == name), pf.maximize)
            except EOFError:
                rows[name] = {"error": f"the {name} process ended without a result (exit code {procs[name].exitcode})"}
            conn.close()
        if conns and pf.closed(em, rows, options):
            break


def _inboxes(ctx: Any, em: ExactModel, members: list[Member]) -> dict[str, Any]:
    """One queue per member that takes incumbents (a Pyomo model with a warm-start mapping),
    when some other member publishes (a CP-SAT model) and sharing is on."""
    if not SHARE_INCUMBENTS or not any(_publishes(m) for m in members):
        return {}
    return {m.name: ctx.Queue() for m in members if _takes(m)}


def _sharing(pf: Any, m: Member, inboxes: dict[str, Any], em: ExactModel) -> dict[str, Any] | None:
    """What the forked member ``m`` installs (:func:`optsched.solvers.sharing.install`)."""
    if not inboxes:
        return None
    out = tuple(q for n, q in inboxes.items() if n != m.name) if _publishes(m) else ()
    inbox = inboxes.get(m.name)
    if not out and inbox is None:
        return None
    start = None
    h: Any = em.handles
    if h.initial is not None and pf.evaluate is not None:
        start = float(pf.evaluate(h.initial))
    publish = None
    if out:
        evaluate, decode, member = pf.evaluate, pf.decode_one, m

        def publish_one(cb: Any) -> tuple[Any, float]:
            value = float(cb.objective_value)
            sched = decode(member.em, SolveResult(Status.FEASIBLE, value, None, 0.0, member.name, "", raw=cb))
            # the kind's objective: the evaluator's, else the solver's value (within the resolution)
            obj = float(evaluate(sched)) if evaluate is not None else member.em.offset + member.em.scale * value
            return sched, obj

        publish = {id(m.em.model): publish_one}
    role = "sends" if out else "takes"
    return {
        "inbox": inbox,
        "outboxes": out,
        "publish": publish,
        "maximize": pf.maximize,
        "start": start,
        "role": role,
    }


def with_kind_bound(r: dict, m: Member, maximize: bool) -> dict:
    """Add the member's bound in the kind's units (valid: widened by the member's resolution)."""
    if "error" in r or r.get("stopped") or r.get("skipped"):
        return r
    b = kind_value(m.em, r.get("bound"))
    if b is not None:
        b = b + m.em.resolution if maximize else b - m.em.resolution
        if m.em.step:
            q = b / m.em.step
            b = (math.floor(q + 1e-6) if maximize else math.ceil(q - 1e-6)) * m.em.step
    r["kind_bound"] = b
    return r


def run_member(
    m: Member, options: SolveOptions, decode: Callable[[ExactModel, SolveResult], Any], probe: bool = False
) -> dict:
    """Solve one member (or run its probe) and decode its incumbent; errors become an ``error`` entry."""

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SolverLimitWarning)
            if probe and m.em.probe is not None:
                sr = m.em.probe(m.em, options)
            elif m.em.solve is not None:
                sr = m.em.solve(m.em, options)
            else:
                sr = default_solve(m.em, m.name, options, m.warm)
        sched = decode(m.em, sr) if sr.has_solution else None
    except Exception as e:  # reported per member; all failing raises SolverError
        return {"error": f"{type(e).__name__}: {e}"}
    obj = sr.objective if sched is not None else None
    return {
        "status": sr.status,
        "solver_objective": kind_value(m.em, obj),
        "bound": sr.bound,
        "runtime": sr.runtime,
        "message": sr.message,
        "version": sr.solver_version,
        "schedule": sched,
    }


def _publishes(m: Member) -> bool:
    """A CP-SAT member: its solution callback can send each improving incumbent."""
    return m.em.model is not None and hasattr(m.em.model, "ExportToFile")


def _takes(m: Member) -> bool:
    """A Pyomo member with a warm-start mapping: HiGHS takes incumbents mid-solve (CP-SAT cannot)."""
    return m.em.model is not None and not _publishes(m) and m.em.warm_start is not None and m.name == "highs"


def _child(
    m: Member,
    options: SolveOptions,
    decode: Callable[[ExactModel, SolveResult], Any],
    conn: Any,
    share: dict[str, Any] | None = None,
) -> None:
    _private_locks()
    interrupt.member()  # SIGINT (from the terminal or forwarded by the parent) stops this member's solver
    progress.detach()
    try:
        if share is not None:
            _install_sharing(m, share)
        row = run_member(m, options, decode)
        if share is not None:
            row["shared"] = {**sharing.stats(), "role": share.get("role")}
        try:
            conn.send(row)
        except Exception as e:  # e.g. an unpicklable schedule
            conn.send({"error": f"cannot send the {m.name} result: {e}"})
    finally:
        conn.close()


def _install_sharing(m: Member, share: dict[str, Any]) -> None:
    """In a forked member: publish (CP-SAT) and/or take (HiGHS) incumbents during the run."""

    sharing.install(**{k: v for k, v in share.items() if k != "role"})
    for q in share["outboxes"]:
        q.cancel_join_thread()  # the member may end with unread items: do not wait for them
    if share["inbox"] is not None and m.em.warm_start is not None:
        sharing.add_mapping(m.em.model, m.em.warm_start, scale=m.em.scale, offset=m.em.offset)


def _private_locks() -> None:
    """In a forked member: locks shared with the parent through fork become private ones.

    Pyomo guards its output capture with a ``multiprocessing.Lock`` (a semaphore shared with
    every forked process); a member stopped while holding it would leave the parent waiting for
    it (200 s, then ``DeveloperError``). The member is single-threaded, so a private lock is safe.
    """

    deps = sys.modules.get("pyomo.common.dependencies")
    if deps is not None and hasattr(deps, "capture_output_lock"):
        setattr(deps, "capture_output_lock", threading.Lock())  # noqa: B010 - the attribute is not typed
