"""Simulator speed: Philly-like workloads replayed with SRTF, FIFO and LAS, on both engines.

Cases (each in a fresh subprocess, so peak memory = that run's max RSS, interpreter included). A
case runs the Python engine (``engine="python"``) unless its name ends in ``-compiled`` (the
numba kernel, :mod:`optsched.sim.compiled.kernel`; ``record_segments=False`` from a million jobs on):

* ``philly-1k``: 1,000 jobs on 27 servers x 4 GPUs, offered load 0.9, durations capped at one
  day, SRTF (target <= 0.1 s); ``philly-1k-las`` at load 1.1;
* ``synthetic-100k``: 100,000 jobs on 750 x 8, load 0.8, SRTF; ``-fifo`` and ``-las`` variants;
* ``overload-100k``: 100,000 jobs on 750 x 8, load 1.1, durations capped at one day, SRTF
  (queues build up and preemptions are frequent); ``overload-100k-las``: the same with LAS;
* ``synthetic-1m``: 1,000,000 jobs on 750 x 8, load 1.0, durations capped at one day, SRTF;
  ``-las`` and ``-fifo`` variants; ``helios-3.36m``: 3,360,000 jobs (a Helios-sized replay);
* ``scale-10k`` ... ``scale-300k``: the growth of SRTF's time with the number of jobs;
* ``contention-10k``: 10,000 jobs on 64 x 4 GPUs, load 0.9, SRTF, with
  :class:`~optsched.sim.SplitContentionRate` (alpha 0.2; Python engine only: the kernel has
  constant rates); ``contention-10k-constant`` is the same workload at rate 1;
* ``overload-100k-default``, ``overload-100k-las-default``: the default call
  (``Simulator(cluster, table, get_policy(...)).run()``: ``engine="auto"``, the event log and the
  segments kept), the case of the issue's 1x target;
* ``overload-100k-ls``, ``overload-100k-ls-periodic``: the same workload with 30 s of load and 10 s
  of save per job, SRTF and periodic SRTF (period 60 s), default call (the issue's 2x target);
  ``-python`` variants on the Python engine; ``overload-100k-ls-nolog``: SRTF with those overheads
  and ``record_log=False`` (what the default call's log costs: compare with ``overload-100k-ls``, as
  ``overload-100k-compiled`` with ``overload-100k-default``);
* ``synthetic-1m-ls``: 1,000,000 jobs, load 1.0, SRTF with 30 s load and 10 s save, on the kernel
  without log and segments (the issue's 15 s / 1 GiB target); ``synthetic-1m-ls-default`` with them;
* ``lazer-earth-100k``: the Lazer study's Earth workload (100,000 jobs, offered load 2, per-model
  load and save times), each of its policies as the study runs it (Python engine, decision timings)
  and the baselines on the kernel (the same load and save seconds as job columns);
* ``lazer-100k``: the same Earth workload with Lazer's own deferral (a fixed X = 30 s, the study's
  "Lazer X=30") and the load and save seconds as job columns, on the Python engine and on the
  kernel (``record_log=False``): both times, and whether the job tables agree to the last bit;
* ``auto-threshold``: the Python engine and a fresh process's kernel run (numba's import and the
  cached kernel's load included) from 1,000 to 20,000 jobs: where ``engine="auto"`` should switch;
* ``kernel-compile``: the first call of the compiled kernel with an empty numba cache (compiled
  once per machine, ``cache=True``), a 3-job SRTF run: its compile time (the entry point of FIFO,
  SJF, SRTF and periodic SRTF; LAS and Lazer's deferral compile their own on their first run),
  reported apart from every other case;
* ``sweep-100k``: 3 loads x 5 seeds x 4 policies x 100,000 jobs on 750 x 8 through
  :func:`optsched.experiments.sweep.sweep` on a Dask ``LocalCluster`` of 2 workers (compiled).

Each child also times, in the same process, a bare ``heapq`` loop of 4 events per job (push and
pop of ``(time, kind, sequence, job)`` tuples: the least any Python event loop does); the
``ratio_to_heapq`` of a case is its CPU time over that loop's (the issue's measure; wall times on
this shared machine vary with the load of the other users, CPU times less).

Why the caps: Philly run times are heavy-tailed (max 4.6e6 s); over a short arrival window most
of the offered GPU-seconds come from a few jobs that run long after the last arrival, so the
cluster barely queues. Capping at one day keeps the load inside the window, and so exercises
queues and preemptions; the uncapped 100k cases show the light-queue regime.

Workloads: :func:`optsched.traces.synthetic_workload` (Philly runtimes, 70/10/15/5% of 1/2/4/8
GPUs, Poisson arrivals), seed 0. ``sim_seconds`` (wall, median of the repeats) covers building the
Simulator from the job table and running it (event log off but in the ``-default`` and ``-ls``
cases, which keep the defaults); ``sim_cpu_seconds`` the same in CPU
time; generation time is reported apart, and so is ``kernel_load_seconds``, the first compiled run
of a process (importing numba and loading the cached kernel).

Usage: ``python -m benchmarks sim`` (all), ``python -m benchmarks.bench_sim --quick`` (no case of a
million jobs or more, no Python case over 100,000 jobs, no sweep), ``python -m benchmarks.bench_sim
--case philly-1k``; ``--plot`` redraws ``docs/sim-scaling.png`` (time vs jobs, both engines) from
the stored results. The issue's targets are written as ``"targets"`` for the ``python -m
benchmarks`` table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

CASES = {
    "philly-1k": dict(n=1000, servers=27, gpus=4, load=0.9, policy="srtf", max_duration=86400.0, repeat=7),
    "synthetic-100k": dict(n=100_000, servers=750, gpus=8, load=0.8, policy="srtf", max_duration=None, repeat=1),
    "synthetic-100k-fifo": dict(n=100_000, servers=750, gpus=8, load=0.8, policy="fifo", max_duration=None, repeat=1),
    "synthetic-100k-las": dict(n=100_000, servers=750, gpus=8, load=0.8, policy="las", max_duration=None, repeat=1),
    "overload-100k": dict(n=100_000, servers=750, gpus=8, load=1.1, policy="srtf", max_duration=86400.0, repeat=1),
    "overload-100k-las": dict(n=100_000, servers=750, gpus=8, load=1.1, policy="las", max_duration=86400.0, repeat=1),
    "synthetic-1m": dict(n=1_000_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1),
    # co-runner-dependent rates: every split job slows with the split jobs on its servers
    "contention-10k": dict(
        n=10_000, servers=64, gpus=4, load=0.9, policy="srtf", max_duration=86400.0, repeat=3, rate="split-contention"
    ),
    "contention-10k-constant": dict(
        n=10_000, servers=64, gpus=4, load=0.9, policy="srtf", max_duration=86400.0, repeat=3
    ),
    # issue "Scale": a busy Philly-like trace with LAS, 1M jobs with LAS and FIFO, a Helios-sized replay, and the
    # growth of SRTF's time with the number of jobs (with synthetic-100k-... and synthetic-1m)
    "philly-1k-las": dict(n=1000, servers=27, gpus=4, load=1.1, policy="las", max_duration=86400.0, repeat=5),
    "synthetic-1m-las": dict(n=1_000_000, servers=750, gpus=8, load=1.0, policy="las", max_duration=86400.0, repeat=1),
    "synthetic-1m-fifo": dict(
        n=1_000_000, servers=750, gpus=8, load=1.0, policy="fifo", max_duration=86400.0, repeat=1
    ),
    "scale-10k": dict(n=10_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=3),
    "scale-100k": dict(n=100_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1),
    "scale-300k": dict(n=300_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1),
    "helios-3.36m": dict(n=3_360_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1),
}
#: issue 27: the same workloads on the compiled kernel (name + "-compiled"), several repeats
COMPILED = [
    "philly-1k",
    "philly-1k-las",
    "synthetic-100k",
    "synthetic-100k-fifo",
    "synthetic-100k-las",
    "overload-100k",
    "overload-100k-las",
    "scale-10k",
    "scale-100k",
    "scale-300k",
    "synthetic-1m",
    "synthetic-1m-las",
    "synthetic-1m-fifo",
    "helios-3.36m",
]
for _name in COMPILED:
    _c = dict(CASES[_name], engine="compiled")
    _c["repeat"] = 3 if _c["n"] <= 300_000 else 1
    _c["record_segments"] = _c["n"] < 1_000_000  # big runs keep memory flat
    CASES[_name + "-compiled"] = _c
#: issue 32: the default call, and the papers' load and save times
_OVER = dict(n=100_000, servers=750, gpus=8, load=1.1, max_duration=86400.0)
_LS = dict(load_time=30.0, save_time=10.0)
for _name, _c in {
    "overload-100k-default": dict(policy="srtf", engine="auto", record_log=True, repeat=3),
    "overload-100k-las-default": dict(policy="las", engine="auto", record_log=True, repeat=3),
    "overload-100k-ls": dict(policy="srtf", engine="auto", record_log=True, repeat=3, **_LS),
    "overload-100k-ls-periodic": dict(policy="srtf-periodic", engine="auto", record_log=True, repeat=3, **_LS),
    "overload-100k-ls-nolog": dict(policy="srtf", engine="auto", record_log=False, repeat=3, **_LS),
    "overload-100k-ls-python": dict(policy="srtf", engine="python", record_log=True, repeat=1, **_LS),
    "overload-100k-ls-periodic-python": dict(policy="srtf-periodic", engine="python", record_log=True, repeat=1, **_LS),
}.items():
    CASES[_name] = dict(_OVER, **_c)
_ONE_M = dict(n=1_000_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1, **_LS)
CASES["synthetic-1m-ls"] = dict(_ONE_M, engine="compiled", record_segments=False)
CASES["synthetic-1m-ls-default"] = dict(_ONE_M, engine="auto", record_log=True)
CASES["lazer-earth-100k"] = dict(n=100_000, special="lazer")
CASES["lazer-100k"] = dict(n=100_000, special="lazer-deferral")
CASES["auto-threshold"] = dict(n=20_000, special="threshold")
CASES["kernel-compile"] = dict(n=0, special="compile")
CASES["sweep-100k"] = dict(n=100_000, servers=750, gpus=8, special="sweep", engine="compiled")
#: cases skipped by --quick: a million jobs or more, the Python engine beyond 100,000 jobs, the sweep
BIG = {k for k, c in CASES.items() if c["n"] >= 1_000_000 or (c.get("engine") is None and c["n"] > 100_000)}
BIG |= {"sweep-100k", "lazer-earth-100k", "lazer-100k", "overload-100k-ls-python", "overload-100k-ls-periodic-python"}
#: the issues' targets: (case, field, target, unit)
TARGETS = [
    ("philly-1k", "sim_seconds", 0.1, "s"),
    ("philly-1k-las", "sim_seconds", 0.08, "s"),
    # issue 27 (the compiled kernel)
    ("overload-100k-compiled", "ratio_to_heapq", 1.0, "x"),
    ("overload-100k-las-compiled", "ratio_to_heapq", 1.0, "x"),
    ("synthetic-1m-compiled", "sim_seconds", 10.0, "s"),
    ("synthetic-1m-compiled", "peak_rss_mib", 0.8 * 1024, "MiB"),
    ("synthetic-1m-las-compiled", "sim_seconds", 20.0, "s"),
    ("helios-3.36m-compiled", "sim_seconds", 45.0, "s"),
    ("helios-3.36m-compiled", "peak_rss_mib", 2.5 * 1024, "MiB"),
    # issue 32: the default call and the papers' overheads on the kernel
    ("overload-100k-default", "ratio_to_heapq", 1.0, "x"),
    ("overload-100k-las-default", "ratio_to_heapq", 1.0, "x"),
    ("overload-100k-ls", "ratio_to_heapq", 2.0, "x"),
    ("overload-100k-ls-periodic", "ratio_to_heapq", 2.0, "x"),
    ("synthetic-1m-ls", "sim_seconds", 15.0, "s"),
    ("synthetic-1m-ls", "peak_rss_mib", 1024.0, "MiB"),
    # the first compile of the kernel (empty numba cache), once per machine
    ("kernel-compile", "compile_seconds", 15.0, "s"),
]
SCALING = ["scale-10k", "scale-100k", "scale-300k", "synthetic-1m", "helios-3.36m"]  # SRTF, load 1.0, capped
RESULTS = Path(__file__).parent / "results" / "sim.json"


def bare_heapq_seconds(n: int) -> tuple[float, float]:
    """(wall, CPU) seconds of a bare heapq loop of 4 events per job: n arrivals pushed, then every
    popped event of kind < 3 pushes the job's next one (4n pushes and pops of 4-tuples)."""
    import heapq

    t0, c0 = time.perf_counter(), time.process_time()
    h = [(float(i), 0, i, i) for i in range(n)]
    heapq.heapify(h)
    seq = n
    pop, push = heapq.heappop, heapq.heappush
    while h:
        t, kind, _, i = pop(h)
        if kind < 3:
            seq += 1
            push(h, (t + 1.0 + i % 7, kind + 1, seq, i))
    return time.perf_counter() - t0, time.process_time() - c0


