"""``optsched simulate``: replay a trace, a job file or a synthetic workload with an online policy.

Examples::

    optsched simulate --trace openb-sample --jobs 1800 --load 0.9 --policy srtf   # 3 x 8 GPUs at load 0.909
    optsched simulate --trace synthetic --jobs 100000 --load 0.8 --policy fifo --servers 750 --gpus-per-server 8
    optsched simulate --trace cluster_log.csv --policy las --servers 100 --gpus-per-server 8 --out results/
    optsched simulate --jobs-csv my_jobs.csv --columns arrival=submit,gpus=n_gpu --servers 4 --policy srtf
    optsched simulate --trace openb --servers 3 --policy fifo --no-backfill --placement whole_node

The workload is a shipped trace name (openb, openb-sample), a trace file (Philly .json, Helios,
Acme or OpenB .csv), the calibrated synthetic generator, or --jobs-csv FILE: a CSV or Parquet
file with columns arrival, gpus, duration (s; optional job_id, user, work, model, status,
load_time, save_time), other names mapped with --columns ours=yours. --no-backfill and
--placement whole_node give Tiresias' strict FIFO and "yarn" placement. Every input and the
--out folder are checked before the simulation starts.

The load means what it means in `optsched compare` (the same workload step): for synthetic jobs,
--load R scales the arrivals so that the offered load over the window in which the jobs run is R
on --servers x --gpus-per-server GPUs, durations capped at --max-duration (default one day); for
a trace or job file, --load R sizes the cluster for it instead of --servers (one of the two is
needed, also for the shipped OpenB traces: on their own 1,213 nodes no job would wait and every
policy would give the same result). The title states the load reached and, when whole servers
miss it, the --servers N or --load R they do reach.

Periods and load times are checked against the workload too: one the simulator could not finish
within its limits is refused at once, with the value that fits. Ctrl-C, SIGTERM or SIGHUP stops
the run (a file being written is finished first). Exit codes: 0 ok; 1 the simulation failed or
its results could not be written (out of memory, a full disk); 2 bad input (trace, file, column,
option, --out, or --out in use by another run); 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP)
interrupted.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings

import optsched
from optsched.commands._common import (
    EXIT_OK,
    add_workload_options,
    check_overhead,
    check_period,
    fmt_people,
    out_folder,
    print_json,
    print_table,
    workload_from_args,
)
from optsched.exceptions import (
    InvalidInstanceError,
    InvalidOptionError,
    SimulationLimitError,
    UnknownNameError,
    WriteError,
)

SUMMARY_KEYS = [
    "policy",
    "n_jobs",
    "n_done",
    "n_failed",
    "mean_jct",
    "p50_jct",
    "p95_jct",
    "p99_jct",
    "mean_queue_delay",
    "p99_queue_delay",
    "mean_waiting",
    "p99_waiting",
    "makespan",
    "total_weighted_flow_time",
    "mean_utilization_arrivals",
    "mean_utilization_makespan",
    "utilization_window",
    "n_preemptions",
    "n_events",
]

#: The simulator's baseline policies and placement rules (kept here so that ``--help`` imports
#: nothing heavy; a test checks them against ``optsched.sim.POLICIES`` and ``PLACEMENT_RULES``).
#: Paper policies come from the registry (``optsched info``) and are checked before any work.
POLICY_CHOICES = ("fifo", "sjf", "srtf", "las", "srtf-periodic")
PLACEMENT_CHOICES = ("consolidate", "first_fit", "least_loaded", "random", "whole_node")
ENGINE_CHOICES = ("auto", "python", "compiled")  # optsched.sim.options.ENGINES (a test checks)

#: Peak memory per job of a replay (bytes), measured by ``make bench`` (1M jobs: 2.5 GiB).
BYTES_PER_JOB = 2700


def add_parser(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="replay a trace (or a synthetic workload) with an online policy",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_workload_options(p)
    p.add_argument(
        "--policy",
        default="fifo",
        metavar="POLICY",
        help=f"online policy: {', '.join(POLICY_CHOICES)} (default fifo), or a paper's registered policy "
        f"(`optsched info` lists them all)",
    )
    p.add_argument(
        "--placement",
        default=None,
        choices=PLACEMENT_CHOICES,
        help="placement rule of the baselines (default: the policy's own, consolidate; whole_node = Tiresias' yarn)",
    )
    p.add_argument("--no-backfill", action="store_true", help="strict order: a blocked head job blocks the queue")
    p.add_argument(
        "--period",
        type=float,
        default=None,
        help="srtf-periodic: seconds between decisions (default 60); las: the quantum (default 60)",
    )
    p.add_argument("--arrivals", default="poisson", choices=("poisson", "trace"), help="synthetic arrivals")
    p.add_argument(
        "--overheads",
        choices=("none", "model"),
        default=None,
        help="model (the default, as in compare): each job's load/save times from its model size (Lazer's "
        "model); none: no load or save time, or the same --load-time/--save-time for every job (giving "
        "either of those chooses none)",
    )
    p.add_argument("--load-base", type=float, default=60.0, help="--overheads model: fixed part of every load, s (60)")
    p.add_argument("--load-time", type=float, default=0.0, help="seconds of loading before each (re)start")
    p.add_argument("--save-time", type=float, default=0.0, help="seconds of pause-and-save after a preemption")
    p.add_argument(
        "--skip-oversized",
        action="store_true",
        help="drop (and count) jobs needing more GPUs than the cluster has, instead of refusing",
    )
    p.add_argument(
        "--max-jobs",
        type=int,
        default=5_000_000,
        help="refuse workloads with more jobs (memory estimate ~2.7 KB/job; default 5,000,000)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        type=out_folder,
        help="write jobs, utilization and summary.json to this folder (checked first; see --force)",
    )
    p.add_argument("--force", action="store_true", help="replace the files of an existing, non-empty --out folder")
    p.add_argument("--out-format", default="csv", choices=("csv", "parquet"))
    p.add_argument(
        "--engine",
        default="auto",
        choices=ENGINE_CHOICES,
        help="auto (default): the compiled kernel where it covers the run (FIFO/SJF/SRTF/LAS/srtf-periodic, "
        "5,000+ jobs), else Python; python; compiled (an error if it does not cover the run)",
    )
    p.add_argument(
        "--verbose", "-v", action="store_true", help="say on stderr which engine runs the simulation and why"
    )
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.set_defaults(func=run)


def _check_options(args) -> None:
    for name, value, low in (
        ("--servers", args.servers, 1),
        ("--gpus-per-server", args.gpus_per_server, 1),
        ("--jobs", args.jobs, 1),
        ("--max-jobs", args.max_jobs, 1),
    ):
        if value is not None and value < low:
            raise InvalidOptionError(f"{name} must be >= {low}; got {value}.")
    for name, value in (("--load-time", args.load_time), ("--save-time", args.save_time)):
        if not value >= 0 or value == float("inf"):
            raise InvalidOptionError(f"{name} must be a finite number of seconds >= 0; got {value}.")
    if args.max_duration is not None and not (0 <= args.max_duration < float("inf")):
        raise InvalidOptionError(
            f"--max-duration must be a number of seconds >= 0 (0: no cap); got {args.max_duration}."
        )
    if args.overheads is None:  # one default with compare: the model, unless fixed times are given
        args.overheads = "none" if (args.load_time or args.save_time) else "model"
    if args.overheads == "model" and (args.load_time or args.save_time):
        raise InvalidOptionError(
            "--overheads model gives each job its own load and save times; give it or --load-time/--save-time."
        )
    if not (0 <= args.load_base < float("inf")):
        raise InvalidOptionError(f"--load-base must be a number of seconds >= 0; got {args.load_base}.")
    if args.columns and not args.jobs_csv:
        raise InvalidOptionError("--columns maps the columns of --jobs-csv FILE; give --jobs-csv too.")
    if args.trace == "synthetic" and args.jobs is not None and args.jobs > args.max_jobs:
        raise InvalidOptionError(_too_many(args.jobs, args.max_jobs))


def _overheads_note(args) -> str:
    """The title's words for the load and save times the run charged."""
    if args.overheads == "model":
        return f"load/save times from each job's model (base {args.load_base:g} s)"
    if args.load_time or args.save_time:
        return f"load {args.load_time:g} s / save {args.save_time:g} s per job"
    return "no load or save times"


