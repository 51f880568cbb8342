"""bounds.py: the pairwise lower bound and Eq. (22)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from optsched.sojourn.bounds import alpha_limit_closed_form, pairwise_lower_bound, thm_III_2_holds
from optsched.sojourn.dp import subset_dp
from optsched.sojourn.evaluate import pair_costs
from optsched.sojourn.model import SojournInstance, StagedJob
from optsched.sojourn.policies import sr

from .strategies import instances


@settings(max_examples=30)
@given(instances(max_jobs=7))
def test_pairwise_lower_bound_below_optimum_and_every_policy(inst):
    pc = pair_costs(inst)
    lb = pairwise_lower_bound(pc)
    opt, order = subset_dp(pc)
    assert lb <= opt + 1e-9 * max(1, opt)
    assert lb <= sr(inst, pc=pc).objective + 1e-9 * max(1, opt)
    assert thm_III_2_holds(inst, [inst.jobs[k].id for k in order], pc)


@pytest.mark.parametrize("n", [3, 6, 12])
def test_eq_22_equals_alpha_when_all_other_jobs_alike(n):
    inst = SojournInstance(tuple(StagedJob(k, [1, 2], [1 / 3, 2 / 3]) for k in range(n)))
    assert pair_costs(inst).alpha[0, 1] == pytest.approx(alpha_limit_closed_form(2.0, n), rel=1e-12)
    assert alpha_limit_closed_form(2.0, 400) > 0.99