def run_case(name: str) -> dict:
    """Run one case in this process and return its measurements."""
    import gc

    c = CASES[name]
    if c.get("special") == "compile":
        return compile_case(name)
    if c.get("special") == "sweep":
        return sweep_case(name)
    if c.get("special") == "lazer":
        return lazer_case(name)
    if c.get("special") == "lazer-deferral":
        return lazer_deferral_case(name)
    if c.get("special") == "threshold":
        return threshold_case(name)
    from optsched.core import Cluster
    from optsched.sim import Simulator, SplitContentionRate, get_policy
    from optsched.traces import synthetic_workload

    engine = c.get("engine", "python")
    cluster = Cluster.homogeneous(c["servers"], c["gpus"])
    t0 = time.perf_counter()
    df = synthetic_workload(
        c["n"], cluster_gpus=cluster.total_gpus, load=c["load"], max_duration=c["max_duration"], seed=0
    )
    gen = time.perf_counter() - t0
    gc.collect()
    heap_wall, heap_cpu = bare_heapq_seconds(c["n"])
    gc.collect()
    kw = {"engine": engine, "record_log": c.get("record_log", False)}
    kw.update({k: c[k] for k in ("load_time", "save_time", "record_segments") if k in c})
    if engine != "python":
        t1 = time.perf_counter()  # numba's import and the cached kernel's load: once per process
        Simulator(cluster, df.iloc[:20], get_policy(c["policy"]), engine="compiled").run()
        load_s = time.perf_counter() - t1
    times, cpu, run_only = [], [], []
    res = None
    for _ in range(c["repeat"]):
        t1, c1 = time.perf_counter(), time.process_time()
        rate = SplitContentionRate(0.2) if c.get("rate") == "split-contention" else None
        sim = Simulator(cluster, df, get_policy(c["policy"]), rate_model=rate, **kw)
        engine_used = "python" if getattr(sim, "_compiled", None) is None else "compiled"
        t2 = time.perf_counter()
        res = sim.run()
        t3, c3 = time.perf_counter(), time.process_time()
        times.append(t3 - t1)
        cpu.append(c3 - c1)
        run_only.append(t3 - t2)
    times.sort()
    cpu.sort()
    run_only.sort()
    sim_s = times[len(times) // 2]
    s = res.summary()
    return {
        "case": name,
        **{k: v for k, v in c.items() if k != "repeat"},
        "engine": engine,
        "engine_used": engine_used,
        "repeats": c["repeat"],
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": round(os.getloadavg()[0], 1),
        "generate_seconds": round(gen, 4),
        **({"kernel_load_seconds": round(load_s, 3)} if engine != "python" else {}),
        "sim_seconds": round(sim_s, 4),
        "sim_cpu_seconds": round(cpu[len(cpu) // 2], 4),
        "sim_cpu_seconds_best": round(cpu[0], 4),
        "ratio_to_heapq_best": round(cpu[0] / heap_cpu, 3),
        "run_seconds": round(run_only[len(run_only) // 2], 4),
        "heapq_seconds": round(heap_wall, 4),
        "heapq_cpu_seconds": round(heap_cpu, 4),
        "ratio_to_heapq": round(cpu[len(cpu) // 2] / heap_cpu, 3),
        "events": res.n_events,
        "events_per_second": round(res.n_events / sim_s),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "mean_jct": s["mean_jct"],
        "p99_jct": s["p99_jct"],
        "mean_queue_delay": s["mean_queue_delay"],
        "n_preemptions": s["n_preemptions"],
        "mean_utilization": round(s["mean_utilization"], 4),
    }


def compile_case(name: str) -> dict:
    """The compiled kernel's first call with an empty numba cache, in a fresh process (the cache is
    redirected to a temporary folder): import, compile and a 3-job run."""
    import tempfile

    code = (
        "import time; t0 = time.perf_counter(); c0 = time.process_time()\n"
        "from optsched.core import Cluster, Job\nfrom optsched.sim import Simulator, SRTF\n"
        "Simulator(Cluster.homogeneous(1, 2), [Job(i, 1.0 + i) for i in range(3)], SRTF(), record_log=False,"
        " engine='compiled').run()\n"
        "print(time.perf_counter() - t0, time.process_time() - c0)\n"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        wall, cpu = (float(x) for x in out.stdout.split())
        out2 = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        wall2, cpu2 = (float(x) for x in out2.stdout.split())
    return {
        "case": name,
        "n": 0,
        "engine": "compiled",
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": round(os.getloadavg()[0], 1),
        "compile_seconds": round(wall, 2),
        "compile_cpu_seconds": round(cpu, 2),
        "cached_first_call_seconds": round(wall2, 2),
        "cached_first_call_cpu_seconds": round(cpu2, 2),
        "sim_seconds": round(wall, 2),
    }


def lazer_case(name: str, n: int = 100_000) -> dict:
    """The Lazer study's Earth run (finding 6: 100,000 jobs, offered load 2, seed 0): each policy as
    :func:`optsched.experiments.lazer.simulate_policy` runs it (load and save times as functions of
    the job's model, decision timings: the Python engine), and the baselines with the same seconds as
    job-table columns and no decision timings (the kernel; the same schedules)."""
    import warnings

    from optsched.core import Cluster
    from optsched.experiments.lazer.study import POLICY_NAMES, _policy, simulate_policy
    from optsched.experiments.lazer.workloads import servers_for_load, workload
    from optsched.lazer import LoadSaveModel
    from optsched.sim import Simulator

    out = {"case": name, "n": n, "trace": "Earth", "rho": 2.0, "seed": 0, "policies": {}}
    out["measured"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out["load_average"] = round(os.getloadavg()[0], 1)
    df = workload("Earth", n, 0)
    servers = servers_for_load(df, 2.0)
    ls = LoadSaveModel(base=60.0)
    cols = df.assign(load_time=df["model"].map(ls.load_seconds), save_time=df["model"].map(ls.save_seconds))
    out["gpus"] = servers * 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in [*POLICY_NAMES, "Lazer X=0"]:
            row, _, _ = simulate_policy("Earth", p, 0, n, rho=2.0)
            got = {"study_wall_seconds": round(row["wall_s"], 2), "p50_jct_min": round(row["p50_jct"], 4)}
            pol = _policy(p, 0)
            t0 = time.perf_counter()
            sim = Simulator(Cluster.homogeneous(servers, 8), cols, pol)
            if getattr(sim, "_compiled", None) is not None:  # the same run on the kernel
                res2 = sim.run()
                got["kernel_wall_seconds"] = round(time.perf_counter() - t0, 2)
                got["kernel_same_p50"] = bool(abs(res2.summary()["p50_jct"] / 60 - row["p50_jct"]) < 1e-9)
            out["policies"][p] = got
    out["sim_seconds"] = max(v["study_wall_seconds"] for v in out["policies"].values())
    return out


def lazer_deferral_case(name: str, n: int = 100_000, x: float = 30.0) -> dict:
    """Lazer with a fixed deferral X on the Earth workload (100,000 jobs, offered load 2, seed 0, the
    load and save seconds of :class:`~optsched.lazer.LoadSaveModel` as job columns): the Python
    engine's run and the kernel's (each building the Simulator from the table; the kernel's first
    call in this process, numba's import and the cached kernel's load, reported apart)."""
    import numpy as np

    from optsched.core import Cluster
    from optsched.experiments.lazer.workloads import servers_for_load, workload
    from optsched.lazer import Lazer, LoadSaveModel
    from optsched.sim import Simulator
    from optsched.sim.compiled.build import prepare

    df = workload("Earth", n, 0)
    servers = servers_for_load(df, 2.0)
    ls = LoadSaveModel(base=60.0)
    cols = df.assign(load_time=df["model"].map(ls.load_seconds), save_time=df["model"].map(ls.save_seconds))
    out = {"case": name, "n": n, "trace": "Earth", "rho": 2.0, "seed": 0, "deferral_x": x, "gpus": servers * 8}
    out["measured"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    t0 = time.perf_counter()
    prepare()
    out["kernel_load_seconds"] = round(time.perf_counter() - t0, 2)
    runs = {}
    for engine in ("python", "compiled"):
        t0, c0 = time.perf_counter(), time.process_time()
        sim = Simulator(Cluster.homogeneous(servers, 8), cols, Lazer(deferral=x), engine=engine, record_log=False)
        runs[engine] = sim.run()
        out[f"{engine}_seconds"] = round(time.perf_counter() - t0, 2)
        out[f"{engine}_cpu_seconds"] = round(time.process_time() - c0, 2)
    a, b = runs["python"].job_columns(), runs["compiled"].job_columns()
    out["same_to_the_bit"] = all(
        np.array_equal(np.asarray(a[c]), np.asarray(b[c]), equal_nan=np.asarray(a[c]).dtype.kind == "f") for c in a
    )
    out["n_events"] = runs["compiled"].n_events
    out["speedup"] = round(out["python_seconds"] / out["compiled_seconds"], 1)
    out["load_average"] = round(os.getloadavg()[0], 1)
    out["sim_seconds"] = out["compiled_seconds"]
    return out


def threshold_case(name: str) -> dict:
    """SRTF at load 1.0 on 64 x 8 GPUs, 1,000 to 20,000 jobs: the Python engine's time, and a fresh
    process's compiled run including numba's import and the cached kernel's load (what
    ``engine="auto"`` costs the first simulation of a process), wall and CPU seconds, best of 3."""
    code = (
        "import sys, time\nfrom optsched.core import Cluster\nfrom optsched.traces import synthetic_workload\n"
        "cl = Cluster.homogeneous(64, 8)\n"
        "df = synthetic_workload(int(sys.argv[1]), cluster_gpus=512, load=1.0, max_duration=86400.0, seed=0)\n"
        "t0, c0 = time.perf_counter(), time.process_time()\nfrom optsched.sim import Simulator, SRTF\n"
        "Simulator(cl, df, SRTF(), engine=sys.argv[2]).run()\n"
        "print(time.perf_counter() - t0, time.process_time() - c0)\n"
    )
    rows = []
    for n in (1_000, 2_000, 5_000, 10_000, 20_000):
        row = {"n": n}
        for engine in ("python", "compiled"):
            runs = [
                subprocess.run(
                    [sys.executable, "-c", code, str(n), engine], capture_output=True, text=True, check=True
                ).stdout.split()
                for _ in range(3)
            ]
            row[engine + "_seconds"] = round(min(float(r[0]) for r in runs), 3)
            row[engine + "_cpu_seconds"] = round(min(float(r[1]) for r in runs), 3)
        rows.append(row)
    return {
        "case": name,
        "n": 20_000,
        "rows": rows,
        "sim_seconds": rows[-1]["compiled_seconds"],
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": round(os.getloadavg()[0], 1),
    }


def sweep_cell(load: float, seed: int, policy: str, n: int = 100_000, engine: str = "compiled") -> dict:
    """One cell of ``sweep-100k``: a synthetic workload replayed once (module level: it is pickled)."""
    from optsched.core import Cluster
    from optsched.sim import Simulator, get_policy
    from optsched.traces import synthetic_workload

    cluster = Cluster.homogeneous(750, 8)
    df = synthetic_workload(n, cluster_gpus=cluster.total_gpus, load=load, max_duration=86400.0, seed=seed)
    t0 = time.perf_counter()
    res = Simulator(cluster, df, get_policy(policy), record_log=False, engine=engine).run()
    s = res.summary()
    return {"sim_seconds": time.perf_counter() - t0, "mean_jct": s["mean_jct"], "n_preemptions": s["n_preemptions"]}


def sweep_case(name: str, python_seeds: int = 1) -> dict:
    """3 loads x 5 seeds x 4 policies x 100,000 jobs through the sweep machinery on a 2-worker Dask
    LocalCluster, compiled; the same grid for ``python_seeds`` seed(s) on the Python engine, for
    comparison."""
    from optsched.experiments.sweep import grid, sweep

    c = CASES[name]
    loads, policies = [0.9, 1.0, 1.1], ["fifo", "sjf", "srtf", "las"]
    out = {"case": name, "n": c["n"], "engine": "compiled", "workers": 2, "loads": loads, "policies": policies}
    out["measured"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out["load_average"] = round(os.getloadavg()[0], 1)
    for engine, seeds in (("compiled", range(5)), ("python", range(python_seeds))):
        t0 = time.perf_counter()
        df = sweep(
            sweep_cell,
            grid(load=loads, seed=list(seeds), policy=policies, engine=[engine]),
            executor="dask",
            n_workers=2,
            progress=False,
        )
        wall = time.perf_counter() - t0
        key = "" if engine == "compiled" else "python_"
        out[key + "cells"] = len(df)
        out[key + "wall_seconds"] = round(wall, 1)
        out[key + "cell_sim_seconds_median"] = round(float(df["sim_seconds"].median()), 3)
        out[key + "cell_sim_seconds_sum"] = round(float(df["sim_seconds"].sum()), 1)
    out["sim_seconds"] = out["wall_seconds"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_sim")
    ap.add_argument("--case", action="append", choices=list(CASES), help="run only these cases")
    ap.add_argument(
        "--quick", action="store_true", help="skip the cases of 1M+ jobs, Python cases over 100k jobs, the sweep"
    )
    ap.add_argument("--plot", action="store_true", help="only redraw docs/sim-scaling.png from the stored results")
    ap.add_argument("--timeout", type=float, default=None, help="give up a case after this many seconds")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_case(args.child)))
        return 0
    if args.plot:
        return plot_scaling()
    names = args.case or [n for n in CASES if not (args.quick and n in BIG)]
    for name in names:  # each case is saved as soon as it ends: a late failure loses nothing
        try:
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.bench_sim", "--child", name],
                capture_output=True,
                text=True,
                cwd=Path(__file__).resolve().parents[1],
                timeout=args.timeout,
            )
        except subprocess.TimeoutExpired:
            c = CASES[name]
            save(
                {
                    "case": name,
                    **{k: v for k, v in c.items() if k != "repeat"},
                    "sim_seconds": None,
                    "timed_out_after_seconds": args.timeout,
                }
            )
            print(f"{name:22s} {c['n']:>9,d} jobs  not finished within {args.timeout:g} s", flush=True)
            continue
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            raise SystemExit(f"bench_sim: case {name} failed")
        row = json.loads(out.stdout.strip().splitlines()[-1])
        save(row)
        if "events" not in row:  # kernel-compile, sweep-100k
            print(f"{name:28s} " + "  ".join(f"{k} {v}" for k, v in row.items() if k.endswith("seconds")), flush=True)
            continue
        print(
            f"{name:28s} {row['n']:>9,d} jobs  {row['sim_seconds']:8.3f} s  cpu {row['sim_cpu_seconds']:8.3f} s  "
            f"x{row['ratio_to_heapq']:6.2f} heapq  {row['events']:>9,d} events  peak {row['peak_rss_mib']:8.1f} MiB  "
            f"preemptions {row['n_preemptions']:,d}",
            flush=True,
        )
    plot_scaling()
    return 0


def save(row: dict) -> None:
    """Merge one case's row into benchmarks/results/sim.json (with the targets it measures)."""
    old = {}
    if RESULTS.exists():
        try:
            old = {r["case"]: r for r in json.loads(RESULTS.read_text()).get("cases", [])}
        except (json.JSONDecodeError, KeyError, TypeError):
            old = {}
    old[row["case"]] = row
    payload = {
        "benchmark": "sim",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": __import__("os").cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "cases": [old[k] for k in CASES if k in old],
    }
    payload["targets"] = [
        {"case": f"sim {case} {field}", "measured": old[case][field], "target": target, "unit": unit}
        for case, field, target, unit in TARGETS
        if case in old and old[case].get(field) is not None
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    from optsched.core.io import atomic_write_text

    atomic_write_text(RESULTS, json.dumps(payload, indent=2) + "\n")


def plot_scaling(out: Path | None = None) -> int:
    """docs/sim-scaling.png (or ``out``): SRTF's simulation time against the number of jobs on both
    engines (log-log, with the fitted exponents) and the time per event, from the stored results."""
    import numpy as np

    rows = {r["case"]: r for r in json.loads(RESULTS.read_text())["cases"]} if RESULTS.exists() else {}
    series = {}
    for engine, suffix in (("Python engine", ""), ("compiled kernel", "-compiled")):
        pts = sorted(
            (rows[c]["n"], rows[c]["sim_seconds"], rows[c]["events"])
            for c in (s + suffix for s in SCALING)
            if rows.get(c, {}).get("sim_seconds")
        )
        if len(pts) >= 2:
            series[engine] = [np.array(v, dtype=float) for v in zip(*pts, strict=True)]
    if not series:
        return 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from optsched.plot.files import save_figure
    from optsched.plot.style import PANELS_WIDTH, TEXT_SIZE, readable

    # as wide as a page's text column shows without shrinking the labels below 9 pt
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(PANELS_WIDTH, 4.2))
    for (engine, (n, t, ev)), color in zip(series.items(), ("tab:blue", "tab:red"), strict=False):
        slope = np.polyfit(np.log10(n), np.log10(t), 1)[0]
        ax.loglog(n, t, "o-", color=color, label=f"{engine}\n(time ~ jobs^{slope:.2f})")
        ax2.semilogx(n, 1e6 * t / ev, "o-", color=color, label=engine)
    n0 = min(s[0][0] for s in series.values())
    n1 = max(s[0][-1] for s in series.values())
    ax.loglog([n0, n1], [0.1 * n0 / 1e4, 0.1 * n1 / 1e4], ":", color="black", label="linear")
    ax.set_xlabel("jobs")
    ax.set_ylabel("simulation time (s, wall)")
    ax.set_title("SRTF, 750 x 8 GPUs, load 1.0")
    ax.legend(loc="lower right")
    ax2.set_xlabel("jobs")
    ax2.set_ylabel("µs per event")
    ax2.set_yscale("log")
    ax2.set_title("per event")
    ax2.legend()
    readable(ax)
    readable(ax2)
    fig.suptitle("optsched.sim on 2 shared cores\n(benchmarks/results/sim.json)", fontsize=TEXT_SIZE)
    fig.tight_layout()
    out = out or Path(__file__).resolve().parents[1] / "docs" / "sim-scaling.png"
    save_figure(fig, out.parent, out.stem, formats=("png",))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
