"""``optsched simulate --trace NAME|PATH --policy NAME --servers N --gpus-per-server G``: replay a trace.

Examples::

    optsched simulate --trace openb --policy srtf                  # shipped OpenB trace, OpenB nodes
    optsched simulate --trace synthetic --jobs 100000 --load 0.8 --policy fifo --servers 750 --gpus-per-server 8
    optsched simulate --trace cluster_log.csv --policy las --servers 100 --gpus-per-server 8 --out results/
"""

from __future__ import annotations

import time

from optsched.commands._common import EXIT_OK, print_json, print_table

SUMMARY_KEYS = ["policy", "n_jobs", "n_done", "n_failed", "mean_jct", "p50_jct", "p95_jct", "p99_jct",
                "mean_queue_delay", "p99_queue_delay", "makespan", "total_weighted_flow_time", "mean_utilization",
                "n_preemptions", "n_events"]


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="replay a trace (or a synthetic workload) with an online policy")
    p.add_argument("--trace", required=True,
                   help="openb | openb-sample | synthetic | a trace file (Philly .json, Helios/Acme/OpenB .csv)")
    p.add_argument("--format", default=None, help="trace file format if not detected: philly, helios, acme, openb")
    p.add_argument("--policy", default="fifo", help="fifo, sjf, srtf, las (default fifo)")
    p.add_argument("--placement", default="consolidate", help="consolidate, first_fit, least_loaded, random")
    p.add_argument("--no-backfill", action="store_true", help="strict order: a blocked head job blocks the queue")
    p.add_argument("--servers", type=int, default=None, help="number of servers (default for openb: its nodes)")
    p.add_argument("--gpus-per-server", type=int, default=8)
    p.add_argument("--jobs", type=int, default=None, help="synthetic: number of jobs; traces: keep the first N")
    p.add_argument("--load", type=float, default=0.8, help="synthetic: offered load (default 0.8)")
    p.add_argument("--arrivals", default="poisson", help="synthetic: poisson or trace")
    p.add_argument("--load-time", type=float, default=0.0, help="seconds of loading before each (re)start")
    p.add_argument("--save-time", type=float, default=0.0, help="seconds of pause-and-save after a preemption")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="write jobs, utilization and summary.json to this directory")
    p.add_argument("--out-format", default="csv", choices=["csv", "parquet"])
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.set_defaults(func=run)


def run(args) -> int:
    from optsched.core import Cluster
    from optsched.exceptions import InvalidOptionError
    from optsched.sim import Simulator, get_policy
    from optsched.traces import load_trace, openb_cluster, synthetic_workload

    if args.servers is not None and args.servers < 1:
        raise InvalidOptionError(f"--servers must be >= 1; got {args.servers}.")
    if args.gpus_per_server < 1:
        raise InvalidOptionError(f"--gpus-per-server must be >= 1; got {args.gpus_per_server}.")
    if args.jobs is not None and args.jobs < 1:
        raise InvalidOptionError(f"--jobs must be >= 1; got {args.jobs}.")
    if args.trace in ("openb", "openb-sample") and args.servers is None:
        cluster = openb_cluster()
    elif args.servers is None:
        raise InvalidOptionError(f"Give --servers N (and --gpus-per-server G) for trace {args.trace!r}.")
    else:
        cluster = Cluster.homogeneous(args.servers, args.gpus_per_server)
    t0 = time.perf_counter()
    if args.trace == "synthetic":
        df = synthetic_workload(args.jobs or 1000, cluster_gpus=cluster.total_gpus, load=args.load,
                                arrivals=args.arrivals, max_gpus=cluster.total_gpus, seed=args.seed)
    else:
        df = load_trace(args.trace, format=args.format)
        if args.jobs is not None:
            df = df.iloc[: args.jobs]
    policy = get_policy(args.policy, placement=args.placement, backfill=not args.no_backfill)
    t_load = time.perf_counter() - t0
    sim = Simulator(cluster, df, policy, load_time=args.load_time, save_time=args.save_time, seed=args.seed,
                    record_log=False, progress=not args.no_progress and len(df) >= 10000)
    t1 = time.perf_counter()
    res = sim.run()
    t_run = time.perf_counter() - t1
    summary = res.summary()
    summary.update({"trace": args.trace, "servers": cluster.n_servers, "gpus": cluster.total_gpus,
                    "load_seconds": round(t_load, 3), "sim_seconds": round(t_run, 3)})
    if args.out:
        paths = res.to_files(args.out, args.out_format)
        summary["files"] = paths
    if args.json:
        print_json(summary)
    else:
        print(f"{args.trace}: {len(df)} jobs on {cluster.n_servers} servers / {cluster.total_gpus} GPUs, "
              f"policy {policy!r}; simulated in {t_run:.2f} s ({res.n_events / max(t_run, 1e-9):,.0f} events/s)")
        print_table([{"metric": k, "value": summary.get(k)} for k in SUMMARY_KEYS])
        if args.out:
            print(f"wrote {', '.join(summary['files'])}")
    return EXIT_OK
