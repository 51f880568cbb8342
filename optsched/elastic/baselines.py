"""The baselines of paper 001's Sec. 7: the stable API.

* :func:`run_baseline` - one of :data:`BASELINES` (FIFO, DRF, AntMan-like, Tiresias-like, 2D-LAS)
  run on optsched's discrete-event simulator (:mod:`optsched.elastic.policy`, slotted mode, one
  simulator second = one slot), returning a :class:`~optsched.core.result.Result` whose objective
  is sum_j w_j c_j in slots. Non-preemptive baselines (FIFO, DRF) also return an
  :class:`~optsched.elastic.schedule.ElasticSchedule` (each job's one start) for the verifier, and are
  registered kind algorithms (``elastic-fifo``, ``elastic-drf``); preemptive ones return the
  completions and the simulator's segments (``info["segments"]``).
* :func:`jain_greedy` - Jain et al.'s greedy [44] for the max-weight problem (7)/(8), the
  comparison of Fig. 8: jobs by value density, each at its latest feasible start.

Definitions, the ideal configuration, the preemption overhead and each "-like" reading:
``formulations/elastic.md#baselines``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from optsched.core.registry import requires_kind
from optsched.core.result import Result, Status
from optsched.core.seeds import as_generator
from optsched.elastic.checks import evaluate_objective
from optsched.elastic.constants import KIND, OBJECTIVE
from optsched.elastic.model import ElasticInstance
from optsched.elastic.policy import POLICY_CLASSES
from optsched.elastic.policy_base import ElasticRate, sim_resource_names, to_sim
from optsched.elastic.prices import Priced
from optsched.elastic.primal_dual import MaxWeightRun
from optsched.elastic.schedule import Assignment, ElasticSchedule
from optsched.elastic.shapes import (
    Shape,
    candidate_shapes,
    fifo_shape,
    find_placement,
    ideal_shape,
    least_total_use,
    placement_use,
    shape_config,
)
from optsched.exceptions import InternalError, InvalidOptionError
from optsched.sim import Simulator

BASELINES: tuple[str, ...] = ("fifo", "drf", "antman", "tiresias", "2d-las")
"""The baselines of the paper's Sec. 7, by the names ``run_baseline`` takes."""
NON_PREEMPTIVE: tuple[str, ...] = ("fifo", "drf")
#: the options each baseline takes besides ``seed`` (FIFO's worker counts are drawn in [lo, hi])
OPTIONS: dict[str, tuple[str, ...]] = {
    "fifo": ("workers",),
    "drf": (),
    "antman": ("demote_after", "overhead"),
    "tiresias": ("overhead",),
    "2d-las": ("overhead",),
}


def _workers_range(value: Any) -> tuple[int, int]:
    ok = (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)
        and 1 <= value[0] <= value[1]
    )
    if not ok:
        raise InvalidOptionError(
            f"The 'workers' option of the FIFO baseline must be a pair (lo, hi) of integers with "
            f"1 <= lo <= hi (Sec. 7: (1, 30)); got {value!r}."
        )
    return int(value[0]), int(value[1])


