"""Exact Problem (8) on the slot grid: CP-SAT (optional intervals per pattern) or a HiGHS
time-indexed MILP, decoded into a verified :class:`~optsched.core.Schedule`."""

from __future__ import annotations

import time

import numpy as np

from optsched.asrpt.formulation import (
    OBJ_SCALE,
    build_problem8_cpsat,
    build_problem8_cpsat_ti,
    build_problem8_pyomo,
    job_patterns,
)
from optsched.asrpt.model import KIND, AsrptInstance
from optsched.core.objectives import objective_value
from optsched.core.registry import register_algorithm
from optsched.core.result import Result
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidInstanceError
from optsched.solvers import SolveOptions, solve_cpsat, solve_pyomo
from optsched.solvers import write_model as _write

__all__ = ["solve_problem8", "OBJECTIVE"]

OBJECTIVE = "total_completion_time"


def _schedule(instance: AsrptInstance, starts: dict, chosen: dict) -> Schedule:
    sched = Schedule()
    for j in instance.jobs:
        p = chosen[j.id]
        t0 = starts[j.id] * instance.slot
        sched.add(j.id, t0, min(t0 + p.time, t0 + p.slots * instance.slot), {m: c for m, c in enumerate(p.counts) if c > 0})
    return sched


@register_algorithm("asrpt-exact", KIND, exact=True, backends=("cpsat", "cpsat-ti", "highs"),
                    suite_options={"options": SolveOptions(time_limit=30, threads=1)})
def solve_problem8(instance: AsrptInstance, *, backend: str = "cpsat", options: SolveOptions | None = None,
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
    seed : int, optional
        Overrides ``options.seed``.
    write_model : str, optional
        Write the model (.lp/.mps for Pyomo, .pb/.pbtxt for CP-SAT).

    Returns
    -------
    Result
        ``objective`` recomputed from the decoded schedule (seconds); ``status`` optimal/feasible;
        ``bound`` the solver's proven lower bound (seconds) and ``gap``. For CP-SAT the durations
        n_i alpha_i enter the objective rounded to slot/10^4 (``info["objective_rounding"]`` is the
        worst-case total error in seconds).

    Guarantee
    ---------
    status OPTIMAL => objective <= that of every schedule with starts on the slot grid satisfying
    (1)-(3), up to ``info["objective_rounding"]``.

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
    >>> r = solve_problem8(inst, options=SolveOptions(threads=1, time_limit=10))
    >>> r.status.value, round(r.objective, 4)
    ('optimal', 21.9)
    """
    if getattr(instance, "kind", None) != KIND:
        raise InvalidInstanceError(f"asrpt-exact needs an instance of kind 'asrpt'; got "
                                   f"{getattr(instance, 'kind', type(instance).__name__)!r}.")
    options = options or SolveOptions(time_limit=60, threads=1)
    if seed is not None:
        options = options.replace(seed=int(seed))
    t0 = time.perf_counter()
    pats = {j.id: job_patterns(j, instance) for j in instance.jobs}
    rounding = 0.0
    if backend in ("cpsat", "cpsat-ti"):
        build = build_problem8_cpsat if backend == "cpsat" else build_problem8_cpsat_ti
        model, h = build(instance, patterns=pats, max_size=max_size)
        if write_model:
            _write(model, write_model)
        sr = solve_cpsat(model, options)
        scale = instance.slot / OBJ_SCALE
        rounding = instance.n_jobs * 0.5 * scale
        sched = None
        if sr.has_solution:
            val = sr.raw.Value
            starts, chosen = {}, {}
            if backend == "cpsat":
                for i, j in enumerate(instance.jobs):
                    starts[j.id] = val(h["start"][i])
                    chosen[j.id] = next(p for b, p in zip(h["use"][i], pats[j.id], strict=True) if val(b))
            else:
                for (i, p, t), v in h["x"].items():
                    if val(v):
                        j = instance.jobs[i]
                        starts[j.id], chosen[j.id] = t, pats[j.id][p]
            sched = _schedule(instance, starts, chosen)
        T = h["T"]
    else:
        model = build_problem8_pyomo(instance, patterns=pats, max_size=max_size)
        if write_model:
            _write(model, write_model)
        sr = solve_pyomo(model, backend, options)
        scale = 1.0
        sched = None
        if sr.has_solution:
            starts, chosen = {}, {}
            for (i, p, t) in model.IPT:
                if (model.x[i, p, t].value or 0) > 0.5:
                    j = instance.jobs[i]
                    starts[j.id], chosen[j.id] = t, pats[j.id][p]
            sched = _schedule(instance, starts, chosen)
        T = model.horizon
    obj = objective_value(instance, sched, OBJECTIVE) if sched is not None else None
    bound = None if sr.bound is None else sr.bound * scale
    if obj is not None and sr.objective is not None and not np.isclose(obj, sr.objective * scale, rtol=1e-6,
                                                                         atol=rounding + 1e-6):
        raise RuntimeError(f"Decoded objective {obj} differs from the solver's {sr.objective * scale}; "
                           f"model and decoder disagree (a bug: please report it).")
    if bound is not None and rounding:
        bound = bound - rounding  # stay a valid bound on the unrounded objective
    gap = None if obj is None or bound is None else max(0.0, obj - bound) / max(abs(obj), 1e-10)
    return Result(algorithm=f"asrpt-exact[{backend}]", instance=instance.name, objective=obj,
                  objective_name=OBJECTIVE, schedule=sched, status=sr.status, bound=bound, gap=gap,
                  runtime=time.perf_counter() - t0, solver=f"{sr.solver} {sr.solver_version}",
                  info={"solver_message": sr.message, "solver_runtime": sr.runtime, "horizon_slots": T,
                        "patterns": sum(len(v) for v in pats.values()), "objective_rounding": rounding})
