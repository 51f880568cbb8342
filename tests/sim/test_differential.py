"""Differential test: the engine against a second, independent simulator (issue 24).

``tests/sim/reference_sim.py`` simulates the Lazer model from ``formulations/lazer.md`` alone
(rules R1-R12, readings 3-4), time-stepped on an integer grid. Hypothesis draws small workloads
with *integer* arrivals, works, load and save times (exact float arithmetic in the engine, so ties
are exact and the tie rules matter), one server of 1-4 GPUs or two servers with jobs that may
span them, multi-GPU jobs, and compares per job: waiting W, loading L, training T, saving P,
completion, first start, preemptions, futile preemptions and futile time (tolerance 1e-9).

Families: FIFO/SJF (non-preemptive, with and without backfill), SRTF (``reserve`` best and
preemptor, ``preempt_loading`` abort and finish), periodic SRTF (period 1-6, both modes) and Lazer
with a fixed deferral X in {0, 10}. Default run: 250 workloads per family (derandomized, so CI is
stable); ``-m slow``: 2,500 per family. Every engine run is bounded (``max_time``/``max_events``
when ``Simulator.run`` has them, else ``until`` plus an alarm): a run that does not end fails.

``python -m tests.sim.test_differential [N] [SEED] [FAMILIES]`` counts, per family, the random
workloads on which the engine differs from the reference, grouped by the rules that mattered
(what the issue-24 report quotes).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import signal
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.sim import SRTF, PeriodicSRTF, Simulator, get_policy

from .reference_sim import JobSpec, simulate

FIELDS = {  # reference field -> engine jobs_frame column
    "W": "waiting",
    "L": "loading_time",
    "T": "training_time",
    "P": "saving_time",
    "completion": "completion",
    "n_preemptions": "n_preemptions",
    "n_futile": "n_futile",
    "futile": "futile_time",
    "first_start": "first_start",
}
ALARM_SECONDS = 20  # wall-clock guard for one engine run, only while run() has no max_events


class EngineDidNotEnd(AssertionError):
    """The engine's run hung, exceeded its bound or left jobs unfinished."""


SERVERS = [(1,), (2,), (2,), (3,), (3,), (4,), (2, 2), (1, 2)]


def build_workload(integer, choice):
    """(servers, [JobSpec]) from two pickers, ``integer(lo, hi)`` and ``choice(seq)`` (hypothesis
    draws or a seeded RNG). Half the workloads are a burst (long jobs first, then short ones
    arriving together: several preemptors, ties, preemptions while loading), half are uniform.
    Small ranges make ties likely; g > 1 for about 4 jobs in 10."""
    servers = choice(SERVERS)
    total = sum(servers)
    n = integer(1, 6)
    burst = choice([False, True])
    jobs = []
    for i in range(n):
        if burst and i < n // 2:  # long jobs first
            arrival, work = integer(0, 2), integer(4, 10)
        elif burst:  # then short ones, often at the same time
            arrival, work = choice([2, 3, 3, 4, 5]), integer(1, 4)
        else:
            arrival, work = integer(0, 6), integer(1, 8)
        load, save = integer(0, 3), integer(0, 3)
        gpus = integer(1, total) if choice([0, 0, 0, 1, 1]) else 1
        jobs.append(JobSpec(i, arrival=arrival, work=work, load=load, save=save, gpus=gpus))
    return servers, jobs


@st.composite
def workloads(draw):
    """Hypothesis strategy for :func:`build_workload`."""
    return build_workload(lambda lo, hi: draw(st.integers(lo, hi)), lambda seq: draw(st.sampled_from(seq)))


def engine_policy(family: str, opts: dict):
    """The engine's policy object for a family and its options (public constructors only)."""
    if family in ("fifo", "sjf"):
        return get_policy(family, backfill=opts.get("backfill", True))
    if family == "srtf":
        return SRTF(reserve=opts["reserve"])
    if family == "srtf-periodic":
        return PeriodicSRTF(period=float(opts["period"]), reserve=opts["reserve"])
    if family == "lazer":
        from optsched.lazer import Lazer

        x = opts.get("deferral", 0)
        return Lazer() if x == 0 else Lazer(deferral=float(x))
    raise ValueError(family)


