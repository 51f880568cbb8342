"""Re-checking the paper's lemmas on many generated instances (formulations/asrpt.md#findings).

* :func:`lemma_sweep`: Lemma 2 / Theorem 1 (printed and corrected) for slotted and continuous-time
  A-SRPT against the proven optimum OPT_A of Problem (8), under both slot conventions
  (``first_slot`` 1 = the paper's [T] = {1..T}, 0 = {0..T}).
* :func:`lemma2_gap_case` / :func:`lemma2_search`: instances on which the printed Lemma 2 fails through
  Lemma 1's gap (Heavy-Edge suboptimal), with OPT_A *proven* without a solver: when every job can run
  from its earliest slot in its best placement at the same time, OPT_A = sum_i (t^min_i slot + n_i alpha^min_i),
  which is also a lower bound on OPT_A for every instance.

Tested in ``tests/asrpt/test_lemma2.py`` and ``tests/asrpt/test_slots.py``.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from optsched.asrpt.bounds import bound_inputs, lemma2_corrected_rhs, lemma2_rhs
from optsched.asrpt.exact import solve_exact
from optsched.asrpt.formulation import arrival_slot
from optsched.asrpt.generate import random_instance
from optsched.asrpt.heavy_edge import heavy_edge, min_server_availability, placement_counts
from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
from optsched.asrpt.placement import alpha_min_exact, availability_patterns, enumerate_placement, solve_placement
from optsched.asrpt.policy import empirical_ratio, simulate_asrpt
from optsched.asrpt.profiles import PROFILES
from optsched.asrpt.timing import alpha, check_reading
from optsched.core.cluster import Cluster
from optsched.core.result import Status
from optsched.exceptions import ModelTooLargeError
from optsched.solvers import SolveOptions


def lemma_sweep(
    n_cases: int,
    *,
    first_slot: int = 1,
    seed: int = 0,
    taus=(0.0, 0.5, 2.0),
    max_jobs: int = 5,
    n_servers: int = 2,
    gpus: int = 2,
    time_limit: float = 30.0,
) -> list[dict]:
    """One row per generated instance: Gamma_A (slotted and continuous), OPT_A (proven), and whether
    the printed / corrected Lemma 2 and Theorem 1 hold. Instances: ``random_instance`` with 1..max_jobs
    jobs, 30 % single-GPU, jobs of ~2 slots (the setting of finding 5); tau cycles through ``taus``.
    Instances whose optimum is not proven within ``time_limit`` are skipped (``status`` column)."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_cases):
        s = int(rng.integers(0, 10**6))
        n = int(rng.integers(1, max_jobs + 1))
        tau = float(taus[c % len(taus)])
        inst = random_instance(
            n, n_servers=n_servers, gpus_per_server=gpus, seed=s, single_gpu=0.3, mean_slots=2.0, arrival_rate=1.0
        ).with_first_slot(first_slot)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ex = solve_exact(inst, options=SolveOptions(threads=1, time_limit=time_limit))
        row = {"seed": s, "n_jobs": n, "tau": tau, "first_slot": first_slot, "status": ex.status.value}
        if not ex.optimal:
            rows.append(row)
            continue
        b = bound_inputs(inst)
        row.update(opt_a=ex.objective, rho=b.rho, kappa=b.kappa, rho_hat=b.rho_hat)
        for mode, slotted in (("slotted", True), ("continuous", False)):
            out = empirical_ratio(inst, ex.objective, tau=tau, slotted=slotted)
            row[f"gamma_{mode}"] = out["gamma_a"]
            row[f"lemma2_{mode}"] = out["lemma_2_holds"]
            row[f"lemma2c_{mode}"] = out["lemma_2_corrected_holds"]
            row[f"theorem1_{mode}"] = out["theorem_1_holds"]
            row[f"theorem1c_{mode}"] = out["theorem_1_corrected_holds"]
        rows.append(row)
    return rows


def opt_a_lower_bound(instance: AsrptInstance) -> float:
    """sum_i (t^min_i slot + n_i alpha^min_i) <= OPT_A (each job starts no earlier than its first slot and
    runs at least n_i alpha^min_i)."""
    return float(
        sum(
            arrival_slot(j, instance) * instance.slot + j.iterations * alpha_min_exact(j, instance)
            for j in instance.jobs
        )
    )


def opt_a_if_all_fit(instance: AsrptInstance) -> float | None:
    """OPT_A when it equals :func:`opt_a_lower_bound`: if the exact-minimum placements of all jobs, each
    on its own empty servers, fit the cluster side by side (sum_i servers_i <= M), every job can run from
    its earliest slot at alpha^min_i, so the lower bound is attained. None when that test does not apply."""
    need = 0
    for j in instance.jobs:
        free = [instance.g] * min(instance.M, j.gpus)
        try:
            r = enumerate_placement(j, free, instance=instance, limit=50_000)
        except ModelTooLargeError:
            r = solve_placement(j, free, instance=instance)
            if r.status != Status.OPTIMAL:
                return None
        need += int(np.count_nonzero(np.asarray(r.x).sum(axis=0)))
    return opt_a_lower_bound(instance) if need <= instance.M else None


