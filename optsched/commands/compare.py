"""``optsched compare``: every online policy on one workload, one table and one CDF plot.

Examples::

    optsched compare --trace openb --policies all
    optsched compare --trace synthetic --jobs 100000 --servers 750 --gpus-per-server 8 --policies fifo,srtf,las
    optsched compare --trace synthetic --jobs 2000 --servers 27 --gpus-per-server 4 --seeds 5 --out cmp/

The workload is a shipped trace name (openb, openb-sample), a trace file, or the calibrated
synthetic generator (a new draw per seed). Policies come from the simulator's registry; a policy
that needs data the workload lacks is skipped with the reason printed. --out DIR gets
compare.csv (or --format json/parquet), jct_cdf.png and jct_cdf.svg. Exit codes: 0 ok; 2 bad
input (unknown policy or trace, existing --out, ...).
"""

from __future__ import annotations

from optsched.commands._common import EXIT_OK, add_output_options, print_json, print_table


def add_parser(sub) -> None:
    import argparse

    p = sub.add_parser(
        "compare",
        help="every online policy on one workload: one table, one JCT CDF",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--trace", required=True, help="openb | openb-sample | synthetic | a trace file")
    p.add_argument("--policies", default="all", help="'all' or a comma list (see `optsched info`)")
    p.add_argument("--placement", default=None, help="placement rule for every policy that takes one")
    p.add_argument("--servers", type=int, default=None, help="servers (default for openb: its nodes)")
    p.add_argument("--gpus-per-server", type=int, default=8)
    p.add_argument("--jobs", type=int, default=None, help="synthetic: number of jobs; traces: keep the first N")
    p.add_argument("--load", type=float, default=0.8, help="synthetic: offered load (default 0.8)")
    p.add_argument("--seeds", type=int, default=1, help="runs per policy; >1 gives mean and 95%% interval")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_output_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from optsched.core import Cluster
    from optsched.core.output import check_formats, prepare_out_dir, write_table
    from optsched.exceptions import InvalidOptionError
    from optsched.experiments.compare import METRICS, available_policies, compare, plot_jct_cdf

    if args.servers is not None and args.servers < 1:
        raise InvalidOptionError(f"--servers must be >= 1; got {args.servers}.")
    if args.gpus_per_server < 1:
        raise InvalidOptionError(f"--gpus-per-server must be >= 1; got {args.gpus_per_server}.")
    if args.jobs is not None and args.jobs < 1:
        raise InvalidOptionError(f"--jobs must be >= 1; got {args.jobs}.")
    if args.seeds < 1:
        raise InvalidOptionError(f"--seeds must be >= 1; got {args.seeds}.")
    policies = "all" if args.policies == "all" else [p.strip() for p in args.policies.split(",") if p.strip()]
    known = available_policies()
    if policies != "all":
        bad = [p for p in policies if p not in known]
        if bad:
            raise InvalidOptionError(f"--policies: unknown policy {bad[0]!r}; known: {sorted(known)}.")
    formats = check_formats(args.format or ["csv"])
    out = prepare_out_dir(args.out, force=args.force) if args.out else None
    from optsched.traces import load_trace, openb_cluster, synthetic_workload

    if args.trace in ("openb", "openb-sample") and args.servers is None:
        cluster = openb_cluster()
    elif args.servers is None:
        raise InvalidOptionError(f"Give --servers N (and --gpus-per-server G) for trace {args.trace!r}.")
    else:
        cluster = Cluster.homogeneous(args.servers, args.gpus_per_server)
    if args.trace == "synthetic":

        def workload(seed):
            return synthetic_workload(
                args.jobs or 1000,
                cluster_gpus=cluster.total_gpus,
                load=args.load,
                max_gpus=cluster.max_server_gpus * cluster.n_servers,
                seed=seed,
            )
    else:
        df = load_trace(args.trace)
        if args.jobs is not None:
            df = df.iloc[: args.jobs]
        workload = df
    table, per_job = compare(
        workload,
        cluster,
        policies=policies,
        seeds=args.seeds,
        placement=args.placement,
        progress=not args.quiet and sys.stderr.isatty(),
    )
    if out is not None:
        write_table(table, out, "compare", formats=formats)
        ax = plot_jct_cdf(per_job)
        for ext in ("png", "svg"):
            ax.figure.savefig(out / f"jct_cdf.{ext}", dpi=120)
    if args.json:
        print_json(
            [
                {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
                for row in table.to_dict("records")
            ]
        )  # NaN (no value) as null: valid JSON
        return EXIT_OK
    ran = table[table["skipped"].isna()] if "skipped" in table else table
    cols = ["policy"] + [m for m in METRICS if m in ran]
    print_table(
        ran[cols].to_dict("records"),
        cols,
        title=f"{args.trace}: {int(ran['n_jobs'].iloc[0]) if len(ran) else 0} jobs on "
        f"{cluster.n_servers} servers / {cluster.total_gpus} GPUs, {args.seeds} seed(s)",
    )
    for r in table.to_dict("records"):
        if isinstance(r.get("skipped"), str) and r["skipped"]:
            print(f"skipped {r['policy']}: {r['skipped']}")
    if len(ran) and "mean_queue_delay" in ran and float(ran["mean_queue_delay"].abs().max()) <= 1e-9:
        import warnings

        warnings.warn(
            f"No job ever waited under any policy: the cluster ({cluster.n_servers} servers, "
            f"{cluster.total_gpus} GPUs) is so large that the policies cannot differ. Use fewer servers "
            f"(--servers N) to compare them under contention.",
            stacklevel=1,
        )
    if out is not None:
        print(f"wrote {out}/compare.{formats[0]}, {out}/jct_cdf.png, {out}/jct_cdf.svg")
    return EXIT_OK
