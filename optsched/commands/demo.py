"""``optsched demo``: exact optimum vs algorithms on the benchmark instances, verified, one table."""

from __future__ import annotations

from optsched.commands._common import EXIT_FAILED, EXIT_OK, print_json, print_table


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="exact optimum vs algorithms on benchmark instances, verified, one table")
    p.add_argument("--quick", action="store_true", help="smaller instances and limits (seconds, not minutes)")
    p.add_argument("--only", action="append", default=None, metavar="KEY",
                   help="only this package (rigid, sojourn, asrpt, ...); repeatable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from optsched.experiments.demo import COLUMNS, collect_rows

    rows = collect_rows(quick=args.quick, only=args.only)
    if args.json:
        print_json(rows)
    else:
        print_table(rows, ["paper"] + COLUMNS)
        n_bad = sum(1 for r in rows if not r.get("verified"))
        print(f"\n{len(rows)} rows; {n_bad} failed verification. ratio = objective / proven optimum.")
    return EXIT_OK if all(r.get("verified") for r in rows) else EXIT_FAILED