def policy_spec_needs(name: str) -> tuple[str, ...]:
    """The job columns a registered paper policy needs (none for the baselines)."""
    if name in POLICY_CHOICES:
        return ()
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.sim.registry import policy_key, policy_registry

    spec = policy_registry().get(policy_key(name))
    return spec.needs if spec is not None else ()


def _too_many(n: int, limit: int) -> str:
    return (
        f"The workload has {n:,} jobs, more than --max-jobs {limit:,} (about {n * BYTES_PER_JOB / 2**30:.1f} GiB "
        f"of memory at ~{BYTES_PER_JOB / 1000:.1f} KB per job). Keep fewer with --jobs N, or raise --max-jobs if "
        f"this machine has the memory."
    )


def _check_against_workload(args, df, cluster) -> None:
    """Periods and overheads against the workload, before the run: refused when the run could not
    end within the simulator's limits (the message names the option and the value that fits)."""
    import numpy as np

    arrival = np.asarray(df["arrival"], dtype=float)
    work = np.asarray(df["work"] if "work" in df else df["duration"], dtype=float)
    if args.period is not None:
        what = "quantum ticks" if args.policy == "las" else "decisions"
        check_period("--period", args.period, arrival, work, what=what)
    check_overhead("--load-time", args.load_time, arrival, work, np.asarray(df["gpus"]), cluster.total_gpus)


