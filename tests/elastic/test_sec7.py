"""The Sec. 7 generator (issue 13, item 8): ranges of every field, validity, determinism, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.elastic.generate import (
    EC2_SERVERS,
    FIG9_WORKER_TYPES,
    SEC7_RANGES,
    SEC7_RESOURCES,
    SEC7_WORKER_TYPES,
    sec7_ideal,
    sec7_instance,
)
from optsched.elastic.model import ElasticInstance
from optsched.elastic.primal_dual import weight_bound_F
from optsched.exceptions import InvalidOptionError

SLOT_MS = 3600.0 * 1000.0


def _in(x, lo, hi, tol=1e-9):
    return lo - tol <= x <= hi + tol


def check_ranges(inst: ElasticInstance) -> None:
    assert inst.slot == pytest.approx(3600.0)
    assert 100 <= inst.horizon <= 300
    assert set(inst.resources) == set(SEC7_RESOURCES)
    assert inst.resources == tuple(inst.servers[0].capacity)  # input order (issue 26)
    for t in inst.worker_types:  # 1-4 GPU, 1-16 vCPU, 0.1-5 Gbit/s; the bandwidth resource is b_m
        assert _in(t.resources["gpu"], 1, 4) and _in(t.resources["vcpu"], 1, 16)
        assert _in(t.bandwidth, 0.1, 5.0)
        assert t.resources["bandwidth"] == pytest.approx(t.bandwidth)
    for t in inst.ps_types:  # 0 GPU, 1-16 vCPU, 5-20 Gbit/s
        assert t.resources["gpu"] == pytest.approx(0.0)
        assert _in(t.resources["vcpu"], 1, 16) and _in(t.bandwidth, 5.0, 20.0)
    ec2 = [s[0] for s in EC2_SERVERS]
    for h, s in enumerate(inst.servers):
        assert s.name == ec2[h % len(ec2)]
    for j in inst.jobs:
        assert float(j.weight).is_integer() and _in(j.weight, *SEC7_RANGES["weight"])
        assert _in(j.epochs, *SEC7_RANGES["epochs"])
        assert _in(j.chunks, *SEC7_RANGES["chunks"])
        assert _in(j.minibatches, *SEC7_RANGES["minibatches"])
        assert _in(j.grad_mb, *SEC7_RANGES["grad_mb"])
        lo, hi = SEC7_RANGES["v_slot"]
        assert all(_in(v, lo * SLOT_MS, hi * SLOT_MS, 1e-3) for v in j.v)
        ups = j.update if isinstance(j.update, tuple) else (j.update,)
        assert all(_in(u, *SEC7_RANGES["update_ms"], 1e-3) for u in ups)
        assert 0 <= j.arrival <= math.floor(inst.metadata["arrival_window"] * inst.horizon)
    assert inst.F is not None and inst.F >= 1


def check_valid(inst: ElasticInstance) -> None:
    """Every job has a configuration that fits and finishes within T (the model's own check)."""
    for i, j in enumerate(inst.jobs):
        d = inst.min_duration(i)
        assert d is not None and j.arrival + d <= inst.horizon


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_jobs=st.integers(1, 6),
    n_servers=st.integers(1, 6),
    horizon=st.integers(100, 300),
    arch=st.sampled_from(["ps", "rar"]),
    seed=st.integers(0, 10**6),
)
def test_ranges_and_validity(n_jobs, n_servers, horizon, arch, seed):
    inst = sec7_instance(n_jobs, n_servers=n_servers, horizon=horizon, architecture=arch, seed=seed)
    assert (inst.n_jobs, inst.H, inst.architecture) == (n_jobs, n_servers, arch)
    assert inst.M == 8 and (10 if arch == "ps" else 0) == inst.P
    check_ranges(inst)
    check_valid(inst)
    assert 0.2 <= inst.metadata["capacity_ratio"] <= 0.5