def lemma2_gap_job(job_id=0, *, iterations: int = 10, arrival: float = 0.0) -> AsrptJob:
    """The job of the Lemma 1 counterexample (two stages x two replicas, heavy AllReduce in stage 0):
    on 2-GPU servers Heavy-Edge gives alpha~min = 4.0001 s, the exact minimum is 3.2005 s, alpha^max = 4.2 s."""
    return AsrptJob(
        job_id,
        [Stage(k=2, p_f=0.4, p_b=0.6, d_out=5e8, h=6e8), Stage(k=2, p_f=0.8, p_b=1.2, d_in=5e8, h=1e8)],
        iterations=iterations,
        arrival=arrival,
    )


def lemma2_gap_case(
    n_servers: int, n_jobs: int = 1, *, iterations: int = 10, spacing: float = 0.0, slot: float = 1.0
) -> AsrptInstance:
    """``n_jobs`` copies of :func:`lemma2_gap_job` (perfect predictions) arriving ``spacing`` s apart on
    ``n_servers`` x 2 GPUs with B_inter = 1 GB/s, B_intra = 1 TB/s (the counterexample's cluster)."""
    cl = Cluster.homogeneous(n_servers, 2, bandwidth_inter=1e9, bandwidth_intra=1e12)
    jobs = [lemma2_gap_job(i, iterations=iterations, arrival=float(i * spacing)) for i in range(n_jobs)]
    return AsrptInstance(cl, jobs, name=f"lemma2-gap-{n_jobs}x{n_servers}x2", slot=slot)


def lemma2_search(cases, *, tau: float = 0.0) -> list[dict]:
    """Evaluate Lemma 2 (printed and corrected) on each instance of ``cases`` whose OPT_A is proven by
    :func:`opt_a_if_all_fit`; slotted A-SRPT, perfect predictions unless the jobs say otherwise."""
    rows = []
    for inst in cases:
        opt = opt_a_if_all_fit(inst)
        if opt is None:
            continue
        b = bound_inputs(inst)
        gamma = float(simulate_asrpt(inst, tau=tau).summary()["total_completion_time"])
        r2, r2c = lemma2_rhs(b, opt, tau=tau), lemma2_corrected_rhs(b, opt, tau=tau)
        rows.append(
            {
                "instance": inst.name,
                "I": inst.n_jobs,
                "M": inst.M,
                "g": inst.g,
                "G": inst.G,
                "gamma_a": gamma,
                "opt_a": opt,
                "rho": b.rho,
                "kappa": b.kappa,
                "rho_hat": b.rho_hat,
                "lemma2_rhs": r2,
                "lemma2_holds": gamma <= r2 * (1 + 1e-9),
                "lemma2_corrected_rhs": r2c,
                "lemma2_corrected_holds": gamma <= r2c * (1 + 1e-9),
            }
        )
    return rows


def random_gap_jobs(
    n_trials: int, *, seed=1, g_choices=(2, 4), extra_servers: int = 30, iterations: int = 100
) -> list[dict]:
    """The search that found ``instances/papers/asrpt/lemma2-counterexample.json``.

    ``n_trials`` random jobs (1-3 stages of 1-3 replicas, activations and parameters of 0, 10, 50 or 500 MB,
    B_inter = 1 GB/s, B_intra = 1 TB/s); for each job with kappa > rho (Heavy-Edge suboptimal beyond rho),
    grow the cluster from ceil(g_i/g) + 1 servers until the printed Lemma 2 fails for slotted A-SRPT
    (tau = 0, perfect prediction, OPT_A proven by :func:`opt_a_if_all_fit`). One row per such job: the
    first failing size, or the largest size tried."""
    rng = np.random.default_rng(seed)
    rows = []
    for trial in range(n_trials):
        g = int(rng.choice(list(g_choices)))
        S = int(rng.integers(1, 4))
        ks = [int(rng.integers(1, 4)) for _ in range(S)]
        if sum(ks) < 2:
            continue
        acts = [float(rng.choice([0, 1, 5, 50])) * 1e7 for _ in range(S - 1)]
        st = [
            Stage(
                k=k,
                p_f=float(rng.uniform(0.1, 1)),
                p_b=float(rng.uniform(0.1, 1)),
                d_in=acts[s - 1] / k if s else 0.0,
                d_out=acts[s] / k if s + 1 < S else 0.0,
                h=float(rng.choice([0, 1, 5, 50])) * 1e7,
            )
            for s, k in enumerate(ks)
        ]
        job = AsrptJob(0, st, iterations=iterations)
        m0 = math.ceil(job.gpus / g) + 1

        def make(M, job=job, g=g, trial=trial):
            cl = Cluster.homogeneous(M, g, bandwidth_inter=1e9, bandwidth_intra=1e12)
            return AsrptInstance(cl, [job], slot=1.0, name=f"gap-trial{trial}-{M}x{g}")

        b = bound_inputs(make(m0))
        if b.kappa <= b.rho * 1.0001:
            continue
        last = None
        for M in range(m0, m0 + extra_servers):
            r = lemma2_search([make(M)])
            if not r:
                continue
            last = dict(r[0], trial=trial, stages=ks)
            if not last["lemma2_holds"]:
                break
        if last is not None:
            rows.append(last)
    return rows


