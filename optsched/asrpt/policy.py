"""A-SRPT (Algorithm 1) and the paper's baselines run on the shared simulator: :func:`simulate_asrpt`
builds the jobs and the rate model from an :class:`~optsched.asrpt.model.AsrptInstance` and runs a
policy; :func:`empirical_ratio` sets A-SRPT's total completion time beside Lemma 2's and Theorem 1's
bounds. The policies are in :mod:`optsched.asrpt.online`, the jobs and their rate in
:mod:`optsched.asrpt.rate`; both are importable from here. Tested in ``tests/asrpt/test_policy.py``
and ``tests/asrpt/test_slots.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from optsched.asrpt.bounds import check_bounds
from optsched.asrpt.model import KIND, AsrptInstance
from optsched.asrpt.online import ASRPT, BASELINE_OPTIONS, BASELINES, OrderedPolicy
from optsched.asrpt.rate import HeavyEdgeRate, sim_jobs
from optsched.core.registry import check_kind
from optsched.core.result import Result, Status
from optsched.sim import Simulator
from optsched.sim.registry import forwards_options


def simulate_asrpt(instance: AsrptInstance, policy=None, *, seed=0, **policy_options):
    """Run ``policy`` (default :class:`ASRPT` with ``policy_options``) on ``instance`` in the shared
    simulator, with the policy's :class:`HeavyEdgeRate` as the rate model.

    Returns
    -------
    optsched.sim.SimResult
        ``res.schedule()`` is a core Schedule that :func:`optsched.verify.verify` checks against the
        instance (durations >= n_i alpha for the counts, capacity, release, ...).

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> res = simulate_asrpt(toy_instance(), tau=1.0)
    >>> round(res.summary()["total_completion_time"], 3)
    31.9
    """
    if policy is None:
        policy = ASRPT(seed=seed, **policy_options)
    rm = getattr(policy, "rate_model", None) or HeavyEdgeRate(seed=seed)
    return Simulator(instance.cluster, sim_jobs(instance), policy, rate_model=rm, seed=seed).run()


def empirical_ratio(instance: AsrptInstance, opt_a: float, *, tau: float = 1.0, slotted: bool = True, seed=0) -> dict:
    """Gamma_A / OPT_A beside Lemma 2's and Theorem 1's bounds.

    Note: with ``slotted=True`` a job waits for the next slot boundary after its virtual completion,
    which the paper's Lemma 2 does not account for (formulations/asrpt.md#findings, item 5)."""
    res = simulate_asrpt(instance, tau=tau, slotted=slotted, seed=seed)
    gamma = float(res.summary()["total_completion_time"])
    rows = {r.name: r for r in check_bounds(instance, opt_a=opt_a, gamma_a=gamma, tau=tau)}
    return {
        "gamma_a": gamma,
        "opt_a": opt_a,
        "ratio": gamma / opt_a,
        "theorem_1_bound": rows["theorem_1"].rhs,
        "lemma_2_rhs": rows["lemma_2"].rhs,
        "lemma_2_holds": rows["lemma_2"].holds,
        "theorem_1_holds": rows["theorem_1"].holds,
        "lemma_2_corrected_rhs": rows["lemma_2_corrected"].rhs,
        "lemma_2_corrected_holds": rows["lemma_2_corrected"].holds,
        "theorem_1_corrected_holds": rows["theorem_1_corrected"].holds,
        "result": res,
    }


def _result(instance, name, res, t0, params):
    sched = res.schedule()
    obj = float(sum(sched.completion(j.id) for j in instance.jobs))
    return Result(
        algorithm=name,
        instance=instance.name,
        objective=obj,
        objective_name="total_completion_time",
        schedule=sched,
        status=Status.HEURISTIC,
        runtime=time.perf_counter() - t0,
        info={"summary": res.summary(), "params": params},
    )


#: Registry name of each baseline (``Result.algorithm``) -> the paper's name (BASELINES' keys).
BASELINE_NAMES = {f"asrpt-{name.lower()}": name for name in BASELINE_OPTIONS}


def run_asrpt(instance, *, tau: float = 1.0, predictions=None, seed=None):
    """A-SRPT (Algorithm 1) on the shared simulator; objective = total completion time (s).

    ``Result.algorithm`` is ``"asrpt-a-srpt"``; ``tau`` is in ``info["params"]``."""
    check_kind(instance, KIND, "asrpt-a-srpt")
    t0 = time.perf_counter()
    res = simulate_asrpt(instance, tau=tau, predictions=predictions, seed=0 if seed is None else seed)
    return _result(instance, "asrpt-a-srpt", res, t0, {"tau": float(tau)})


def baseline_algorithm(algo: str, name: str) -> Callable[..., Result]:
    """The algorithm registered as ``algo``: the paper's baseline ``name`` (a key of
    :data:`BASELINE_OPTIONS`) run on the shared simulator, as a :class:`~optsched.core.Result`."""

    def run(instance, *, predictions=None, seed=None):
        check_kind(instance, KIND, algo)
        t0 = time.perf_counter()
        pol = BASELINES(predictions=predictions, seed=0 if seed is None else seed)[name]
        return _result(instance, algo, simulate_asrpt(instance, pol), t0, {"baseline": name, **BASELINE_OPTIONS[name]})

    run.__doc__ = f"Baseline {name} of the A-SRPT paper (Heavy-Edge mapping) on the shared simulator."
    return run


def baseline_policy(name: str) -> Callable[..., OrderedPolicy]:
    """The simulator policy factory of the paper's baseline ``name`` (options only; it runs on
    ``sim_jobs(instance)``)."""

    @forwards_options(OrderedPolicy, set_here=("instance", "name", *BASELINE_OPTIONS[name]))
    def build(**options):
        return OrderedPolicy(name=name, **BASELINE_OPTIONS[name], **options)

    build.__doc__ = f"Baseline {name} of the A-SRPT paper (Heavy-Edge mapping), on sim_jobs(instance)."
    return build