def run_baseline(instance: ElasticInstance, name: str, *, seed: Any = None, **options: Any) -> Result:
    """Run the baseline ``name`` (one of :data:`BASELINES`) on the simulator.

    Parameters
    ----------
    instance : ElasticInstance
    name : {"fifo", "drf", "antman", "tiresias", "2d-las"}
    seed : int, Generator or None
        FIFO draws each job's worker count from it; the other baselines are deterministic.
    **options
        ``workers=(1, 30)`` (FIFO: the range N is drawn from, then capped at D_j);
        ``demote_after=None`` (AntMan: slots a guarantee job waits before it becomes
        opportunistic; None: its ideal duration); ``overhead="none"`` or ``"checkpoint"``
        (preemptive baselines: a resume costs a save and a load of pi_j over b_m).

    Returns
    -------
    Result
        ``algorithm`` = ``elastic-<name>``, ``objective`` = sum_j w_j c_j (slots), ``schedule`` (an
        ElasticSchedule for FIFO and DRF, else None), ``info``: ``completions`` {job id: c_j},
        ``preemptions``, ``mean_jct``, ``makespan``, ``late_jobs`` (c_j > T: a schedule with them
        fails the verifier's ``horizon`` check), ``segments`` (job, start, end, use per server and
        resource, in the instance's resource names), ``starts``, ``params``; AntMan adds
        ``demotions``.

    Raises
    ------
    InvalidOptionError
        An unknown baseline or option (the message lists the valid ones).
    InfeasibleError
        A job with no configuration (naming it).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> r = run_baseline(toy_instance(), "fifo", seed=0)
    >>> r.algorithm, r.objective, r.info["preemptions"]
    ('elastic-fifo', 30.0, 0)
    >>> run_baseline(toy_instance(), "tiresias").objective   # one GPU is idle either way
    30.0
    """
    t0 = time.perf_counter()
    if name not in BASELINES:
        raise InvalidOptionError(f"Unknown baseline {name!r}; choose one of {list(BASELINES)}.")
    unknown = sorted(set(options) - set(OPTIONS[name]))
    if unknown:
        raise InvalidOptionError(
            f"Unknown option(s) {unknown} for the {name!r} baseline; it takes "
            f"{list(OPTIONS[name]) or 'no options'} (and seed)."
        )
    params: dict[str, Any] = dict(options)
    if name == "fifo":
        lo, hi = _workers_range(options.get("workers", (1, 30)))
        params["workers"] = (lo, hi)
        rng = as_generator(seed)
        shapes = [fifo_shape(instance, j, int(rng.integers(lo, hi + 1))) for j in range(instance.n_jobs)]
        policy = POLICY_CLASSES[name](instance)
    else:
        shapes = [ideal_shape(instance, j) for j in range(instance.n_jobs)]
        policy = POLICY_CLASSES[name](instance, **options)
    cluster, jobs = to_sim(instance, shapes)
    sim = Simulator(
        cluster,
        jobs,
        policy,
        rate_model=ElasticRate(),
        slot=1.0,
        load_time=policy.load_time,
        record_log=False,
    )
    res = sim.run()
    frame = res.jobs_frame()
    completions = {jid: float(c) for jid, c in zip(frame["job_id"], frame["completion"], strict=True)}
    preemptions = int(frame["n_preemptions"].sum()) if "n_preemptions" in frame else 0
    back = {v: k for k, v in sim_resource_names(instance).items()}
    segments = [
        {
            "job": row.job_id,
            "start": float(row.start),
            "end": float(row.end),
            "use": {int(h): {back[r]: float(a) for r, a in vec.items()} for h, vec in (row.usage or {}).items()},
        }
        for row in res.segments().itertuples(index=False)
    ]
    obj = float(sum(j.weight * completions[j.id] for j in instance.jobs))
    sched = None
    if name in NON_PREEMPTIVE:
        out = {}
        for jid, t, sh, workers, ps in policy.starts:
            out[jid] = _assignment(t, sh, workers, ps)
        sched = ElasticSchedule({j.id: out[j.id] for j in instance.jobs})
        recomputed = evaluate_objective(instance, sched, OBJECTIVE)
        if not math.isclose(recomputed, obj, rel_tol=1e-9, abs_tol=1e-9):  # pragma: no cover - a bug
            raise InternalError(
                f"elastic-{name}: the simulator's completions give {obj} but the schedule gives {recomputed}."
            )
    jct = [completions[j.id] - j.arrival for j in instance.jobs]
    info: dict[str, Any] = {
        "completions": completions,
        "preemptions": preemptions,
        "mean_jct": float(np.mean(jct)) if jct else 0.0,
        "makespan": max(completions.values(), default=0.0),
        "late_jobs": [j.id for j in instance.jobs if completions[j.id] > instance.horizon + 1e-9],
        "segments": segments,
        "starts": [
            {"job": jid, "slot": t, "m": sh.m, "p": sh.p, "q": sh.q, "n": sh.n, "d": sh.d, "workers": w, "ps": p}
            for jid, t, sh, w, p in policy.starts
        ],
        "params": params,
    }
    if name == "antman":
        info["demotions"] = policy.demotions
    return Result(
        algorithm=f"{KIND}-{name}",
        instance=instance.name,
        objective=obj,
        objective_name=OBJECTIVE,
        schedule=sched,
        status=Status.HEURISTIC,
        runtime=time.perf_counter() - t0,
        info=info,
    )


def _assignment(t: float, sh: Shape, workers: dict[int, int], ps: dict[int, int]) -> Assignment:
    return Assignment(start=int(round(t)), d=int(sh.d), m=sh.m, p=sh.p, q=sh.q, workers=dict(workers), ps=dict(ps))


@requires_kind(KIND)
def fifo(instance: ElasticInstance, *, seed: Any = None, workers: tuple[int, int] = (1, 30)) -> Result:
    """FIFO baseline of Sec. 7 on the simulator (:func:`run_baseline` with ``"fifo"``).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> fifo(toy_instance(), seed=1).objective
    30.0
    """
    return run_baseline(instance, "fifo", seed=seed, workers=workers)