def test_worker_types_span_the_ranges():
    g = [w[1] for w in SEC7_WORKER_TYPES]
    c = [w[2] for w in SEC7_WORKER_TYPES]
    b = [w[3] for w in SEC7_WORKER_TYPES]
    assert (min(g), max(g), min(c), max(c)) == (1, 4, 1, 16)
    assert min(b) == pytest.approx(0.1) and max(b) == pytest.approx(5.0)
    assert len({w[0] for w in SEC7_WORKER_TYPES}) == 8
    assert set(FIG9_WORKER_TYPES) <= {w[0] for w in SEC7_WORKER_TYPES}


def test_deterministic_under_a_seed():
    a = sec7_instance(5, n_servers=4, seed=7).to_dict()
    b = sec7_instance(5, n_servers=4, seed=7).to_dict()
    c = sec7_instance(5, n_servers=4, seed=8).to_dict()
    assert a == b
    assert a["jobs"] != c["jobs"]
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    assert sec7_instance(3, n_servers=3, seed=g1).to_dict() == sec7_instance(3, n_servers=3, seed=g2).to_dict()


@pytest.mark.parametrize("arch", ["ps", "rar"])
def test_capacity_ratio_is_the_one_reported(arch):
    """metadata's reached ratio = sum of capacities / the jobs' ideal demand, recomputed here; without the
    per-server floor it is the asked ratio up to rounding."""
    inst = sec7_instance(12, n_servers=5, architecture=arch, capacity_ratio=0.3, seed=2)
    demand = dict.fromkeys(SEC7_RESOURCES, 0.0)
    for j in inst.jobs:
        full = j.to_dict()
        _m, _p, _s, dem = sec7_ideal(full, arch)
        for r in SEC7_RESOURCES:
            demand[r] += dem[r]
    for r in SEC7_RESOURCES:
        total = sum(s.capacity[r] for s in inst.servers)
        assert inst.metadata["capacity_ratio_reached"][r] == pytest.approx(total / demand[r])
        # rounding moves each server by at most half a unit (0.025 Gbit/s for bandwidth)
        assert total / demand[r] == pytest.approx(0.3, rel=0.1)


def test_F_default_bounds_the_exact_F():
    """The default F (a placement-free lower bound on the least use) is >= the exact F of the model."""
    inst = sec7_instance(3, n_servers=2, seed=4)
    exact = weight_bound_F(inst.replace(F=None))
    assert exact - 1e-9 <= inst.F
    assert pytest.approx(5.0) == sec7_instance(3, n_servers=2, seed=4, F=5.0).F


def test_single_worker_type_for_fig9():
    inst = sec7_instance(4, n_servers=4, seed=1, worker_types=["p3.4xlarge*"])
    assert inst.M == 1 and inst.worker_types[0].name == "p3.4xlarge*"
    assert all(len(j.v) == 1 for j in inst.jobs)
    check_valid(inst)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"n_jobs": 0}, "n_jobs"),
        ({"n_servers": 0}, "n_servers"),
        ({"horizon": 99}, "horizon"),
        ({"horizon": 301}, "horizon"),
        ({"horizon": 150.0}, "horizon"),
        ({"architecture": "ring"}, "architecture"),
        ({"F": 0.5}, "F"),
        ({"capacity_ratio": 0.6}, "capacity_ratio"),
        ({"capacity_ratio": 0.1}, "capacity_ratio"),
        ({"arrival_window": -0.1}, "arrival_window"),
        ({"arrival_window": 1.5}, "arrival_window"),
        ({"worker_types": ["p3.4xlarge"]}, "worker_types"),
        ({"worker_types": []}, "worker_types"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_input_names_field_value_and_fix(kw, field):
    args = {"n_jobs": 2, **kw}
    n = args.pop("n_jobs")
    with pytest.raises(InvalidOptionError) as e:
        sec7_instance(n, n_servers=args.pop("n_servers", 2), **args)
    msg = str(e.value)
    assert f"'{field}'" in msg
    assert repr(kw[field]) in msg or str(kw[field]) in msg
    assert "must be" in msg


def test_congested_arrivals_put_every_job_at_slot_0():
    """arrival_window=0: every job arrives at slot 0 (the congested variant of the reproduction)."""
    inst = sec7_instance(6, n_servers=4, arrival_window=0, seed=3)
    assert [j.arrival for j in inst.jobs] == [0] * 6 and inst.metadata["arrival_window"] == 0.0
