"""``optsched reproduce NAME``: a paper's experiment, our numbers beside the paper's.

Examples::

    optsched reproduce --list
    optsched reproduce sojourn-tables --quick --out results/sojourn
    optsched reproduce asrpt-table2 --out results/t2 --format csv --format parquet

Each table is written to --out as soon as it is finished, so a run that fails late keeps what
it computed; a table that stands for one of the paper's figures or tables gets its picture
beside it at the same moment, named after it (fig6.csv, fig6.png, fig6.svg); --out is
checked (and refused if it exists and is not empty, unless --force) before any work starts;
Ctrl-C stops the run and keeps them. Exit codes: 0 ok; 1 the run failed after writing some
tables; 2 bad input (unknown name, existing --out or one in use by another run, bad option); 130
(Ctrl-C), 143 (SIGTERM), 129 (SIGHUP) interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time

from optsched.commands._common import EXIT_OK, add_output_options, print_table
from optsched.exceptions import InvalidOptionError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "reproduce",
        help="run a paper reproduction (tables beside the paper's numbers)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", nargs="?", help="reproduction name (see --list)")
    p.add_argument("--list", action="store_true", help="list the registered reproductions")
    p.add_argument("--quick", action="store_true", help="a minute-long version (fewer trials, smaller sizes)")
    p.add_argument("--seeds", type=int, default=None, help="number of seeds (default: the reproduction's)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    add_output_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.output import check_formats, prepare_out_dir, write_table
    from optsched.experiments.figures import write_table_figure
    from optsched.experiments.registry import get_reproduction, reproductions
    from optsched.solvers import interrupt

    if args.list or not args.name:
        print_table([{"name": r.name, "paper": r.paper, "description": r.description} for r in reproductions()])
        return EXIT_OK
    repro = get_reproduction(args.name)
    if args.seeds is not None and args.seeds < 1:
        raise InvalidOptionError(f"--seeds must be >= 1; got {args.seeds}.")
    if args.seeds is not None and not repro.seeds:
        raise InvalidOptionError(
            f"--seeds: the reproduction {repro.name!r} has no number of seeds to set (its trials play that role); "
            f"leave --seeds out."
        )
    formats = check_formats(args.format or ["csv"])
    out = prepare_out_dir(args.out, force=args.force, command="reproduce") if args.out else None
    written: list[str] = []
    t0 = time.perf_counter()

    def save(name: str, df) -> None:
        if out is not None:
            with interrupt.deferred():  # a signal waits until the table and its picture are written
                written.extend(str(p) for p in write_table(df, out, name, formats=formats))
                written.extend(str(p) for p in write_table_figure(repro.name, name, df, out))  # name.png, .svg
        if not args.quiet:
            print(
                f"[{time.perf_counter() - t0:7.1f} s] {name}: {len(df)} rows"
                + (f" -> {out / name}.{formats[0]}" if out is not None else ""),
                file=sys.stderr,
            )
        if out is None:
            print(f"\n== {name}")
            print(df.to_string(index=False))

    try:
        with interrupt.stop_on_interrupt():  # a signal ends the run (an exact solve stops and raises)
            repro.run(save, quick=args.quick, seeds=args.seeds, progress=not args.quiet and sys.stderr.isatty())
    except KeyboardInterrupt:
        kept = f"; the {len(written)} files written before are kept in {out}" if written else ""
        print(f"optsched: interrupted ({interrupt.described()}){kept}.", file=sys.stderr)
        return interrupt.exit_code()
    except BaseException:
        if written:
            print(
                f"optsched: the run failed; the {len(written)} files written before are kept in {out}.", file=sys.stderr
            )
        raise
    if out is not None:
        print(f"wrote {len(written)} files to {out}")
    return EXIT_OK