@requires_kind(KIND)
def drf(instance: ElasticInstance, *, seed: Any = None) -> Result:
    """DRF baseline of Sec. 7 on the simulator (:func:`run_baseline` with ``"drf"``).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> drf(toy_instance()).objective
    30.0
    """
    return run_baseline(instance, "drf", seed=seed)


# -- Jain et al.'s greedy for (7)/(8) ---------------------------------------------------------------
def jain_greedy(instance: ElasticInstance, jobs: list[int] | None = None, *, tau: int) -> MaxWeightRun:
    """Jain et al.'s greedy [44] for the max-weight problem (7)/(8) (Fig. 8's comparison).

    Jobs (indices ``jobs``, default all) in order of value density w_j / least total use
    (:func:`~optsched.elastic.shapes.least_total_use`, largest first, ties by index); each takes,
    among its shapes (m, p, q, useful N) placed by :func:`~optsched.elastic.shapes.find_placement`
    in the least residual capacity over [t, t + d), the one with the latest start t in
    [0, tau - d] (ties: least total use d * sum f, then least d), or is left out. Arrivals are
    ignored, as in (7)/(8).

    Returns
    -------
    MaxWeightRun
        ``chosen[j]`` a :class:`~optsched.elastic.prices.Priced` with cost 0 (no prices),
        ``weights``, ``utility[j]`` = the value density of j, ``lam`` = nan, ``prices`` None: its
        ``.weight`` and ``.chosen`` compare with :func:`~optsched.elastic.primal_dual.a_maxweight`'s.

    Notes
    -----
    For each job and shape, starts are tried from tau - d down to the best start found so far, each
    a placement search (O(N H R)); no enumeration of Gamma_j.

    References
    ----------
    N. Jain, I. Menache, J. S. Naor, J. Yaniv, "Near-optimal scheduling mechanisms for
    deadline-sensitive jobs in large computing clusters", ACM TOPC 2(1), 2015 (ref. [44] of paper
    001); ``formulations/elastic.md#baselines``.

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> run = jain_greedy(toy_instance(), tau=16)
    >>> sorted(run.chosen), run.weight, run.chosen[0].start
    ([0, 1], 2.0, 6)
    """
    from numpy.lib.stride_tricks import sliding_window_view

    if isinstance(tau, bool) or not isinstance(tau, (int, np.integer)) or tau < 1:
        raise InvalidOptionError(f"The 'tau' option must be an integer >= 1 (slots); got {tau!r}.")
    tau = int(tau)
    idx = list(range(instance.n_jobs)) if jobs is None else [int(j) for j in jobs]
    density = {j: instance.jobs[j].weight / max(least_total_use(instance, j), 1e-300) for j in idx}
    order = sorted(idx, key=lambda j: (-density[j], j))
    C = np.asarray(instance.C, dtype=float)
    residual = np.broadcast_to(C[None], (tau, instance.H, instance.R)).copy()
    run = MaxWeightRun(
        tau=tau, lam=math.nan, weights={j: instance.jobs[j].weight for j in range(instance.n_jobs)}, prices=None
    )
    for j in order:
        run.utility[j] = density[j]
        wmin: dict[int, np.ndarray] = {}
        best = None  # (start, -total use, -d, shape, placement)
        for sh in sorted(candidate_shapes(instance, j), key=lambda s: s.d):  # short first: late starts early
            if sh.d > tau:
                continue
            if sh.d not in wmin:  # the least residual over each window [t, t + d): (tau - d + 1, H, R)
                wmin[sh.d] = sliding_window_view(residual, sh.d, axis=0).min(axis=-1)
            lo = best[0] if best is not None else 0
            for t in range(tau - sh.d, lo - 1, -1):
                got = find_placement(instance, sh, wmin[sh.d][t])
                if got is None:
                    continue
                use = sh.d * float(placement_use(instance, sh, *got).sum())
                key = (t, -use, -sh.d)
                if best is None or key > best[:3]:
                    best = (*key, sh, got)
                break
        if best is None:
            continue
        t, sh, got = best[0], best[3], best[4]
        cfg = shape_config(instance, j, sh, *got)
        for h, vec in cfg.use:
            residual[t : t + cfg.d, h, :] -= np.asarray(vec)[None, :]
        run.chosen[j] = Priced(0.0, cfg, t)
    return run
