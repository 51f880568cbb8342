"""The compiled kernel (``Simulator(engine="compiled")``) against the Python engine, job by job.

The Python engine is the reference (its rules: ``formulations/lazer.md``, R1-R12). On random small
workloads with integer data (ties in arrival, work and remaining work; events at the same instant;
quantum ticks and periodic ticks on event times; multi-GPU jobs over several servers, single-server
jobs, heterogeneous servers; load and save times from the simulator's options or the jobs' own,
both ``preempt_loading`` modes, both ``reserve`` modes) both engines must give the same result:
every column of the job table (completion within 1e-9, preemption counts equal), the event count,
the end time, GPUs in use over time, the segments with their GPU ids, the event log, and runs
stopped early with ``run(until=...)``. Plus: the regression fixture on the kernel, the fallback to
Python (``engine="auto"``), the errors of ``engine="compiled"``, runs without numba, and that numba
is imported only when the kernel runs.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.core.cluster import Server
from optsched.exceptions import InvalidOptionError, SimulationError, SimulationLimitError
from optsched.sim import FIFO, LAS, SJF, SRTF, ConstantRate, PeriodicSRTF, Simulator, get_policy
from optsched.sim.compiled import driver as D
from optsched.sim.compiled.coverage import DISABLE_ENV
from optsched.sim.options import ENGINES

pytest.importorskip("numba")

KERNEL_RULES = ["consolidate", "first_fit", "least_loaded", "whole_node"]
POLICY_CLASSES = {"fifo": FIFO, "sjf": SJF, "srtf": SRTF, "las": LAS, "srtf-periodic": PeriodicSRTF}


# -- random workloads ------------------------------------------------------------------------------
@st.composite
def cases(draw, policy: str, max_jobs: int = 14, max_servers: int = 4):
    """(cluster, jobs as a table/list/columns, policy object, rate, until, simulator options) with
    integer data; half the time load and save times (the simulator's, or the jobs' own)."""
    caps = draw(st.lists(st.integers(1, 8), min_size=1, max_size=max_servers))
    if draw(st.booleans()):
        caps = [caps[0]] * len(caps)  # homogeneous half of the time
    cluster = Cluster([Server(g) for g in caps])
    n = draw(st.integers(1, max_jobs))
    overheads = draw(st.sampled_from(["none", "none", "options", "own", "both"]))
    rows = []
    for i in range(n):
        single = draw(st.booleans()) and draw(st.booleans())
        cap = max(caps) if single else sum(caps)
        gpus = draw(st.one_of(st.integers(1, min(cap, 4)), st.integers(1, cap)))
        row = dict(
            job_id=i,
            arrival=float(draw(st.integers(0, 12))),
            work=float(draw(st.integers(1, 12))),
            gpus=gpus,
            single_server=single,
        )
        if overheads in ("own", "both"):
            row["load_time"] = float(draw(st.integers(0, 3)))
            row["save_time"] = float(draw(st.integers(0, 3)))
        rows.append(row)
    opts = dict(placement=draw(st.sampled_from(KERNEL_RULES)), backfill=draw(st.booleans()))
    if policy in ("srtf", "las", "srtf-periodic"):
        opts["rollback"] = draw(st.booleans())
        opts["reserve"] = draw(st.sampled_from(["best", "preemptor"]))
    if policy == "las":
        opts["quantum"] = float(draw(st.sampled_from([1, 2, 3, 5, 7])))
        opts["gpu_weighted"] = draw(st.booleans())
    if policy == "srtf-periodic":
        opts["period"] = float(draw(st.sampled_from([1, 2, 3, 5])))
    pol = get_policy(policy, **opts)
    form = draw(st.sampled_from(["frame", "jobs", "columns"]))
    if form == "frame":
        jobs = pd.DataFrame(rows)
    elif form == "jobs":
        jobs = [
            Job(
                r["job_id"],
                r["work"],
                r["gpus"],
                r["arrival"],
                single_server=r["single_server"],
                load_time=r.get("load_time"),
                save_time=r.get("save_time"),
            )
            for r in rows
        ]
    else:
        jobs = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    rate = draw(st.sampled_from([None, 1.0, 2.0, 0.5]))
    until = float(draw(st.integers(0, 30))) if draw(st.integers(0, 4)) == 0 else None
    kw = {"record_log": draw(st.booleans())}
    if overheads in ("options", "both"):
        kw["load_time"] = float(draw(st.integers(0, 3)))
        kw["save_time"] = float(draw(st.integers(0, 3)))
    if overheads != "none":
        kw["preempt_loading"] = draw(st.sampled_from(["abort", "finish"]))
    return cluster, jobs, pol, rate, until, kw


def run(cluster, jobs, policy, rate, until, engine, max_events="auto", **kw):
    kw.setdefault("record_log", False)
    sim = Simulator(
        cluster,
        jobs,
        policy,
        rate_model=None if rate is None else ConstantRate(rate),
        engine=engine,
        **kw,
    )
    assert (sim._compiled is not None) == (engine == "compiled")
    return sim.run(until=until, max_events=max_events)


def assert_same(a, b, *, segments: bool = True) -> None:
    """Every result of two runs agrees (floats within 1e-9)."""
    ca, cb = a.job_columns(), b.job_columns()
    assert list(ca) == list(cb)
    for c in ca:
        x, y = ca[c], cb[c]
        if x.dtype == object:
            assert list(x) == list(y), c
        elif np.issubdtype(x.dtype, np.integer):
            assert x.dtype == y.dtype and np.array_equal(x, y), c
        else:
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-9, err_msg=c)
    assert a.policy == b.policy
    assert a.n_events == b.n_events
    assert a.end_time == pytest.approx(b.end_time, abs=1e-9)
    ta, tb = a._utilization_steps(), b._utilization_steps()
    np.testing.assert_allclose(ta[0], tb[0], rtol=0, atol=1e-9)
    assert ta[1].dtype == tb[1].dtype and np.array_equal(ta[1], tb[1])
    sa, sb = a.summary(), b.summary()
    assert sa.keys() == sb.keys()
    for k in sa:
        if isinstance(sa[k], float):
            assert sa[k] == pytest.approx(sb[k], abs=1e-9, nan_ok=True), k
        else:
            assert sa[k] == sb[k], k
    assert (a.log is None) == (b.log is None)
    if a.log is not None:
        assert_same_log(a.log, b.log)
    if segments:
        fa, fb = a.segments(), b.segments()
        assert fa["job_id"].tolist() == fb["job_id"].tolist()
        ends = ["start", "end"]
        np.testing.assert_allclose(fa[ends].to_numpy(float), fb[ends].to_numpy(float), atol=1e-9)
        assert fa["placement"].tolist() == fb["placement"].tolist()
        assert fa["gpu_ids"].tolist() == fb["gpu_ids"].tolist()


def assert_same_log(a, b) -> None:
    """Two event logs agree row by row (times within 1e-9) and rebuild the same job table."""
    from optsched.sim import replay_log

    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x[0] == pytest.approx(y[0], abs=1e-9) and x[1:] == y[1:], (x, y)
    ra, rb = replay_log(a), replay_log(b)
    pd.testing.assert_frame_equal(ra, rb, check_exact=False, atol=1e-9, rtol=0)


def check_case(case) -> None:
    """Both engines agree, or both raise the same error (LAS with rollback and a short quantum can
    livelock: rolled-back jobs have attained nothing and preempt each other; a small event limit
    keeps that quick)."""
    cluster, jobs, pol, rate, until, kw = case
    try:
        want = run(cluster, jobs, pol, rate, until, "python", max_events=20_000, **kw)
    except SimulationError as e:
        with pytest.raises(type(e)):
            run(cluster, jobs, pol, rate, until, "compiled", max_events=20_000, **kw)
        return
    got = run(cluster, jobs, pol, rate, until, "compiled", max_events=20_000, **kw)
    assert_same(got, want)


_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("policy", list(POLICY_CLASSES))
@settings(max_examples=100, **_SETTINGS)
@given(data=st.data())
def test_kernel_equals_python_engine(policy, data):
    check_case(data.draw(cases(policy)))


@pytest.mark.slow
@pytest.mark.parametrize("policy", list(POLICY_CLASSES))
@settings(max_examples=1000, **_SETTINGS)
@given(data=st.data())
def test_kernel_equals_python_engine_many(policy, data):
    check_case(data.draw(cases(policy, max_jobs=40, max_servers=6)))


@pytest.mark.parametrize("policy", list(POLICY_CLASSES))
@pytest.mark.parametrize("rule", KERNEL_RULES)
def test_kernel_equals_python_engine_on_contended_synthetic_workloads(policy, rule):
    """Hundreds of Philly-like jobs, load 1.3 (queues, many preemptions, multi-server jobs)."""
    from optsched.traces import synthetic_workload

    cluster = Cluster.homogeneous(5, 4)
    df = synthetic_workload(400, cluster_gpus=cluster.total_gpus, load=1.3, max_duration=4 * 3600.0, seed=7)
    opts = {"quantum": 300.0} if policy == "las" else {"period": 300.0} if policy == "srtf-periodic" else {}
    pol = get_policy(policy, placement=rule, **opts)
    got = run(cluster, df, pol, None, None, "compiled")
    assert_same(got, run(cluster, df, pol, None, None, "python"))
    if policy in ("srtf", "las", "srtf-periodic"):
        assert got.summary()["n_preemptions"] > 0


@pytest.mark.parametrize("policy", ["srtf", "las", "srtf-periodic"])
@pytest.mark.parametrize("reserve", ["best", "preemptor"])
@pytest.mark.parametrize("preempt_loading", ["abort", "finish"])
def test_kernel_equals_python_engine_with_overheads_on_contended_workloads(policy, reserve, preempt_loading):
    """Hundreds of Philly-like jobs, load 1.3, with load and save times (each job's own, from a
    table column, beside the simulator's): claims, saves, futile loads, and the event log."""
    from optsched.traces import synthetic_workload

    cluster = Cluster.homogeneous(5, 4)
    df = synthetic_workload(300, cluster_gpus=cluster.total_gpus, load=1.3, max_duration=4 * 3600.0, seed=11)
    df["load_time"] = np.where(np.arange(len(df)) % 3 == 0, 60.0, 20.0)
    opts = {"quantum": 300.0} if policy == "las" else {"period": 120.0} if policy == "srtf-periodic" else {}
    pol = get_policy(policy, reserve=reserve, placement="first_fit" if policy == "las" else "consolidate", **opts)
    kw = dict(save_time=15.0, preempt_loading=preempt_loading, record_log=True)
    got = run(cluster, df, pol, None, None, "compiled", **kw)
    assert_same(got, run(cluster, df, pol, None, None, "python", **kw))
    s = got.summary()
    assert s["n_preemptions"] > 0 and got.job_columns()["saving_time"].sum() > 0


def test_las_ticks_that_change_nothing_are_merged_with_the_same_events_and_log():
    """1 GPU, LAS quantum 10: A runs alone to 95, where B arrives and preempts it (its attained
    service 0 is below A's 95: an arrival is an event, R3); the ticks at 100 ... 190 cannot preempt B
    (its attained service is not above A's 95) and are merged, counted and logged as the engine's
    events; at 200 B has 105 > 95 and is preempted."""
    jobs = [Job("A", work=200), Job("B", work=200, arrival=95)]
    cluster = Cluster.homogeneous(1, 1)
    want = Simulator(cluster, jobs, LAS(quantum=10), engine="python").run()
    sim = Simulator(cluster, jobs, LAS(quantum=10), engine="compiled")
    got = sim.run()
    assert_same(got, want)
    assert sim._compiled.merged_ticks >= 9
    assert [r[0] for r in got.log if r[1] == "preempt"][:2] == [95.0, 200.0]


def test_buffers_grow_heaps_compact_and_the_run_resumes_between_chunks(monkeypatch):
    """Tiny initial buffers, stale heap rows dropped as soon as possible, a budget of 3 event times
    per kernel call: the same results, also for runs stopped early."""
    from optsched.traces import synthetic_workload

    cluster = Cluster.homogeneous(3, 4)
    df = synthetic_workload(300, cluster_gpus=cluster.total_gpus, load=1.2, max_duration=7200.0, seed=3)
    cases = (
        ("srtf", True, None, {}),
        ("las", False, None, {}),
        ("fifo", True, None, {}),
        ("las", True, 4e4, {}),
        ("srtf", False, None, {"load_time": 30.0, "save_time": 10.0, "record_log": True}),
        ("srtf-periodic", True, 5e4, {"load_time": 30.0, "save_time": 10.0, "record_log": True}),
    )
    for policy, rec, until, kw in cases:
        want = run(cluster, df, get_policy(policy), None, until, "python", **kw)
        with monkeypatch.context() as m:
            m.setattr(D.CompiledRun, "BUDGET", 3)
            m.setattr(D.CompiledRun, "EVENT_SLACK", 0)
            m.setattr(D.CompiledRun, "RUN_SLACK", 0)
            sim = Simulator(
                cluster, df, get_policy(policy), engine="compiled", record_segments=rec, **{"record_log": False, **kw}
            )
            got = sim._compiled.run(until, initial=1)
        assert_same(got, want, segments=rec)


# -- the regression fixture on the kernel -------------------------------------------------------------
def test_regression_fixture_on_the_kernel():
    from .make_regression_fixture import OPTIONS
    from .test_regression import DATA

    for case in DATA["cases"]:
        c = case["case"]
        for key, want in case["runs"].items():
            policy, rule = key.split("/")
            if rule not in KERNEL_RULES:
                continue
            res = Simulator(
                Cluster.homogeneous(c["servers"], c["gpus"]),
                pd.DataFrame(case["jobs"]),
                get_policy(policy, placement=rule, **OPTIONS.get(policy, {})),
                seed=c["seed"],
                record_log=False,
                engine="compiled",
            ).run()
            cols = res.job_columns()
            np.testing.assert_allclose(cols["completion"], want["completion"], rtol=1e-12, atol=1e-9, err_msg=key)
            assert cols["n_preemptions"].tolist() == want["n_preemptions"], key


# -- which engine runs ----------------------------------------------------------------------------------
def _jobs(n=30):
    return [Job(i, work=1.0 + i % 7, gpus=1 + i % 3, arrival=float(i // 2)) for i in range(n)]


@pytest.mark.parametrize(
    ("kwargs", "policy", "needle"),
    [
        ({"load_time": lambda j, p: 5.0}, SRTF(), "load_time/save_time functions"),
        ({"save_time": lambda j, p: 1.0}, SRTF(), "load_time/save_time functions"),
        ({"slot": 10.0}, FIFO(), "slot"),
        ({"time_decisions": True}, LAS(), "time_decisions"),
        ({"stages": {0: [0.5, 0.5]}}, SJF(), "stages"),
        ({"terminate_after": {1: 1}}, SJF(), "terminate_after"),
        ({}, SRTF(placement="random"), "placement 'random'"),
        ({}, type("MySRTF", (SRTF,), {})(), "policy MySRTF"),
        ({}, SJF(size_attr="p"), "size_attr"),
        ({"rate_model": __import__("optsched.sim", fromlist=["PlacementRate"]).PlacementRate(0.1)}, FIFO(), "rate"),
    ],
)
def test_compiled_names_what_it_does_not_cover_and_auto_falls_back(kwargs, policy, needle, caplog, monkeypatch):
    cluster = Cluster.homogeneous(2, 4)
    kw = {"record_log": False, **kwargs}
    with pytest.raises(InvalidOptionError, match="engine='compiled' does not cover") as e:
        Simulator(cluster, _jobs(), policy, engine="compiled", **kw)
    assert needle in str(e.value)
    monkeypatch.setattr(D, "_said", set())
    with caplog.at_level("INFO", logger="optsched.sim"):
        sim = Simulator(cluster, _jobs(), policy, engine="auto", **kw)
    assert sim._compiled is None
    assert needle in caplog.text and "Python engine runs" in caplog.text


def test_fallback_is_logged_once(caplog, monkeypatch):
    monkeypatch.setattr(D, "_said", set())
    with caplog.at_level("INFO", logger="optsched.sim"):
        for _ in range(3):
            Simulator(Cluster.homogeneous(2, 4), _jobs(), SRTF(), slot=5.0)
    assert caplog.text.count("slot (slotted time)") == 1


def test_jobs_own_load_and_save_times_run_on_the_kernel_and_resources_stay_on_python():
    cluster = Cluster.homogeneous(2, 4)
    df = pd.DataFrame({"arrival": [0.0, 1.0], "gpus": [4, 8], "duration": [3.0, 4.0], "save_time": [0.0, 2.0]})
    df["load_time"] = [1.0, 0.0]
    want = Simulator(cluster, df, SRTF(), load_time=5.0, engine="python").run()
    got = Simulator(cluster, df, SRTF(), load_time=5.0, engine="compiled").run()
    assert_same(got, want)
    assert got.job_columns()["loading_time"].tolist() == [1.0, 0.0]  # each job's own wins over the option
    jobs = [Job(0, work=2, gpus=1, load_time=3.0), Job(1, work=2, gpus=1)]
    kw = dict(load_time=1.0, save_time=2.0)
    assert_same(
        Simulator(cluster, jobs, SRTF(), engine="compiled", **kw).run(),
        Simulator(cluster, jobs, SRTF(), engine="python", **kw).run(),
    )
    rjobs = [Job(0, work=2, gpus=1, resources={"cpu": 2})]
    rcluster = Cluster([Server(4, resources={"cpu": 8})])
    with pytest.raises(InvalidOptionError, match="resources"):
        Simulator(rcluster, rjobs, SRTF(), record_log=False, engine="compiled")


def test_auto_takes_the_kernel_for_large_workloads_only(monkeypatch):
    cluster = Cluster.homogeneous(2, 4)
    assert Simulator(cluster, _jobs(), SRTF(), record_log=False)._compiled is None  # below AUTO_MIN_JOBS
    monkeypatch.setattr(D, "AUTO_MIN_JOBS", 10)
    sim = Simulator(cluster, _jobs(), SRTF(), record_log=False)
    assert sim._compiled is not None
    assert len(sim.jobs) == 30 and sim.jobs[3].id == 3 and sim.jobs[-1].gpus == 3
    assert_same(sim.run(), Simulator(cluster, _jobs(), SRTF(), record_log=False, engine="python").run())


def test_engine_state_of_a_compiled_simulator_says_why_it_is_missing():
    sim = Simulator(Cluster.homogeneous(2, 4), _jobs(), SRTF(), record_log=False, engine="compiled")
    for f in (lambda: sim.job(0), sim.training_jobs, lambda: sim.free_gpus):
        with pytest.raises(AttributeError, match="compiled kernel"):
            f()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = Simulator(Cluster.homogeneous(2, 4), _jobs(), SRTF(), engine="python").nope


def test_bad_engine_options():
    cluster = Cluster.homogeneous(2, 4)
    with pytest.raises(InvalidOptionError, match="'engine' option"):
        Simulator(cluster, _jobs(3), FIFO(), engine="numba")
    with pytest.raises(InvalidOptionError, match="record_segments"):
        Simulator(cluster, _jobs(3), FIFO(), engine="python", record_segments="no")
    with pytest.raises(InvalidOptionError, match="max_events"):
        Simulator(cluster, _jobs(3), FIFO(), record_log=False, engine="compiled").run(max_events=0.5)


def test_bad_input_is_refused_as_by_the_python_engine():
    cluster = Cluster.homogeneous(1, 2)
    df = pd.DataFrame({"arrival": [0.0, -1.0], "gpus": [1, 1], "duration": [1.0, 1.0]})
    for engine in ("python", "compiled"):
        with pytest.raises(Exception, match="'arrival' field of job 1") as e:
            Simulator(cluster, df, FIFO(), record_log=False, engine=engine)
        assert isinstance(e.value, ValueError)


def test_without_numba_auto_runs_python_and_compiled_says_why(monkeypatch):
    jobs = _jobs()
    cluster = Cluster.homogeneous(2, 4)
    want = Simulator(cluster, jobs, SRTF(), record_log=False, engine="python").run()
    monkeypatch.setattr(D, "AUTO_MIN_JOBS", 1)
    for way in ("env", "import"):
        with monkeypatch.context() as m:
            if way == "env":
                m.setenv(DISABLE_ENV, "1")
            else:  # numba cannot be imported
                m.setitem(sys.modules, "numba", None)
                m.delitem(sys.modules, "optsched.sim.compiled.kernel", raising=False)
            sim = Simulator(cluster, jobs, SRTF(), record_log=False)
            assert sim._compiled is None
            assert_same(sim.run(), want)
            with pytest.raises(InvalidOptionError, match="cannot run"):
                Simulator(cluster, jobs, SRTF(), record_log=False, engine="compiled")


def test_record_segments_false_keeps_the_tables_and_refuses_the_schedule():
    cluster = Cluster.homogeneous(2, 4)
    a = Simulator(cluster, _jobs(), LAS(quantum=2), record_log=False, engine="compiled", record_segments=False).run()
    b = Simulator(cluster, _jobs(), LAS(quantum=2), record_log=False, engine="python").run()
    assert_same(a, b, segments=False)
    for f in (a.schedule, a.segments):
        with pytest.raises(SimulationError, match="record_segments=False"):
            f()


def test_schedule_of_a_compiled_run_passes_the_verifier():
    from optsched.core import Instance
    from optsched.verify import verify

    cluster = Cluster.homogeneous(3, 4)
    jobs = [Job(i, work=2.0 + i % 5, gpus=1 + i % 6, arrival=float(i % 4)) for i in range(25)]
    res = Simulator(cluster, jobs, SRTF(placement="first_fit"), record_log=False, engine="compiled").run()
    assert verify(Instance(cluster, jobs), res.schedule()).ok


def test_limits_and_reuse():
    cluster = Cluster.homogeneous(1, 3)
    for engine in ("python", "compiled"):
        with pytest.raises(SimulationLimitError, match="max_events=5"):
            Simulator(cluster, _jobs(), LAS(quantum=1), record_log=False, engine=engine).run(max_events=5)
        with pytest.raises(SimulationLimitError, match="max_time=3"):
            Simulator(cluster, _jobs(), SRTF(), record_log=False, engine=engine).run(max_time=3)
        sim = Simulator(cluster, _jobs(4), FIFO(), record_log=False, engine=engine)
        sim.run()
        with pytest.raises(SimulationError, match="already run"):
            sim.run()


def test_progress_bar(capsys):
    res = Simulator(Cluster.homogeneous(2, 4), _jobs(), SRTF(), record_log=False, engine="compiled", progress=True)
    assert res.run().summary()["n_done"] == 30


def test_numba_is_imported_only_when_the_kernel_runs():
    code = (
        "import sys\nfrom optsched.cli import main\n"
        "main(['simulate', '--trace', 'synthetic', '--jobs', '300', '--servers', '4', '--json', '--quiet'])\n"
        "from optsched.core import Cluster, Job\nfrom optsched.sim import Simulator, SRTF\n"
        "Simulator(Cluster.homogeneous(1, 2), [Job(0, 1.0)], SRTF(), record_log=False).run()\n"
        "assert 'numba' not in sys.modules, 'numba imported'\n"
        "Simulator(Cluster.homogeneous(1, 2), [Job(0, 1.0)], SRTF(), record_log=False, engine='compiled').run()\n"
        "assert 'numba' in sys.modules\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr


def test_cli_engine_option_and_verbose():
    import json

    from optsched.commands.simulate import ENGINE_CHOICES

    assert ENGINE_CHOICES == ENGINES
    base = [sys.executable, "-m", "optsched", "simulate", "--trace", "synthetic", "--jobs", "300", "--servers", "4"]
    base += ["--policy", "las", "--load", "1.2", "--json", "--quiet", "--verbose"]
    out = {}
    for engine in ("python", "compiled", "auto"):
        r = subprocess.run([*base, "--engine", engine], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        out[engine] = json.loads(r.stdout)
        if engine == "compiled":
            assert "compiled kernel runs LAS" in r.stderr
        if engine == "auto":
            assert f"fewer than {D.AUTO_MIN_JOBS:,} jobs" in r.stderr
    for k in ("mean_jct", "n_preemptions", "n_events", "mean_utilization"):
        assert out["compiled"][k] == pytest.approx(out["python"][k], abs=1e-9)
    over = ["--load-time", "5", "--save-time", "2"]
    both = [
        json.loads(subprocess.run([*base, *over, "--engine", e], capture_output=True, text=True).stdout)
        for e in ("python", "compiled")
    ]
    for k in ("mean_jct", "n_preemptions", "n_events", "futile_gpu_share"):
        assert both[1][k] == pytest.approx(both[0][k], abs=1e-9)
    r = subprocess.run([*base, "--engine", "compiled", "--placement", "random"], capture_output=True, text=True)
    assert r.returncode == 2 and "placement 'random'" in r.stderr
