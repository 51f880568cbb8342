"""The compiled kernel under the papers' overheads, against the Python engine and the reference.

The same hypothesis workloads as ``test_differential.py`` (integer arrivals, works, load and save
times, one server of 1-4 GPUs or two servers with jobs that may span them, multi-GPU jobs, bursts
of short jobs arriving together: ties and events at the same instant), each job carrying its own
load and save seconds (``Job(load_time=, save_time=)``, which the kernel covers). Per workload:

- the kernel (``engine="compiled"``) against the Python engine: every column of the job table, the
  event count, the end time, GPUs in use over time, the segments and the event log
  (``test_kernel.assert_same``);
- the kernel against the independent reference simulator ``reference_sim.py`` (written from
  ``formulations/lazer.md`` alone): per job W, L, T, P, completion, first start, preemptions,
  futile preemptions and futile time.

Families: FIFO/SJF (backfill on and off), SRTF (``reserve`` best and preemptor, ``preempt_loading``
abort and finish), periodic SRTF (period 1-6, both modes), LAS (quantum 1-5, both modes; the
reference has no LAS, so the Python engine alone is its reference) and Lazer (a fixed deferral X of
0-12 s, ``secured`` all and released, both ``preempt_loading`` modes: deferral timers, victims held
in DRQ, pending preemptors and the completion handler of reading 4; the reference has
``secured="all"`` only, and the kernel matches the Python engine bit for bit in the job table).
Default run: 60 workloads per family (derandomized); ``-m slow``: 2,500 per family.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.core.cluster import Server
from optsched.lazer import Lazer
from optsched.sim import LAS, SRTF, PeriodicSRTF, Simulator, get_policy

from .test_differential import FIELDS, _bound, _describe, reference_results, workloads
from .test_kernel import assert_same

pytest.importorskip("numba")

N_DEFAULT, N_SLOW = 60, 2500
_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None)

FAMILIES = {
    "fifo-sjf": lambda: st.fixed_dictionaries({"family": st.sampled_from(["fifo", "sjf"]), "backfill": st.booleans()}),
    "srtf": lambda: st.fixed_dictionaries(
        {
            "family": st.just("srtf"),
            "reserve": st.sampled_from(["best", "preemptor"]),
            "preempt_loading": st.sampled_from(["abort", "finish"]),
        }
    ),
    "srtf-periodic": lambda: st.fixed_dictionaries(
        {
            "family": st.just("srtf-periodic"),
            "reserve": st.sampled_from(["best", "preemptor"]),
            "preempt_loading": st.sampled_from(["abort", "finish"]),
            "period": st.integers(1, 6),
        }
    ),
    "lazer": lambda: st.fixed_dictionaries(
        {
            "family": st.just("lazer"),
            "deferral": st.integers(0, 12),
            "secured": st.sampled_from(["all", "released"]),
            "preempt_loading": st.sampled_from(["abort", "finish"]),
        }
    ),
    "las": lambda: st.fixed_dictionaries(
        {
            "family": st.just("las"),
            "reserve": st.sampled_from(["best", "preemptor"]),
            "preempt_loading": st.sampled_from(["abort", "finish"]),
            "quantum": st.integers(1, 5),
        }
    ),
}


def _policy(family: str, opts: dict):
    if family in ("fifo", "sjf"):
        return get_policy(family, backfill=opts.get("backfill", True))
    if family == "srtf":
        return SRTF(reserve=opts["reserve"])
    if family == "srtf-periodic":
        return PeriodicSRTF(period=float(opts["period"]), reserve=opts["reserve"])
    if family == "lazer":
        return Lazer(deferral=float(opts["deferral"]), secured=opts["secured"])
    return LAS(quantum=float(opts["quantum"]), reserve=opts["reserve"])


def _run(servers, jobs, family, opts, engine):
    cluster = (
        Cluster.homogeneous(1, servers[0])
        if len(servers) == 1
        else Cluster(tuple(Server(g, name=f"s{i}") for i, g in enumerate(servers)))
    )
    core = [
        Job(j.name, work=float(j.work), gpus=j.gpus, arrival=float(j.arrival), load_time=j.load, save_time=j.save)
        for j in jobs
    ]
    sim = Simulator(
        cluster, core, _policy(family, opts), preempt_loading=opts.get("preempt_loading", "abort"), engine=engine
    )
    bound = _bound(jobs, opts)
    return sim.run(max_time=float(bound), max_events=200 * len(jobs) + 2 * int(bound) + 1000)


def check(servers, jobs, opts):
    opts = dict(opts)
    family = opts.pop("family")
    got = _run(servers, jobs, family, opts, "compiled")
    want = _run(servers, jobs, family, opts, "python")
    assert_same(got, want)
    if family == "lazer":
        assert_bitwise(got, want)
        if opts["secured"] != "all":
            return
    if family == "las":
        return
    ref_opts = {k: v for k, v in opts.items() if k in ("reserve", "preempt_loading", "period", "backfill", "deferral")}
    ref = reference_results(servers, jobs, family, **ref_opts)
    df = got.jobs_frame().set_index("job_id")
    diff = [
        f"job {name}: {f} kernel {float(df.loc[name, col]):g} != reference {r[f]:g}"
        for name, r in ref.items()
        for f, col in FIELDS.items()
        if not math.isclose(float(df.loc[name, col]), r[f], rel_tol=0, abs_tol=1e-9)
    ]
    assert not diff, _describe(servers, jobs, family, opts) + "\n" + "\n".join(diff)


def assert_bitwise(a, b) -> None:
    """Every float column of the two job tables equal to the last bit (NaN where the other has NaN)."""
    ca, cb = a.job_columns(), b.job_columns()
    for c in ca:
        x, y = np.asarray(ca[c]), np.asarray(cb[c])
        if x.dtype.kind == "f":
            assert np.array_equal(x, y, equal_nan=True), c


def _make_test(name, n, slow):
    @settings(max_examples=n, **_SETTINGS)
    @given(w=workloads(), opts=FAMILIES[name]())
    def test(w, opts):
        check(*w, opts)

    test.__name__ = f"test_{'slow_' if slow else ''}kernel_matches_engine_and_reference_{name.replace('-', '_')}"
    test.__doc__ = f"{name}: kernel == Python engine (all results) == reference (per job) on {n} workloads."
    return pytest.mark.slow(test) if slow else test


for _name in FAMILIES:
    for _slow, _n in ((False, N_DEFAULT), (True, N_SLOW)):
        _t = _make_test(_name, _n, _slow)
        globals()[_t.__name__] = _t
del _name, _slow, _n, _t