def table2_readings(
    *,
    n_patterns: int = 20,
    seed: int = 0,
    readings=("nic-share", "ring-boundary"),
    gpus: int = 8,
    b_inter: float = 10e9 / 8,
    b_intra: float = 300e9,
) -> list[dict]:
    """Table II (Heavy-Edge vs exact placement, VGG19-like and GPT-like profiles, ``n_patterns`` GPU
    availabilities of :func:`optsched.asrpt.placement.availability_patterns`) under each reading of eq. (6).

    One row per (reading, model, pattern): Heavy-Edge's PITT, the exact MILP's PITT (cross-checked by
    enumeration: ``enum_pitt_ms``) and both computation times (ms)."""

    rows = []
    kw = dict(g=gpus, b_inter=b_inter, b_intra=b_intra)
    for reading in readings:
        check_reading(reading)
        for name, make in PROFILES.items():
            job = make()
            for idx, free in enumerate(availability_patterns(job.gpus, gpus, n_patterns, seed=seed)):
                t0 = time.perf_counter()
                mp = heavy_edge(job, free, seed=seed)
                t_he = time.perf_counter() - t0
                a_he = alpha(job, placement_counts(job, mp, len(free)), reading=reading, **kw)
                ex = solve_placement(
                    job, free, exact_usage=True, reading=reading, options=SolveOptions(time_limit=60, threads=1), **kw
                )
                en = enumerate_placement(job, free, exact_usage=True, reading=reading, **kw)
                rows.append(
                    {
                        "reading": reading,
                        "model": name,
                        "pattern": idx,
                        "free": free,
                        "he_pitt_ms": 1e3 * a_he,
                        "he_pct_ms": 1e3 * t_he,
                        "ilp_pitt_ms": 1e3 * ex.alpha,
                        "ilp_pct_ms": 1e3 * ex.runtime,
                        "ilp_status": ex.status.value,
                        "enum_pitt_ms": 1e3 * en.alpha,
                    }
                )
    return rows


def table2_summary(rows: list[dict]):
    """Per (reading, model): mean PITT of Heavy-Edge and of the exact placement, their ratio, how often
    Heavy-Edge is optimal, mean computation times."""
    import pandas as pd

    df = pd.DataFrame(rows)
    df["he_optimal"] = np.isclose(df.he_pitt_ms, df.ilp_pitt_ms, rtol=1e-9)
    agg = df.groupby(["reading", "model"]).agg(
        he_pitt_ms=("he_pitt_ms", "mean"),
        ilp_pitt_ms=("ilp_pitt_ms", "mean"),
        he_optimal=("he_optimal", "sum"),
        cases=("he_optimal", "size"),
        he_pct_ms=("he_pct_ms", "mean"),
        ilp_pct_ms=("ilp_pct_ms", "mean"),
    )
    agg["he_over_ilp"] = agg.he_pitt_ms / agg.ilp_pitt_ms
    return agg


def reading_changes(n_jobs: int = 200, *, seed: int = 0, n_servers: int = 3, gpus: int = 4) -> dict:
    """How often the second reading of eq. (6) changes the exact minimum alpha^min of a random job
    (jobs of :func:`optsched.asrpt.generate.random_instance`, multi-GPU only, on ``n_servers`` x ``gpus``
    servers with the GPUs per server fixed to the fewest servers, as for alpha~min)."""
    inst = random_instance(
        n_jobs, n_servers=n_servers, gpus_per_server=gpus, seed=seed, single_gpu=0.0, max_stages=3, max_replicas=3
    )
    changed, rows = 0, []
    for j in inst.jobs:
        free = min_server_availability(j, gpus)
        a = [
            enumerate_placement(j, free, instance=inst, exact_usage=True, reading=r).alpha
            for r in ("nic-share", "ring-boundary")
        ]
        rows.append(a)
        changed += not math.isclose(a[0], a[1], rel_tol=1e-9)
    arr = np.array(rows)
    return {
        "jobs": n_jobs,
        "changed": int(changed),
        "mean_ratio": float(np.mean(arr[:, 1] / arr[:, 0])),
        "min_ratio": float(np.min(arr[:, 1] / arr[:, 0])),
    }