@contextlib.contextmanager
def _alarm(seconds: float):
    """Raise EngineDidNotEnd after `seconds` of wall-clock time (main thread, POSIX only)."""
    if not hasattr(signal, "setitimer") or seconds <= 0:
        yield
        return

    def _fire(signum, frame):
        raise EngineDidNotEnd(f"the engine's run did not end within {seconds} s of wall-clock time")

    old = signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_bounded(sim: Simulator, max_time: float, max_events: int):
    """Run `sim` so that it always ends: the engine's own limits when it has them (issue 24
    adds ``run(max_time=, max_events=)``), else ``until=max_time`` and a wall-clock alarm."""
    params = inspect.signature(sim.run).parameters
    kwargs = {}
    if "max_events" in params:
        kwargs["max_events"] = max_events
    if "max_time" in params:
        kwargs["max_time"] = max_time
    else:
        kwargs["until"] = max_time
    guard = contextlib.nullcontext() if "max_events" in params else _alarm(ALARM_SECONDS)
    with guard:  # the engine's own limit raises its error; a hang raises EngineDidNotEnd
        res = sim.run(**kwargs)
    df = res.jobs_frame()
    if not (df["status"] == "done").all():
        left = df.loc[df["status"] != "done", "job_id"].tolist()
        raise EngineDidNotEnd(f"jobs {left} not done by t={max_time} (the run churns or hangs)")
    return res


def engine_results(servers, jobs, family: str, *, preempt_loading: str = "abort", bound=None, **opts):
    """Per-job results of the engine, as {name: {reference field: value}}."""
    cluster = Cluster.homogeneous(1, servers[0]) if len(servers) == 1 else _cluster(servers)
    core_jobs = [Job(j.name, work=float(j.work), gpus=j.gpus, arrival=float(j.arrival)) for j in jobs]
    load = {j.name: float(j.load) for j in jobs}
    save = {j.name: float(j.save) for j in jobs}
    sim = Simulator(
        cluster,
        core_jobs,
        engine_policy(family, opts),
        load_time=lambda job, placement: load[job.id],
        save_time=lambda job, placement: save[job.id],
        preempt_loading=preempt_loading,
    )
    if bound is None:
        bound = _bound(jobs, opts)
    res = run_bounded(sim, max_time=float(bound), max_events=200 * len(jobs) + 2 * int(bound) + 1000)
    df = res.jobs_frame().set_index("job_id")
    return {j.name: {f: float(df.loc[j.name, col]) for f, col in FIELDS.items()} for j in jobs}


def _cluster(servers):
    from optsched.core.cluster import Server

    return Cluster(tuple(Server(g, name=f"s{i}") for i, g in enumerate(servers)))


def _bound(jobs, opts):
    """A generous limit on simulated time: every job alone, one after the other, with one
    period/deferral each, ten times over (a correct schedule never gets near it)."""
    per_job = sum(j.work + j.load + j.save + opts.get("period", 0) + opts.get("deferral", 0) for j in jobs)
    return 10 * (max(j.arrival for j in jobs) + per_job) + 100


def reference_results(servers, jobs, family: str, **opts):
    ref = simulate(jobs, sum(servers), family, **opts)
    return {name: {f: float(getattr(r, f)) for f in FIELDS} for name, r in ref.items()}


def differences(servers, jobs, family: str, **opts) -> list[str]:
    """Per-job differences between engine and reference ([] when they agree)."""
    ref = reference_results(servers, jobs, family, **opts)
    eng = engine_results(servers, jobs, family, **opts)
    out = []
    for name, r in ref.items():
        for f, v in r.items():
            e = eng[name][f]
            if not math.isclose(e, v, rel_tol=0, abs_tol=1e-9):
                out.append(f"job {name}: {f} engine {e:g} != reference {v:g}")
    return out


def check(servers, jobs, family, **opts):
    diff = differences(servers, jobs, family, **opts)
    assert not diff, _describe(servers, jobs, family, opts) + "\n" + "\n".join(diff)


