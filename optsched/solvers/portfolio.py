"""Back ends ``"auto"`` and ``"portfolio"`` for any exact model with several back ends.

A paper's ``solve_exact`` hands its ``build``/``decode`` to :func:`plan_backend`, which returns
what :func:`optsched.solvers.exact.run_exact` gets; the certification (objective recomputed by
the evaluator, bound never beyond it, ``optimal`` only within the tolerance) stays in
``run_exact``, for every back end.

``"auto"``
    The paper's rule picks one member back end before any model is built (for the time-indexed
    versus interval models: :func:`auto_time_indexed`); ``Result.info`` holds
    ``backend`` (the one used) and ``auto_rule`` (why).

``"portfolio"``
    Stage 0: when the first member has a probe (``ExactModel.probe``, e.g. CP-SAT without
    presolve for a fraction of a second), it is built and probed here first; if the probe
    proves the optimum the other members are never built; otherwise its incumbent, when better
    than the warm start, becomes the other members' warm start. Then every member (default
    CP-SAT and HiGHS) is built in this process and solved side by side
    in forked processes, one thread each, same time limit, same warm start. As soon as one
    member proves its incumbent optimal, or the best incumbent and the best bound of the
    finished members meet, the others are stopped. The result is the best incumbent (by the
    kind's evaluator) and the best bound of any member; ``Result.info`` names the ``winner``
    (whose incumbent is returned), ``bound_from`` (whose bound) and holds ``portfolio``, one
    row per member (status, objective, bound, runtime, stopped early or not).
    **Incumbents shared during the run** (``fork``, :data:`SHARE_INCUMBENTS`;
    :mod:`optsched.solvers.sharing`): a CP-SAT member's solution callback decodes each improving
    solution, recomputes its objective with the kind's evaluator and, when it beats the warm
    start and everything sent before, puts the schedule on a ``multiprocessing`` queue (created
    before the fork) of each HiGHS member. HiGHS polls it from its ``kCallbackMipUserSolution``
    callback (called many times a second during the branch and bound), maps the newest schedule
    to its columns with the member's own ``ExactModel.warm_start`` and hands it over with
    ``data_in.setSolution`` when it beats HiGHS's incumbent; HiGHS checks it and prunes with it
    (its objective lowered by a constant for the solve: HiGHS 1.14 otherwise drops improving user
    solutions once presolve leaves an objective offset; :func:`optsched.solvers.sharing.objective_shift`).
    Not the other way: CP-SAT takes hints only before a solve, none during one. Counts per
    member in ``info["portfolio"][name]``: ``incumbents_sent``, ``incumbents_received``,
    ``incumbents_given`` (handed to HiGHS), ``incumbents_taken`` (HiGHS's incumbent was as good
    at its next call); ``info["portfolio_sharing"]`` sums them up. A shared schedule that a
    member cannot take is counted, never raised; results are certified as always.

    ``write_model=`` writes one file per member (:meth:`_Portfolio.build`'s ``write``); with
    ``options.verbose`` the model summary lists every member built.

Where ``fork`` is not available (Windows, macOS spawn), ``method="sequential"`` runs the members
one after another, each with an equal share of the time limit.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from optsched.core.result import Status
from optsched.exceptions import InvalidOptionError, ModelTooLargeError, SolverError, TimeLimitReached
from optsched.solvers.exact import check_backend
from optsched.solvers.members import (
    Member,
    run_forked,
    run_member,
    with_kind_bound,
)
from optsched.solvers.model import ExactModel, model_summary
from optsched.solvers.options import SolveOptions, SolveResult
from optsched.solvers.pyomo_backend import write_model

AUTO = "auto"
PORTFOLIO = "portfolio"
#: ``auto`` picks the time-indexed MILP (HiGHS) when the model has at most this many start
#: variables x[j, t] (sum over jobs of the start slots in the horizon) ...
AUTO_TI_MAX_STARTS = 20_000
#: ... and the jobs' mean work is at most this many slots (a short horizon per job); otherwise the
#: interval model (CP-SAT). Measured in docs/exact.md#auto.
AUTO_TI_MAX_MEAN_WORK = 5.0
#: ... but instances of at most this many jobs always go to the interval model (CP-SAT): its
#: staged solve (a probe without presolve) proves them in milliseconds, where building the
#: time-indexed model alone takes 0.1-1 s. Measured in docs/exact.md#auto.
AUTO_SMALL_JOBS = 20


def auto_time_indexed(
    n_starts: int,
    mean_work: float,
    *,
    cpsat_ok: bool = True,
    max_starts: int = AUTO_TI_MAX_STARTS,
    max_mean_work: float = AUTO_TI_MAX_MEAN_WORK,
    n_jobs: int | None = None,
    small_jobs: int = AUTO_SMALL_JOBS,
) -> tuple[str, str]:
    """The ``auto`` rule between a time-indexed MILP (``"highs"``) and an interval model
    (``"cpsat"``): ``(backend, reason)``.

    The time-indexed model has one binary per job and start slot, so its size grows with the
    horizon and the jobs' lengths in slots; its LP bound is strong when jobs are a few slots
    long, where the interval model's bound stays weak. The interval model's size does not
    depend on the horizon. So: CP-SAT for at most ``small_jobs`` jobs (``n_jobs``, when given:
    small instances are proven by CP-SAT's probe in milliseconds, less than the time-indexed
    model takes to build); otherwise HiGHS while ``mean_work <= max_mean_work`` slots and
    ``n_starts <= max_starts``, else CP-SAT. HiGHS whenever ``cpsat_ok`` is false.

    >>> auto_time_indexed(5_000, 3.5)[0], auto_time_indexed(5_000, 20.0)[0], auto_time_indexed(200_000, 3.5)[0]
    ('highs', 'cpsat', 'cpsat')
    >>> auto_time_indexed(500, 3.5, n_jobs=12)[0], auto_time_indexed(5_000, 3.5, n_jobs=30)[0]
    ('cpsat', 'highs')
    """
    if not cpsat_ok:
        return "highs", "time-indexed MILP: the interval model cannot take this instance (e.g. fractional weights)"
    if n_jobs is not None and n_jobs <= small_jobs:
        return "cpsat", f"interval model (small instance): {n_jobs} jobs <= {small_jobs}"
    if n_starts <= max_starts and mean_work <= max_mean_work:
        return "highs", (
            f"time-indexed MILP (short horizon): {n_starts} start variables <= {max_starts}, mean work "
            f"{mean_work:.3g} <= {max_mean_work:g} slots"
        )
    return "cpsat", (
        f"interval model (long horizon): {n_starts} start variables (limit {max_starts}), mean work "
        f"{mean_work:.3g} slots (limit {max_mean_work:g})"
    )


@dataclass(frozen=True)
class BackendPlan:
    """What :func:`run_exact` gets: ``backend``, ``build``, ``decode``, ``own_backends``."""

    backend: str
    build: Callable[[Any, str, SolveOptions], ExactModel]
    decode: Callable[[ExactModel, SolveResult], Any]
    own_backends: tuple[str, ...]
    requested: str


def plan_backend(
    backend: Any,
    *,
    build: Callable[[Any, str, SolveOptions], ExactModel],
    decode: Callable[[ExactModel, SolveResult], Any],
    own: tuple[str, ...] = ("cpsat",),
    members: Sequence[str] = ("cpsat", "highs"),
    auto: Callable[[], tuple[str, str]] | None = None,
    evaluate: Callable[[Any], float] | None = None,
    sense: str = "min",
    method: str | None = None,
) -> BackendPlan:
    """Resolve ``"auto"``/``"portfolio"`` (or pass a plain back end through), refusing an
    unknown one with :class:`InvalidOptionError` listing the known ones, before any model is built.

    Parameters
    ----------
    backend : str
        ``"auto"``, ``"portfolio"``, one of ``own`` or a Pyomo solver name (``"highs"``).
    build, decode : callable
        The paper's, as for :func:`run_exact`.
    own : tuple of str
        The paper's own (non-Pyomo) back ends.
    members : sequence of str
        The portfolio's back ends (each must be valid on its own).
    auto : callable, optional
        ``auto() -> (backend, reason)``: the paper's rule; without it ``"auto"`` is refused.
    evaluate : callable, optional
        The kind's evaluator: picks the portfolio's best incumbent by its true objective
        (else by the members' solver objectives).
    sense : {"min", "max"}
    method : {"fork", "sequential"}, optional
        How the portfolio runs its members; default ``fork`` where available.
    """
    known = tuple(dict.fromkeys((*own, *members, AUTO, PORTFOLIO)))
    if not isinstance(backend, str) or not backend:
        raise InvalidOptionError(
            f"The 'backend' option must be one of {list(known)} or a Pyomo solver name; got {backend!r}."
        )
    if backend == AUTO:
        if auto is None:
            raise InvalidOptionError(f"This model has no 'auto' rule; choose one of {[k for k in known if k != AUTO]}.")
        chosen, reason = auto()
        check_backend(chosen, own)

        def build_auto(inst: Any, b: str, o: SolveOptions) -> ExactModel:
            em = build(inst, chosen, o)
            return replace(em, info={**em.info, "backend_requested": AUTO, "backend": chosen, "auto_rule": reason})

        return BackendPlan(chosen, build_auto, decode, own, AUTO)
    if backend == PORTFOLIO:
        for b in members:
            check_backend(b, own)
        if method is None:
            method = "fork" if "fork" in mp.get_all_start_methods() else "sequential"
        if method not in ("fork", "sequential"):
            raise InvalidOptionError(f"The portfolio 'method' must be 'fork' or 'sequential'; got {method!r}.")
        pf = _Portfolio(tuple(members), build, decode, evaluate, sense == "max", method)
        return BackendPlan(PORTFOLIO, pf.build, pf.decode, (*own, PORTFOLIO), PORTFOLIO)
    try:
        check_backend(backend, own)
    except InvalidOptionError:
        raise InvalidOptionError(
            f"Unknown back end {backend!r}: choose one of {list(known)} or an installed Pyomo "
            f"MILP solver name (e.g. 'gurobi', 'cplex', 'cbc', 'glpk')."
        ) from None
    return BackendPlan(backend, build, decode, own, backend)


# --------------------------------------------------------------------------- portfolio


@dataclass
class _Handles:
    members: list[Member]
    failed: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)  # members built only if the probe does not prove
    instance: Any = None
    options: SolveOptions | None = None
    initial: Any = None  # the warm start, for members built late


@dataclass
class _Portfolio:
    members: tuple[str, ...]
    build_one: Callable[[Any, str, SolveOptions], ExactModel]
    decode_one: Callable[[ExactModel, SolveResult], Any]
    evaluate: Callable[[Any], float] | None
    maximize: bool
    method: str

    # -- build: the members here (errors before anything is solved), one ExactModel for run_exact.
    # When the first member that builds has a probe, the others are built only if it does not prove.
    def _build_members(
        self, instance: Any, names: Sequence[str], options: SolveOptions, failed: dict, errors: list | None = None
    ) -> list[Member]:
        ms = []
        for b in names:
            try:
                ms.append(Member(b, self.build_one(instance, b, options)))
            except (ModelTooLargeError, InvalidOptionError, TimeLimitReached) as e:  # cannot take it (in time)
                failed[b] = f"{type(e).__name__}: {e}"
                if errors is not None:
                    errors.append(e)
        return ms

    def build(self, instance: Any, backend: str, options: SolveOptions) -> ExactModel:
        failed: dict[str, str] = {}
        errors: list[Exception] = []
        ms: list[Member] = []
        pending: list[str] = []
        for k, b in enumerate(self.members):
            ms = self._build_members(instance, [b], options, failed, errors)
            if ms:
                rest = list(self.members[k + 1 :])
                if ms[0].em.probe is not None and rest:
                    pending = rest
                else:
                    ms += self._build_members(instance, rest, options, failed)
                break
        if not ms:
            raise errors[0]
        same = len({(m.em.scale, m.em.offset) for m in ms}) == 1
        scale, offset = (ms[0].em.scale, ms[0].em.offset) if same else (1.0, 0.0)
        steps = {m.em.step for m in ms}
        step = steps.pop() if len(steps) == 1 else None
        handles = _Handles(ms, failed, pending, instance, options)
        info: dict[str, Any] = {"backend": PORTFOLIO, "portfolio_members": [m.name for m in ms] + pending}
        for m in ms:
            info.update({k: v for k, v in m.em.info.items() if k not in info})
        if failed:
            info["portfolio_failed"] = failed
        if options.verbose:
            info["model_summaries"] = {m.name: model_summary(m.em) for m in ms}

        def warm_start(schedule: Any) -> None:
            handles.initial = schedule
            for m in handles.members:
                if m.em.warm_start is not None and not m.warm:
                    m.em.warm_start(schedule)
                    m.warm = True

        def write(path: str) -> list[str]:
            """One file per member (all built first): ``<stem>.<member><suffix>``, the suffix
            kept where the member's format allows it (else .pbtxt for CP-SAT, .lp for Pyomo)."""

            self._build_pending(handles, info)
            p, out = Path(path), []
            for m in handles.members:
                cpsat = hasattr(m.em.model, "ExportToFile")
                ok = (".pb", ".pbtxt") if cpsat else (".lp", ".mps")
                suffix = p.suffix if p.suffix in ok else ok[-1] if cpsat else ok[0]
                if m.em.model is not None:
                    out.append(str(write_model(m.em.model, p.with_name(f"{p.stem}.{m.name}{suffix}"))))
            return out

        return ExactModel(
            None,
            handles,
            scale=scale,
            offset=offset,
            resolution=max(m.em.resolution for m in ms),
            step=step,
            solve=self.solve,
            info=info,
            warm_start=warm_start,
            write=write,
        )

    def _build_pending(self, h: _Handles, info: dict[str, Any]) -> None:
        """Build the members deferred by :meth:`build` (same warm start); a member that cannot
        take the instance is named in ``info["portfolio_failed"]``."""
        if not h.pending:
            return
        assert h.options is not None
        new = self._build_members(h.instance, h.pending, h.options, h.failed)
        h.pending = []
        units = lambda e: (e.scale, e.offset, e.resolution, e.step)  # noqa: E731
        for m in new:
            if units(m.em) != units(h.members[0].em):
                h.failed[m.name] = "its objective is in other units than the first member's (scale, offset, resolution)"
                continue
            if h.initial is not None and m.em.warm_start is not None:
                m.em.warm_start(h.initial)
                m.warm = True
            h.members.append(m)
            info.update({k: v for k, v in m.em.info.items() if k not in info})
            if h.options.verbose:
                info.setdefault("model_summaries", {})[m.name] = model_summary(m.em)
        if h.failed:
            info["portfolio_failed"] = h.failed

    def decode(self, em: ExactModel, sr: SolveResult) -> Any:
        return sr.raw["schedule"]

    # -- solve: members side by side, best incumbent and best bound
    def member_options(self, em: ExactModel, m: Member, options: SolveOptions, share: int) -> SolveOptions:
        o = options.replace(threads=1)
        if options.mip_abs_gap is not None:  # in the portfolio's model units -> the member's
            o = o.replace(mip_abs_gap=options.mip_abs_gap * em.scale / m.em.scale)
        if share > 1 and options.time_limit is not None:
            o = o.replace(time_limit=options.time_limit / share)
        return o

    def better(self, a: float, b: float) -> bool:
        return a > b if self.maximize else a < b

    def solve(self, em: ExactModel, options: SolveOptions) -> SolveResult:
        h: _Handles = em.handles
        info: Any = em.info
        t0 = time.perf_counter()
        if h.pending:  # stage 0: the first member's probe, in this process; proven -> the rest is never built
            first = h.members[0]
            row = run_member(first, self.member_options(em, first, options, 1), self.decode_one, probe=True)
            row = with_kind_bound(row, first, self.maximize)
            info["portfolio_probe"] = {
                "member": first.name,
                "status": row["status"].value if isinstance(row.get("status"), Status) else "error",
                "seconds": row.get("runtime"),
            }
            if "error" not in row and row["status"] in (Status.OPTIMAL, Status.INFEASIBLE):
                rows = {first.name: row}
                for n in h.pending:
                    rows[n] = {"skipped": True, "message": f"not built: the {first.name} probe proved the optimum"}
                return self._combine(em, h, rows, options, time.perf_counter() - t0)
            if "error" not in row and row.get("schedule") is not None and self.evaluate is not None:
                # the probe's incumbent, when better than the warm start, is the later members' start
                better = h.initial is None or self.better(self.objective_of(row), float(self.evaluate(h.initial)))
                if better:
                    h.initial = row["schedule"]
                    info["portfolio_probe"]["shared_start"] = self.objective_of(row)
            self._build_pending(h, info)
            if options.time_limit is not None:
                options = options.replace(time_limit=max(0.1, options.time_limit - (time.perf_counter() - t0)))
        if self.method == "fork" and len(h.members) > 1:
            rows = run_forked(self, em, h.members, options)
        else:
            rows = {
                m.name: run_member(m, self.member_options(em, m, options, len(h.members)), self.decode_one)
                for m in h.members
            }
        return self._combine(em, h, rows, options, time.perf_counter() - t0)

    def closed(self, em: ExactModel, rows: dict[str, dict], options: SolveOptions) -> bool:
        """True when the finished members' best incumbent and best bound meet (optimal proven)."""
        if any(r.get("status") == Status.OPTIMAL for r in rows.values()):
            return True
        objs = [self.objective_of(r) for r in rows.values() if r.get("schedule") is not None]
        bnds = [r["kind_bound"] for r in rows.values() if r.get("kind_bound") is not None]
        if not objs or not bnds:
            return False
        obj = max(objs) if self.maximize else min(objs)
        bnd = min(bnds) if self.maximize else max(bnds)
        tol = max(
            options.optimality_tolerance * max(abs(obj), 1e-10), (options.mip_abs_gap or 0.0) * em.scale, em.step or 0.0
        )
        return abs(obj - bnd) < tol if em.step else abs(obj - bnd) <= tol

    def objective_of(self, r: dict) -> float:
        if "kind_objective" not in r:
            r["kind_objective"] = (
                float(self.evaluate(r["schedule"])) if self.evaluate is not None else r["solver_objective"]
            )
        return r["kind_objective"]

    def _combine(
        self, em: ExactModel, h: _Handles, rows: dict[str, dict], options: SolveOptions, runtime: float
    ) -> SolveResult:
        for name, r in rows.items():
            if "kind_bound" not in r and "error" not in r and not r.get("stopped") and not r.get("skipped"):
                rows[name] = with_kind_bound(r, next(m for m in h.members if m.name == name), self.maximize)
        sols = {n: r for n, r in rows.items() if r.get("schedule") is not None}
        bnds = {n: r["kind_bound"] for n, r in rows.items() if r.get("kind_bound") is not None}
        table = {}
        for n, r in rows.items():
            st = r.get("status")
            table[n] = {
                "status": st.value
                if isinstance(st, Status)
                else ("stopped" if r.get("stopped") else "skipped" if r.get("skipped") else "error"),
                "objective": self.objective_of(r) if n in sols else None,
                "bound": r.get("kind_bound"),
                "runtime": r.get("runtime"),
                "message": r.get("message") or r.get("error"),
            }
            if "shared" in r:  # incumbents shared during the run (optsched.solvers.sharing)
                sh = r["shared"]
                table[n].update({f"incumbents_{k}": sh.get(k, 0) for k in ("sent", "received", "given", "taken")})
        info: Any = em.info  # the dict built by build(): run_exact copies it after the solve
        info["portfolio"] = table
        errors = {n: r["error"] for n, r in rows.items() if "error" in r}
        if not sols and not bnds and errors and len(errors) == len(rows):
            raise SolverError("Every portfolio member failed: " + "; ".join(f"{n}: {e}" for n, e in errors.items()))
        winner = None
        for n in sols:  # members in order: ties go to the first
            if winner is None or self.better(self.objective_of(sols[n]), self.objective_of(sols[winner])):
                winner = n
        bound_from = None
        for n, b in bnds.items():
            if bound_from is None or (b < bnds[bound_from] if self.maximize else b > bnds[bound_from]):
                bound_from = n
        info["winner"], info["bound_from"] = winner, bound_from
        shared = {n: r["shared"] for n, r in rows.items() if "shared" in r}
        if shared:
            info["portfolio_sharing"] = {  # members stopped early report nothing
                "sent": {n: s.get("sent", 0) for n, s in shared.items() if s.get("role") == "sends"},
                "taken_by": {n: s.get("taken", 0) for n, s in shared.items() if s.get("role") == "takes"},
                "note": "CP-SAT members send each improving incumbent; HiGHS takes them mid-solve; "
                "CP-SAT takes none mid-solve",
            }
        info["proved_by"] = next((n for n, r in rows.items() if r.get("status") == Status.OPTIMAL), None)
        obj = bound = None
        if winner is not None:
            obj = (sols[winner]["solver_objective"] - em.offset) / em.scale
        if bound_from is not None:  # run_exact lowers (raises) by em.resolution again: undo that here
            kb = bnds[bound_from]
            bound = ((kb - em.resolution if self.maximize else kb + em.resolution) - em.offset) / em.scale
        statuses = [r.get("status") for r in rows.values()]
        if Status.INFEASIBLE in statuses and winner is None:
            status = Status.INFEASIBLE
        elif winner is None:
            status = Status.NO_SOLUTION
        else:
            status = Status.OPTIMAL if Status.OPTIMAL in statuses else Status.FEASIBLE
        versions = " + ".join(f"{n} {r.get('version', '')}".strip() for n, r in rows.items() if not r.get("skipped"))
        msg = "; ".join(f"{n}: {t['status']}" for n, t in table.items())
        return SolveResult(
            status=status,
            objective=obj,
            bound=bound,
            runtime=runtime,
            solver=PORTFOLIO,
            solver_version=f"({versions})",
            message=msg,
            raw={"schedule": sols[winner]["schedule"] if winner else None, "winner": winner},
        )
