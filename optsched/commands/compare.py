"""optsched compare: every online policy on one workload, each beside a lower bound.

Examples:

    optsched compare --trace openb-sample --jobs 1800 --load 0.9 --out cmp/   # 3 x 8 GPUs at load 0.909
    optsched compare --trace synthetic --jobs 1000 --servers 16 --gpus-per-server 8 --load 0.9
    optsched compare --jobs-csv my_jobs.csv --load 0.8 --policies fifo,srtf,lazer,asrpt-a-srpt
    optsched compare --trace cluster_log.csv --servers 40 --overheads none --json

The workload is a shipped trace (openb, openb-sample), a trace file (Philly, Helios, Acme, PAI,
OpenB format), your own job table (--jobs-csv: arrival, gpus, duration; optional model, status,
user), or the calibrated synthetic generator (a new draw per seed). Every paper's policies run on
it: each paper's enrichment adds what its policies need (model profiles, worker/PS shapes, stage
probabilities, load/save times) under assumptions written in formulations/<key>.md; a policy that
still cannot run is listed with the reason and how to supply what it needs. The A-SRPT rows run
under their paper's communication model, with --asrpt-nic-gbps per server (default 100 per GPU;
the paper's setting is 10); the table's title and a note under it say so.

The load means what it says. For a trace, --load R sizes the cluster (servers of
--gpus-per-server GPUs) so that the offered load over the replay window (first arrival to the
last arrival + duration) is R, or --servers N gives the cluster: one of the two is needed, also
for the shipped OpenB traces, on whose own 1,213 nodes every policy would tie. When whole
servers miss R, the title names the --servers N or --load R they reach. For synthetic jobs,
arrivals are scaled so that the load is R on --servers x --gpus-per-server, with durations
capped at --max-duration (default one day).
Times are measured from the first arrival (a table in Unix time is fine).

Every table has a lower bound on the mean JCT that no policy can beat, the same whatever
--policies says (formulations/rigid.md#jct-bound), and each row's ratio to it. Rows are sorted
by mean JCT (--sort another column); rows ten times the bound or more get a note saying why.

Runs go in parallel: --workers N processes (default: this machine's cores), or a Dask cluster
(--dask tcp://host:8786, or --dask local for one started here); the table is the same.

--out DIR gets compare.csv (or --format json/parquet; rewritten as each policy ends, so a long
run that fails late or is interrupted keeps its finished rows), bound.json (the bound, the
assumptions, the cluster), and the pictures jct_cdf, jct_summary, queue_delay_cdf, utilization
(PNG and SVG). A policy that raises gets a failed row (the reason, and the command that runs it
alone); the others finish. Ctrl-C, SIGTERM or SIGHUP stops the run and writes the finished rows,
bound.json and the pictures (--json prints the finished rows; without --out the finished rows are
printed as the table). Progress: a bar on a terminal, else one line per finished row on stderr
(rows done, elapsed, expected). Exit codes: 0 ok; 1 a policy failed
(the table is written) or the results could not be written; 2 bad input (also: no policy can run
on the workload, or --out is in use by another run); 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP)
interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys

from optsched.commands._common import (
    EXIT_FAILED,
    EXIT_OK,
    add_output_options,
    add_workload_options,
    check_overhead,
    print_json,
    print_table,
    workload_from_args,
)
from optsched.exceptions import InvalidOptionError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compare",
        help="every online policy on one workload, each beside a lower bound",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_workload_options(p)
    p.add_argument("--policies", default="all", help="'all' or a comma list (see `optsched info`)")
    p.add_argument("--placement", default=None, help="placement rule for every policy that takes one")
    p.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="runs per policy (seeds --seed, --seed+1, ...); >1 gives mean and 95%% interval",
    )
    p.add_argument(
        "--overheads",
        choices=("model", "none"),
        default="model",
        help="load/save times from each job's model size (Lazer's model; default) or none",
    )
    p.add_argument("--load-base", type=float, default=60.0, help="fixed part of every load, s (default 60)")
    p.add_argument("--elastic-slot", type=float, default=None, help="slot of the elastic policies, s (default: auto)")
    p.add_argument(
        "--asrpt-nic-gbps",
        type=float,
        default=None,
        metavar="GBPS",
        help="NIC bandwidth per server of the A-SRPT rows' time model, Gbit/s (default: 100 per GPU, "
        "800 for 8-GPU servers; the A-SRPT paper's setting: 10)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="runs at once, in processes (default: this machine's cores; one process for small workloads)",
    )
    p.add_argument(
        "--dask",
        default=None,
        metavar="ADDRESS",
        help="run on a Dask cluster: a scheduler address (tcp://host:8786) or 'local' (started here)",
    )
    p.add_argument("--sort", default="mean_jct", metavar="COLUMN", help="sort the rows by this column (mean_jct)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_output_options(p)
    p.set_defaults(func=run)


def _check(args) -> None:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.limits import LIMITS_DOC, MAX_SECONDS, MIN_SECONDS
    from optsched.core.placement import check_placement
    from optsched.traces.load import LOAD_CAP

    if args.servers is not None and args.servers < 1:
        raise InvalidOptionError(f"--servers must be >= 1; got {args.servers}.")
    if args.gpus_per_server < 1:
        raise InvalidOptionError(f"--gpus-per-server must be >= 1; got {args.gpus_per_server}.")
    if args.jobs is not None and args.jobs < 1:
        raise InvalidOptionError(f"--jobs must be >= 1; got {args.jobs}.")
    if args.seeds < 1:
        raise InvalidOptionError(f"--seeds must be >= 1; got {args.seeds}.")
    if args.workers is not None and args.workers < 1:
        raise InvalidOptionError(
            f"--workers must be a whole number >= 1 (processes running policies at once); got {args.workers}."
        )
    if args.dask is not None and args.workers is not None and args.dask != "local":
        raise InvalidOptionError(
            "--workers sizes the local processes (or --dask local); an existing Dask cluster has its own workers: "
            "give --dask ADDRESS without --workers."
        )
    if args.load is not None and not (0 < args.load < LOAD_CAP):
        raise InvalidOptionError(
            f"--load must be in (0, {LOAD_CAP:g}) (offered GPU-seconds / the cluster's GPU-seconds); got {args.load}."
        )
    if args.max_duration is not None and not (args.max_duration >= 0 and math.isfinite(args.max_duration)):
        raise InvalidOptionError(
            f"--max-duration must be a number of seconds >= 0 (0: no cap); got {args.max_duration}."
        )
    if args.max_duration is not None and 0 < args.max_duration < MIN_SECONDS:
        raise InvalidOptionError(
            f"--max-duration {args.max_duration:g} s is shorter than the shortest job the simulator takes "
            f"({MIN_SECONDS:g} s; {LIMITS_DOC}); give a cap of at least {MIN_SECONDS:g} s, or 0 for none."
        )
    if not (args.load_base <= MAX_SECONDS):
        raise InvalidOptionError(
            f"--load-base must be a number of seconds in [0, {MAX_SECONDS:g}] ({LIMITS_DOC}); got {args.load_base:g}."
        )
    if not (args.load_base >= 0 and math.isfinite(args.load_base)):
        raise InvalidOptionError(f"--load-base must be a number of seconds >= 0; got {args.load_base}.")
    if args.elastic_slot is not None and not (args.elastic_slot > 0 and math.isfinite(args.elastic_slot)):
        raise InvalidOptionError(f"--elastic-slot must be a number of seconds > 0; got {args.elastic_slot}.")
    if args.asrpt_nic_gbps is not None:
        from optsched.asrpt.workload import check_nic_gbps

        check_nic_gbps(args.asrpt_nic_gbps, args.gpus_per_server)
    check_placement(args.placement, option="--placement")
    if args.policies.strip(" ,") == "":
        raise InvalidOptionError(
            f"--policies {args.policies!r} names no policy; give 'all' or a comma list such as fifo,srtf,lazer "
            f"(`optsched info` lists them)."
        )
    if args.columns is not None and not args.jobs_csv:
        raise InvalidOptionError("--columns maps the columns of --jobs-csv FILE; give --jobs-csv too.")


def _workload(args):
    """(workload, cluster, name, load note, load reached): a table or seed -> table, and the cluster."""
    w = workload_from_args(args)
    _check_overheads(args, w.jobs(args.seed), w.cluster)
    return w.source, w.cluster, w.name, w.note, w.load


def _check_overheads(args, df, cluster) -> None:
    """--load-base against the workload (every job loads at least that long before it runs)."""
    if args.overheads != "model":
        return
    work = df["work"] if "work" in df and "duration" not in df else df["duration"]
    check_overhead("--load-base", args.load_base, df["arrival"], work, df["gpus"], cluster.total_gpus)


def run(args) -> int:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.output import check_formats, prepare_out_dir, recorded_files, write_table
    from optsched.experiments.compare import Comparison, available_policies
    from optsched.experiments.compare.comparison import policy_names
    from optsched.solvers import interrupt

    _check(args)
    try:
        policies = policy_names("all" if args.policies == "all" else args.policies.split(","), available_policies())
    except InvalidOptionError as e:  # the message names the policy; say which option it came from
        msg = str(e)
        raise InvalidOptionError(f"--policies: {msg[:1].lower()}{msg[1:]}") from None
    formats = check_formats(args.format or ["csv"])
    workload, cluster, name, note, load = _workload(args)
    enrich = {"elastic": {"slot": args.elastic_slot}} if args.elastic_slot is not None else {}
    if args.asrpt_nic_gbps is not None:
        enrich["asrpt"] = {"bandwidth_inter": args.asrpt_nic_gbps * 1e9 / 8}
    out = None

    def on_row(row, rows):
        if out is not None:
            import pandas as pd

            with interrupt.deferred():  # a signal waits until the table is written
                write_table(pd.DataFrame(rows), out, "compare", formats=formats)

    comparison = None

    def stopped() -> int:  # a signal, or a handler that called comparison.stop(): keep what finished
        table = None if comparison is None else comparison.table()
        per_job = {} if comparison is None else comparison.per_job
        finished = table if table is not None and len(table) else None
        done = 0 if finished is None else int(len(finished))
        with interrupt.deferred():  # a second signal does not cut the writing
            if out is not None and finished is not None:
                write_table(finished, out, "compare", formats=formats)
                _write_extras(finished, per_job, out, cluster, name, note, load)
        if args.json:
            _print_json(name, cluster, note, table, finished, load)
        elif finished is not None and out is None:  # nowhere else to keep them
            _print_text(finished, cluster, name, note, args)
        kept = f"; the finished rows are in {out}/compare.{formats[0]}" if out is not None and done else ""
        if out is None and done:
            kept = "; the finished rows are printed above" if not args.json else "; the finished rows are in the JSON"
        if out is not None and done:
            kept += f" (with {', '.join(f for f in recorded_files(out) if not f.startswith('compare.'))})"
        print(f"optsched: interrupted after {done} policies ({interrupt.described()}){kept}.", file=sys.stderr)
        return interrupt.exit_code()

    try:
        with interrupt.stop_on_interrupt():  # a signal inside the exact bound ends the comparison too
            comparison = Comparison(  # every input checked here, before anything is written or run
                workload,
                cluster,
                policies=policies,
                seeds=args.seeds,
                seed=args.seed,
                placement=args.placement,
                progress=False if args.quiet else ("bar" if sys.stderr.isatty() else "lines"),
                overheads=args.overheads,
                load_base=args.load_base,
                enrich=enrich,
                on_row=on_row,
                workers=args.workers,
                scheduler_address=args.dask,
                sort_by=args.sort,
                warn_failures=False,
                reproduce=lambda policy: _cli_line(args, policy),
            )
            if all(why is not None for why in comparison.skip.values()):
                reasons = "; ".join(f"{p}: {why}" for p, why in comparison.skip.items())
                comparison.close()
                raise InvalidOptionError(
                    f"No policy could run on {name!r}, so there is nothing to compare ({reasons}). Give policies "
                    f"that run on this workload (--policies; `optsched info` says what each needs), or a "
                    f"workload with the columns they need."
                )
            out = (
                prepare_out_dir(args.out, force=args.force, command="compare", inputs=(args.trace, args.jobs_csv))
                if args.out
                else None
            )
            comparison.run()
    except KeyboardInterrupt:
        return stopped()
    if not comparison.complete:
        return stopped()
    table, per_job = comparison.table(), comparison.per_job
    if out is not None:
        with interrupt.deferred():
            write_table(table, out, "compare", formats=formats)
            _write_extras(table, per_job, out, cluster, name, note, load)
    code = EXIT_FAILED if comparison.failed else EXIT_OK
    if args.json:
        _print_json(name, cluster, note, table, table, load)
        return code
    _print_text(table, cluster, name, note, args)
    if out is not None:
        print(f"wrote {out}/compare.{formats[0]}, {out}/bound.json and the pictures in {out}/")
    return code


def _print_text(table, cluster, name, note, args) -> None:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.experiments.compare import METRICS, far_notes
    from optsched.experiments.compare.table import fmt as _cell
    from optsched.experiments.compare.table import time_model_notes

    bound = table.attrs["bound"]
    ran = table[table["skipped"].isna() & table["failed"].isna()]
    cols = ["policy", "paper"] + [m for m in METRICS if m in ran and m != "total_jct"]
    if "ratio_to_np_bound" in ran and ran["ratio_to_np_bound"].notna().any():
        cols.append("ratio_to_np_bound")
    if "bound" in ran and (ran["bound"] != "workload").any():
        cols.append("bound")
    cols.append("seconds")
    rows = [{c: _cell(r.get(c)) for c in cols} for r in ran.to_dict("records")]
    rows.append(
        {
            **{c: "-" for c in cols},
            "policy": "lower bound",
            "paper": "",
            "mean_jct": _cell(bound["mean_jct"]),
            "ratio_to_bound": "1",
            "seconds": "",
        }
    )
    n_jobs = int(ran["n_jobs"].iloc[0]) if len(ran) else 0
    origin = table.attrs.get("time_origin") or [0.0]
    when = f", times from the first arrival (t = {_cell(origin[0])} s in the table)" if origin[0] else ""
    asrpt = (table.attrs.get("assumptions") or {}).get("asrpt", {})
    if "nic_gbps_per_server" in asrpt and (ran["paper"] == "asrpt").any():
        when += f", A-SRPT NIC {_cell(asrpt['nic_gbps_per_server'])} Gbit/s per server"
    lz = table.attrs.get("assumptions", {}).get("lazer", {})
    models = (
        f" (models: {lz.get('models_from_column', 0)} from the table, {lz.get('models_mapped', 0)} mapped by name, "
        f"{lz.get('models_drawn', 0)} drawn)"
        if lz
        else ""
    )
    print_table(
        rows,
        cols,
        title=f"{name}: {n_jobs} jobs on {cluster.n_servers} servers / {cluster.total_gpus} GPUs, {note}, "
        f"{args.seeds} seed(s), overheads {args.overheads}{models}{when}",
    )
    n = max(n_jobs, 1)
    parts = ", ".join(f"{k.replace('_', ' ')} {_cell(v / n)} s" for k, v in bound["parts"].items())
    print(
        f"lower bound on the mean JCT: {_cell(bound['mean_jct'])} s, the largest of {parts} per job "
        f"(the same for any --policies; formulations/rigid.md#jct-bound)"
    )
    for key, rb in bound.get("row_bounds", {}).items():
        k = max(rb["jobs_faster_than_their_duration"])
        print(
            f"rows with bound '{key}': {_cell(rb['mean_jct'])} s per job, because under the A-SRPT time model "
            f"{k} job(s) can train faster than their trace duration (a better split over servers than the one "
            f"the calibration assumed); their ratio is to that bound"
        )
    npb = bound.get("nonpreemptive")
    if npb:
        print(
            f"non-preemptive bound (exact rigid model on {n_jobs} jobs, {npb['description']}): mean JCT >= "
            f"{_cell(npb['mean_jct'])} s for the rows that never preempted (ratio_to_np_bound; not the elastic "
            f"policies)"
        )
    for line in time_model_notes(ran.to_dict("records"), table.attrs.get("assumptions") or {}):
        print(line)
    far = far_notes(ran.to_dict("records"))
    if far:
        print("far from the bound (why, measured on the row's own jobs; docs/compare.md#reading-the-table):")
        for line in far:
            print(f"  {line}")
    for r in table.to_dict("records"):
        if isinstance(r.get("skipped"), str) and r["skipped"]:
            print(f"skipped {r['policy']}: {r['skipped']}")
        elif isinstance(r.get("failed"), str) and r["failed"]:
            print(f"FAILED {r['policy']}: {r['failed']}; run it alone: {r['reproduce']}")
        elif r.get("beats_bound"):
            print(f"BUG: {r['policy']} beats the lower bound; please report it")


def _cli_line(args, policy: str) -> str:
    """The command that runs one policy alone on the same workload (one process)."""

    parts = ["optsched", "compare"]
    src = ("--trace", args.trace) if args.trace else ("--jobs-csv", args.jobs_csv)
    parts += list(src)
    for opt, v in (
        ("--columns", args.columns),
        ("--jobs", args.jobs),
        ("--servers", args.servers),
        ("--load", args.load),
        ("--max-duration", args.max_duration),
        ("--elastic-slot", args.elastic_slot),
        ("--asrpt-nic-gbps", args.asrpt_nic_gbps),
        ("--placement", args.placement),
    ):
        if v is not None:
            parts += [opt, str(v)]
    parts += ["--gpus-per-server", str(args.gpus_per_server), "--seeds", str(args.seeds)]
    if args.seed:
        parts += ["--seed", str(args.seed)]
    if args.trace_format:
        parts += ["--trace-format", args.trace_format]
    if args.overheads != "model":
        parts += ["--overheads", args.overheads]
    if args.load_base != 60.0:
        parts += ["--load-base", str(args.load_base)]
    parts += ["--policies", policy, "--workers", "1"]
    return " ".join(shlex.quote(x) for x in parts)


def _print_json(name, cluster, note, table, finished, load=None) -> None:
    """The --json document: the rows finished (all of them, or those before an interruption)."""

    def clean(v):
        return None if isinstance(v, float) and math.isnan(v) else v

    attrs = {} if table is None else table.attrs
    rows = [] if finished is None else finished.to_dict("records")
    print_json(
        {
            "workload": name,
            "servers": cluster.n_servers,
            "gpus": cluster.total_gpus,
            "load": note,
            "offered_load": load,
            "bound": attrs.get("bound"),
            "assumptions": attrs.get("assumptions"),
            "time_origin": attrs.get("time_origin"),
            "rows": [{k: clean(v) for k, v in row.items()} for row in rows],
        }
    )


def _write_extras(table, per_job, out, cluster, name, note, load=None) -> None:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.io import atomic_write_text
    from optsched.experiments.compare import save_figures

    meta = {
        "workload": name,
        "servers": cluster.n_servers,
        "gpus_per_server": sorted({int(g) for g in cluster.gpus}),
        "gpus": cluster.total_gpus,
        "load": note,
        "offered_load": load,
        "bound": table.attrs.get("bound"),
        "assumptions": table.attrs.get("assumptions"),
    }
    atomic_write_text(out / "bound.json", json.dumps(meta, indent=1, default=str))
    if per_job:
        save_figures(table, per_job, out)