def _livelock(args, e: Exception) -> str:
    """A run past the simulator's limits, in the command line's words."""
    why = str(e).split(". A livelock")[0]
    opts = [f"--policy {args.policy}"]
    if args.load_time or args.save_time:
        opts.append(f"--load-time {fmt_people(args.load_time)} s, --save-time {fmt_people(args.save_time)} s")
    if args.period is not None:
        opts.append(f"--period {fmt_people(args.period)} s")
    if args.period is not None and "max_time=" in why:  # simulated time ran out: decisions too far apart
        return (
            f"The simulation did not end: {why[0].lower() + why[1:]}. With {', '.join(opts)} waiting jobs start "
            f"only at the next decision, {fmt_people(args.period)} s apart, so the run needs more simulated time "
            f"than the simulator gives it. Use a shorter --period (at most the jobs' typical duration), or a "
            f"non-preemptive policy (--policy fifo or sjf)."
        )
    return (
        f"The simulation did not end: {why[0].lower() + why[1:]}. Jobs were preempted and restarted over and "
        f"over, or the run is longer than the simulator takes (with {', '.join(opts)}). Use a non-preemptive "
        f"policy (--policy fifo or sjf), shorter --load-time/--save-time, or a longer --period."
    )


def run(args) -> int:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.output import prepare_out_dir
    from optsched.sim import Simulator

    _check_options(args)
    if args.verbose:  # the engine's choice (logger optsched.sim, INFO) on stderr
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("optsched: %(message)s"))
        logger = logging.getLogger("optsched.sim")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    policy = _policy_of(args)
    t0 = time.perf_counter()
    w, df = _workload_of(args)
    cluster, n_rows = w.cluster, len(df["arrival"])
    out_dir = (
        prepare_out_dir(args.out, force=args.force, command="simulate", inputs=(args.trace, args.jobs_csv))
        if args.out
        else None
    )
    t_load = time.perf_counter() - t0
    sim = Simulator(
        cluster,
        df,
        policy,
        load_time=args.load_time,
        save_time=args.save_time,
        seed=args.seed,
        record_log=False,
        progress=not args.quiet and sys.stderr.isatty() and n_rows >= 10000,
        engine=args.engine,
    )
    t1 = time.perf_counter()
    try:
        res = sim.run()
    except SimulationLimitError as e:
        raise SimulationLimitError(_livelock(args, e)) from None
    t_run = time.perf_counter() - t1
    summary = _summary_of(args, res, df, w, t_load, t_run)
    if out_dir is not None:
        summary["files"] = _write_results(res, out_dir, args.out_format, n_rows)
    if args.json:
        print_json(summary)
        return EXIT_OK
    print(
        f"{w.name}: {n_rows:,} jobs on {cluster.n_servers} server{'s' * (cluster.n_servers != 1)} / "
        f"{cluster.total_gpus} GPUs, {w.note}, {_overheads_note(args)}, "
        f"policy {policy!r}; simulated in {t_run:.2f} s ({res.n_events / max(t_run, 1e-9):,.0f} events/s)"
        + (f"; compiled the simulator core first in {res.compile_seconds:.1f} s (once)" if res.compile_seconds else "")
    )
    if w.n_skipped:
        print(f"skipped {w.n_skipped} job(s) larger than the cluster (--skip-oversized)")
    print_table([{"metric": k, "value": summary.get(k)} for k in SUMMARY_KEYS])
    if out_dir is not None:
        print(f"wrote {', '.join(summary['files'])}")
    return EXIT_OK


def _policy_of(args):
    """The policy ``--policy`` names, built with the options given for it (checked first)."""
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.sim import get_policy

    extra = {}
    if args.period is not None:
        if args.policy not in ("srtf-periodic", "las"):
            raise InvalidOptionError(
                f"--period is for srtf-periodic (decision interval) and las (quantum); --policy is {args.policy!r}."
            )
        extra = {"period" if args.policy == "srtf-periodic" else "quantum": args.period}
    if args.policy in POLICY_CHOICES:
        if args.placement is not None:
            extra["placement"] = args.placement
        return get_policy(args.policy, backfill=not args.no_backfill, **extra)
    # a paper's policy: its options are its own; the job data it needs is checked with the workload
    from optsched.sim.registry import policy_key, policy_registry

    optsched.load_plugins()
    spec = policy_registry().get(policy_key(args.policy))
    if spec is None:
        raise UnknownNameError(
            f"Unknown policy {args.policy!r}; choose one of {sorted(policy_registry())} "
            f"(`optsched info` describes them)."
        )
    if args.no_backfill or args.placement is not None:
        raise InvalidOptionError(
            f"--placement and --no-backfill are options of the baselines; policy {spec.name!r} has its own."
        )
    return spec.factory()


