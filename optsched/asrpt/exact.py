"""Exact Problem (8) on the slot grid: CP-SAT (optional intervals per pattern) or a HiGHS
time-indexed MILP, decoded into a verified :class:`~optsched.core.Schedule`."""

from __future__ import annotations

from optsched.asrpt.formulation import (
    OBJ_SCALE,
    build_problem8_cpsat,
    build_problem8_cpsat_ti,
    build_problem8_pyomo,
    job_patterns,
)
from optsched.asrpt.model import KIND, AsrptInstance
from optsched.core.objectives import objective_value
from optsched.core.registry import check_kind, register_algorithm
from optsched.core.result import Result
from optsched.core.schedule import Schedule
from optsched.solvers import SolveOptions
from optsched.solvers.exact import ExactModel, run_exact

__all__ = ["solve_exact", "solve_problem8", "build_exact", "decode_exact", "OBJECTIVE"]

OBJECTIVE = "total_completion_time"


def _schedule(instance: AsrptInstance, starts: dict, chosen: dict) -> Schedule:
    sched = Schedule()
    for j in instance.jobs:
        p = chosen[j.id]
        t0 = starts[j.id] * instance.slot
        sched.add(j.id, t0, min(t0 + p.time, t0 + p.slots * instance.slot), {m: c for m, c in enumerate(p.counts) if c > 0})
    return sched


def build_exact(instance: AsrptInstance, backend: str, options: SolveOptions, *,
                max_size: int | None = None) -> ExactModel:
    """The model :func:`solve_exact` solves for ``backend``.

    CP-SAT models count time in units of slot / OBJ_SCALE with the durations n_i alpha_i rounded
    to that unit: ``resolution`` = n * 0.5 * slot / OBJ_SCALE (the worst-case total rounding),
    so the bound is lowered by it and optimality is certified within twice it. The Pyomo model
    is exact (``scale`` 1, ``resolution`` 0)."""
    pats = {j.id: job_patterns(j, instance) for j in instance.jobs}
    info = {"patterns": sum(len(v) for v in pats.values())}
    if backend in ("cpsat", "cpsat-ti"):
        build = build_problem8_cpsat if backend == "cpsat" else build_problem8_cpsat_ti
        model, h = build(instance, patterns=pats, max_size=max_size)
        scale = instance.slot / OBJ_SCALE
        rounding = instance.n_jobs * 0.5 * scale
        info.update(horizon_slots=h["T"], objective_rounding=rounding)
        return ExactModel(model, (backend, pats, h), scale=scale, resolution=rounding, info=info)
    model = build_problem8_pyomo(instance, patterns=pats, max_size=max_size)
    info.update(horizon_slots=model.horizon, objective_rounding=0.0)
    return ExactModel(model, (backend, pats, None), info=info)


def decode_exact(instance: AsrptInstance, em: ExactModel, sr) -> Schedule:
    """The schedule of a solved :func:`build_exact` model."""
    backend, pats, h = em.handles
    starts, chosen = {}, {}
    if backend == "cpsat":
        val = sr.raw.Value
        for i, j in enumerate(instance.jobs):
            starts[j.id] = val(h["start"][i])
            chosen[j.id] = next(p for b, p in zip(h["use"][i], pats[j.id], strict=True) if val(b))
    elif backend == "cpsat-ti":
        val = sr.raw.Value
        for (i, p, t), v in h["x"].items():
            if val(v):
                j = instance.jobs[i]
                starts[j.id], chosen[j.id] = t, pats[j.id][p]
    else:
        model = em.model
        for (i, p, t) in model.IPT:
            if (model.x[i, p, t].value or 0) > 0.5:
                j = instance.jobs[i]
                starts[j.id], chosen[j.id] = t, pats[j.id][p]
    return _schedule(instance, starts, chosen)


@register_algorithm("asrpt-exact", KIND, exact=True, backends=("cpsat", "cpsat-ti", "highs"),
                    suite_options={"options": SolveOptions(time_limit=30, threads=1)})
def solve_exact(instance: AsrptInstance, *, backend: str = "cpsat", options: SolveOptions | None = None,
                seed=None, write_model: str | None = None, max_size: int | None = None) -> Result:
    """Exact Problem (8): minimum total completion time sum_i (t_i + n_i alpha_i), t_i on the slot grid.

    Parameters
    ----------
    instance : AsrptInstance
    backend : {"cpsat", "cpsat-ti", "highs"} or a Pyomo solver name
        ``cpsat``: optional intervals per (job, pattern) with cumulative capacity per server.
        ``cpsat-ti``: CP-SAT on the time-indexed Boolean model (stronger bounds on more jobs).
        Otherwise the time-indexed MILP through Pyomo (O(I P T) binaries).
    options : SolveOptions
        Default: 60 s, gap 0, 1 thread.
    seed : int or numpy.random.Generator, optional
        Overrides ``options.seed``.
    write_model : str, optional
        Write the model (.lp/.mps for Pyomo, .pb/.pbtxt for CP-SAT).

    Returns
    -------
    Result
        Certified by :func:`optsched.solvers.exact.run_exact`: ``objective`` recomputed from the
        decoded schedule (seconds); ``bound`` a valid lower bound never above it; ``gap``;
        ``status`` optimal only within ``info["optimality_tolerance"]``. For CP-SAT the
        durations n_i alpha_i enter the objective rounded to slot/10^4
        (``info["objective_rounding"]`` is the worst-case total error in seconds; the bound is
        lowered by it and the tolerance is at least twice it).

    Guarantee
    ---------
    status OPTIMAL => objective <= that of every schedule with starts on the slot grid satisfying
    (1)-(3), up to ``info["optimality_tolerance"]``.

    Notes
    -----
    Patterns per job: all vectors of GPUs per server with sum g_i (<= (g+1)^M); each gets its best
    stage split by enumeration (or the placement MILP). Horizon T = max r + sum_i min_p duration.

    References
    ----------
    Luo et al., Problem (8); formulations/asrpt.md#problem-8.

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> r = solve_exact(inst, options=SolveOptions(threads=1, time_limit=10))
    >>> r.status.value, round(r.objective, 4)
    ('optimal', 21.9)
    """
    check_kind(instance, KIND, "asrpt-exact")
    return run_exact(
        instance,
        build=lambda inst, b, o: build_exact(inst, b, o, max_size=max_size),
        decode=lambda em, sr: decode_exact(instance, em, sr),
        evaluate=lambda s: objective_value(instance, s, OBJECTIVE),
        backend=backend, algorithm=f"asrpt-exact[{backend}]", objective_name=OBJECTIVE, options=options,
        seed=seed, write_model=write_model)


#: The former name (kept as an alias).
solve_problem8 = solve_exact
