"""Demo rows for paper 001: A_online (and the greedy baseline) vs exact (2); A_maxweight vs exact (8)
with its Thm 3 certificate (D / P beside 2 log2 lambda) in the extra columns.

Tested in ``tests/experiments/test_demo.py``.
"""

from __future__ import annotations

import time

from optsched.core.result import Result, Status
from optsched.elastic import toy_instance
from optsched.elastic.bounds import certificate
from optsched.elastic.checks import violations
from optsched.elastic.exact import greedy, solve_exact, solve_maxweight
from optsched.elastic.generate import random_instance
from optsched.elastic.primal_dual import a_maxweight, a_online
from optsched.elastic.schedule import ElasticSchedule
from optsched.solvers import SolveOptions
from optsched.verify import verify_result
from optsched.verify.rows import exact_vs_algorithm_rows


def demo_instances(quick: bool = False):
    """(instances for A_online vs (2), instances for A_maxweight vs (8)).

    A_online is not bounded by the horizon T of (2): its rounds start at alpha tau_i with alpha in the
    tens, so its instances need a T that holds its whole schedule (Sec. 3.1's "large time span"; the
    "T and A_online" reading in ``formulations/elastic.md#pricing``). Here: the toy (T = 400, A_online's
    last completion 266) and a 3-job instance with T = 300 (last completion 194; 366 with the former round window,
    when a round waited for the earlier rounds' reserved windows, see "A_online rounds").
    ``tests/experiments/test_demo.py`` runs the full demo and requires every row verified."""
    online = [toy_instance()]
    maxw = [toy_instance(), random_instance(4, n_servers=2, seed=1)]
    if not quick:
        online.append(random_instance(3, n_servers=2, seed=1, horizon=300))
        maxw += [random_instance(6, n_servers=3, seed=2), random_instance(5, n_servers=2, architecture="rar", seed=3)]
    return online, maxw


def maxweight_result(instance, *, tau: int):
    """A_maxweight as a :class:`~optsched.core.result.Result` (objective: scheduled weight) with its
    certificate in ``info``."""

    t0 = time.perf_counter()
    run = a_maxweight(instance, tau=tau)
    sched = ElasticSchedule({instance.jobs[j].id: c.config.assignment(c.start) for j, c in run.chosen.items()})
    cert = certificate(instance, run)
    return Result(
        algorithm="elastic-maxweight",
        instance=instance.name,
        objective=cert["P"],
        objective_name="scheduled_weight",
        schedule=sched,
        status=Status.HEURISTIC,
        runtime=time.perf_counter() - t0,
        info={"certificate": cert, "tau": tau},
    )


def demo_rows(quick: bool = False) -> list[dict]:
    """One row per (instance, algorithm), each schedule verified independently."""
    opts = SolveOptions(time_limit=10 if quick else 60, threads=1)
    rows = []
    online, maxw = demo_instances(quick)
    for inst in online:
        exact = [solve_exact(inst, options=opts)]
        compact = a_online(inst, placement="compact")
        compact.algorithm = "elastic-online[compact]"
        rows += exact_vs_algorithm_rows(inst, exact, [a_online(inst), compact, greedy(inst)], verify_result)

    class _V:
        def __init__(self, found):
            self.violations = found
            self.ok = not found

    for inst in maxw:
        tau = 16 if inst.name == "elastic-intro" else max(2, inst.horizon // 2)
        mw = [solve_maxweight(inst, tau=tau, options=opts)]

        def ver(i, r, tau=tau):
            return _V(violations(i, r.schedule, require_all=False, tau=tau, arrivals=False))

        alg = maxweight_result(inst, tau=tau)
        new = exact_vs_algorithm_rows(inst, mw, [alg], ver)
        c = alg.info["certificate"]
        for r in new:
            r["tau"] = tau
            if r["algorithm"] == "elastic-maxweight":
                r["D_over_P"] = c["D_over_P"]
                r["two_log2_lambda"] = c["two_log2_lambda"]
                r["assumptions_hold"] = c["assumptions_hold"]
        rows += new
    return rows