def _workload_of(args):
    """The workload the options describe and its job columns, with the per-job load and save times
    of ``--overheads model``, checked against the policy's needs and the limits."""
    w = workload_from_args(args, arrivals=args.arrivals, skip_oversized=args.skip_oversized)
    df, cluster, name = w.jobs(args.seed), w.cluster, w.name
    n_rows = len(df["arrival"])
    if n_rows > args.max_jobs:
        raise InvalidOptionError(_too_many(n_rows, args.max_jobs))
    missing = [c for c in policy_spec_needs(args.policy) if c not in df]
    if missing:
        raise InvalidOptionError(
            f"Policy {args.policy!r} needs job data the workload lacks: {missing}. Give a job "
            f"table with those columns, or another policy."
        )
    if n_rows == 0:
        raise InvalidInstanceError(f"No job of {name!r} is left to simulate; give a workload with at least one job.")
    if args.overheads == "model":  # the per-job load/save times of compare's default, drawn the same way
        # deferred: a paper's enrichment, needed only with --overheads model
        from optsched.lazer.workload import drawn_load_save, with_load_save

        if hasattr(df, "columns") or "model" in df:
            import pandas as pd  # deferred: a table naming its models is read with pandas

            df = with_load_save(df if hasattr(df, "columns") else pd.DataFrame(df), base=args.load_base, seed=args.seed)
        else:  # numpy columns (the synthetic generator): the same draw, without pandas
            ids = df["job_id"] if "job_id" in df else range(n_rows)
            df = dict(df)
            df["model"], df["load_time"], df["save_time"] = drawn_load_save(ids, base=args.load_base, seed=args.seed)
        check_overhead("--load-base", args.load_base, df["arrival"], df["duration"], df["gpus"], cluster.total_gpus)
    _check_against_workload(args, df, cluster)
    return w, df


def _summary_of(args, res, df, w, t_load: float, t_run: float) -> dict:
    """The run's summary: the simulator's metrics, the workload and the timings, with a warning when
    no job ever waited."""

    import numpy as np

    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.units import fmt_number
    from optsched.sim.registry import policy_key

    cluster = w.cluster
    summary = res.summary()
    # the registry name asked for (lazer-gp and lazer-zero are both a policy object named 'lazer')
    summary["policy"] = policy_key(args.policy)
    arrivals = np.asarray(df["arrival"], dtype=float)
    summary["utilization_window"] = (
        f"arrivals: {fmt_number(float(arrivals.min()))} to {fmt_number(float(arrivals.max()))} s; "
        f"makespan: 0 to {fmt_number(float(res.end_time))} s"
    )
    summary.update(
        {
            "trace": w.name,
            "offered_load": w.load,
            "load": w.note,
            "servers": cluster.n_servers,
            "gpus": cluster.total_gpus,
            "n_skipped_oversized": w.n_skipped,
            "load_seconds": round(t_load, 3),
            "sim_seconds": round(t_run, 3),
            "compile_seconds": round(res.compile_seconds, 3),
        }
    )
    waiting = res.job_columns()["waiting"]
    if len(waiting) and float(np.nanmax(waiting)) <= 1e-9:
        msg = (
            f"No job ever waited: the cluster ({cluster.n_servers} servers, {cluster.total_gpus} GPUs, mean "
            f"utilization {summary['mean_utilization_makespan']:.2%}) is so large that every policy gives the same "
            f"result. "
            f"Use fewer servers (--servers N) to compare policies under contention."
        )
        summary["warning"] = msg
        warnings.warn(msg, stacklevel=1)
    return summary


def _write_results(res, out_dir, out_format: str, n_rows: int) -> list[str]:
    """The result files, written whole (a signal waits until they are); out of memory is named as such."""
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.output import recorded_files
    from optsched.solvers import interrupt

    with interrupt.deferred():  # a signal waits until the files are written
        try:
            return res.to_files(out_dir, out_format)
        except (MemoryError, WriteError) as e:
            if isinstance(e, WriteError) and not isinstance(e.cause, MemoryError):
                raise  # a full disk: its message names the file and the fix
            raise WriteError(
                f"Out of memory while writing the results of {n_rows:,} jobs to {str(out_dir)!r} (done: "
                f"{', '.join(recorded_files(out_dir)) or 'none'}; each file is whole or absent). Simulate fewer "
                f"jobs (--jobs N), or write Parquet (--out-format parquet), or free memory."
            ) from None
