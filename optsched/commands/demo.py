"""``optsched demo``: exact optimum vs algorithms on the benchmark instances, verified, one table.

Examples::

    optsched demo                       # every paper package (179 rows, about 20 s on 2 cores)
    optsched demo --quick --only rigid  # seconds
    optsched demo --out demo/ --format csv --format parquet

With --out, the table is written again as each instance's rows are done, so Ctrl-C (or a
failure) keeps every finished row. A row that fails verification names the violated check and
its message in the column ``violation`` (table, --json and --out). Exit codes: 0 every row
verified; 1 a row failed verification; 2 bad input (unknown --only, --out in use by another
run); 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP) interrupted (the finished rows are written).
"""

from __future__ import annotations

import argparse
import sys

from optsched.commands._common import EXIT_FAILED, EXIT_OK, add_output_options, print_json, print_table


def add_parser(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="exact optimum vs algorithms on benchmark instances, verified, one table",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true", help="smaller instances and limits (seconds, not minutes)")
    p.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="KEY",
        help="only this package (rigid, sojourn, asrpt, ...); repeatable",
    )
    p.add_argument("--json", action="store_true")
    add_output_options(p, out_help="also write the table (demo.csv ...) into this folder")
    p.set_defaults(func=run)


def run(args) -> int:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.output import check_formats, prepare_out_dir, write_table
    from optsched.experiments.demo import COLUMNS, collect_rows, rows_dataframe
    from optsched.solvers import interrupt

    formats = check_formats(args.format or ["csv"])
    out = prepare_out_dir(args.out, force=args.force, command="demo") if args.out else None
    done: list[dict] = []

    def write(rows: list[dict]) -> None:
        with interrupt.deferred():  # a signal waits until the table is written
            if out is not None:
                write_table(rows_dataframe(rows), out, "demo", formats=formats)
            done[:] = rows
        if out is not None:
            print(f"[demo] {len(rows)} rows written to {out / 'demo'}.{formats[0]}", file=sys.stderr, flush=True)

    try:
        with interrupt.stop_on_interrupt():  # a signal ends the whole demo (an exact solve stops and raises)
            rows = collect_rows(quick=args.quick, only=args.only, on_update=write)
    except KeyboardInterrupt:
        where = f", written to {out / 'demo'}.{formats[0]}" if out is not None and done else ""
        print(f"optsched: interrupted ({interrupt.described()}): {len(done)} finished rows{where}.", file=sys.stderr)
        if args.json:
            print_json(done)
        return interrupt.exit_code()
    if args.json:
        print_json(rows)
    else:
        print_table(rows, ["paper", *COLUMNS])
        n_bad = sum(1 for r in rows if not r.get("verified"))
        print(f"\n{len(rows)} rows; {n_bad} failed verification. ratio = objective / proven optimum.")
    return EXIT_OK if all(r.get("verified") for r in rows) else EXIT_FAILED