def _describe(servers, jobs, family, opts):
    js = ", ".join(
        f"{j.name}(a={j.arrival}, w={j.work}, l={j.load}, p={j.save}" + (f", g={j.gpus})" if j.gpus > 1 else ")")
        for j in jobs
    )
    return f"{family} {opts} on servers {servers}: {js}"


# ---------------------------------------------------------------------------- the families
# Each family draws its own options; the default run keeps the whole file well under a minute.
N_DEFAULT, N_SLOW = 250, 2500
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
            "deferral": st.sampled_from([0, 10]),
            "preempt_loading": st.sampled_from(["abort", "finish"]),
        }
    ),
}


def _run_case(w, opts):
    servers, jobs = w
    opts = dict(opts)
    family = opts.pop("family")
    check(servers, jobs, family, **opts)


def _make_test(name, n, slow):
    @settings(max_examples=n, **_SETTINGS)
    @given(w=workloads(), opts=FAMILIES[name]())
    def test(w, opts):
        _run_case(w, opts)

    test.__name__ = f"test_{'slow_' if slow else ''}engine_matches_reference_{name.replace('-', '_')}"
    test.__doc__ = f"{name}: engine == reference on {n} random small workloads (per job W, L, T, P, ...)."
    return pytest.mark.slow(test) if slow else test


for _name in FAMILIES:
    for _slow, _n in ((False, N_DEFAULT), (True, N_SLOW)):
        _t = _make_test(_name, _n, _slow)
        globals()[_t.__name__] = _t
del _name, _slow, _n, _t


# ---------------------------------------------------------------------------- counting script
def count_differences(n: int = 500, seed: int = 0, families=None):
    """Per family: how many of `n` random workloads (seeded) differ, how many runs did not end,
    and, grouped by the rules that mattered in the reference's run (``ReferenceSim.flags``), the
    count and the smallest differing workload of each group."""
    import random

    from .reference_sim import ReferenceSim

    rng = random.Random(seed)
    report = {}
    for name in FAMILIES:
        bad, hung, groups = 0, 0, {}
        for _ in range(n):
            servers, jobs = _random_workload(rng)
            opts = _random_opts(name, rng)
            if families and name not in families:
                continue
            family = opts.pop("family")
            ref = ReferenceSim(jobs, sum(servers), family, **opts)
            ref.run()
            try:
                diff = differences(servers, jobs, family, **opts)
            except Exception as exc:  # a hang, the engine's limit or an engine error
                hung += 1
                diff = [f"did not end or failed: {type(exc).__name__}: {exc}"]
            if diff:
                bad += 1
                group = groups.setdefault(tuple(sorted(ref.flags)), [])
                group.append(((len(jobs), sum(j.work for j in jobs)), _describe(servers, jobs, family, opts), diff[:4]))
        report[name] = (bad, hung, {k: (len(v), min(v)) for k, v in groups.items()})
    return report


def _random_workload(rng):
    return build_workload(rng.randint, rng.choice)


def _random_opts(name, rng):
    if name == "fifo-sjf":
        return {"family": rng.choice(["fifo", "sjf"]), "backfill": rng.random() < 0.5}
    opts = {"family": name, "preempt_loading": rng.choice(["abort", "finish"])}
    if name in ("srtf", "srtf-periodic"):
        opts["reserve"] = rng.choice(["best", "preemptor"])
    if name == "srtf-periodic":
        opts["period"] = rng.randint(1, 6)
    if name == "lazer":
        opts["deferral"] = rng.choice([0, 10])
    return opts


if __name__ == "__main__":  # pragma: no cover - a measurement for the report, not a test
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    for name, (bad, hung, groups) in count_differences(n, seed, only).items():
        if only and name not in only:
            continue
        print(f"{name}: {bad}/{n} workloads differ ({hung} did not end or failed)")
        for flags, (count, (_, desc, diff)) in sorted(groups.items(), key=lambda kv: -kv[1][0]):
            print(f"  {count:4d} x rules {list(flags)}; smallest: {desc}")
            for d in diff:
                print(f"         {d}")
