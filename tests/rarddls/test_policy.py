"""ContentionRate on the shared simulator: continuous <= slotted for the same decisions, and the two
agree as tau_j shrinks relative to the slot."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.rarddls import RarJob, replay, toy_instance
from optsched.rarddls.formulation import patterns
from optsched.rarddls.policy import simulate_decisions
from tests.rarddls.strategies import small_instances, what_if_replay


def _decisions(instance, data):
    n = instance.n_jobs
    starts = [data.draw(st.integers(0, 4)) for _ in range(n)]
    pls = [{s: y for s, y in enumerate(data.draw(st.sampled_from(patterns(instance, j)))) if y > 0} for j in range(n)]
    return starts, pls


def _refine(instance, K):
    """K times more iterations, each K times shorter: continuous completions unchanged."""
    jobs = tuple(RarJob(j.id, j.gpus, j.iterations * K, j.grad_size, j.compute / K, j.rho_hat) for j in instance.jobs)
    return instance.replace(
        jobs=jobs, b_e=instance.b_e * K, b_i=instance.b_i * K, C=instance.C * K, xi2=instance.xi2 / K
    )


def _no_overlap_conflict(instance, starts, pls, comp):
    from optsched.rarddls.exact import _feasible

    return _feasible(instance, starts, [tuple(p.get(s, 0) for s in range(len(instance.O))) for p in pls], comp)


@settings(max_examples=30)
@given(small_instances(max_jobs=3), st.data())
def test_continuous_never_later_than_slotted(instance, data):
    starts, pls = _decisions(instance, data)
    slotted = what_if_replay(instance, starts, pls)
    if not _no_overlap_conflict(instance, starts, pls, slotted):
        return  # the simulator refuses over-capacity starts (replay too, unless validate=False)
    cont = simulate_decisions(instance, starts, pls)
    for c, s in zip(cont, slotted, strict=True):
        assert c <= s + 1e-9


def test_refinement_converges():
    inst = toy_instance()
    starts, pls = [0, 2, 30], [{0: 1, 1: 1}, {0: 1, 1: 1}, {0: 1}]
    gaps = []
    for K in (1, 10, 100):
        ref = _refine(inst, K)
        cont = simulate_decisions(ref, starts, pls)
        slot = replay(ref, starts, pls).completion
        gaps.append(max(s - c for s, c in zip(slot, cont, strict=True)))
    cont1 = simulate_decisions(inst, starts, pls)
    assert simulate_decisions(_refine(inst, 100), starts, pls) == __import__("pytest").approx(cont1, rel=1e-9)
    assert all(g >= -1e-9 for g in gaps)
    # what is left is the rounding of each completion up to the end of its slot (< 1 slot, or exactly 1 when
    # the continuous completion falls on a slot boundary and the floor costs a sliver more)
    assert gaps[-1] <= gaps[0] and gaps[-1] <= 1.0 + 1e-9 < gaps[0]
