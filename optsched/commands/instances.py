"""``optsched instances``: the instance library shipped in the package.

Examples::

    optsched instances                       # every shipped instance: name, kind, jobs
    optsched instances --kind sojourn
    optsched solve toy:rigid-2x2-five        # any command takes a name instead of a file
    optsched instances --path toy:rigid-2x2-five

Exit codes: 0 ok; 2 unknown name.
"""

from __future__ import annotations

import argparse

from optsched.commands._common import EXIT_OK, print_json, print_table


def add_parser(sub) -> None:
    p = sub.add_parser(
        "instances",
        help="list the shipped instances (use a name such as toy:rigid-2x2-five wherever a file is expected)",
        description=__doc__,
        formatter_class=_raw(),
    )
    p.add_argument("--kind", default=None, help="only instances of this kind (rigid, sojourn, asrpt, ...)")
    p.add_argument("--path", default=None, metavar="NAME", help="print the file path of one instance")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def _raw():
    return argparse.RawDescriptionHelpFormatter


def run(args) -> int:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.library import instance_path, list_instances

    if args.path:
        print(instance_path(args.path))
        return EXIT_OK
    rows = [r for r in list_instances() if args.kind is None or r["kind"] == args.kind]
    if args.json:
        print_json([{**r, "path": str(r["path"])} for r in rows])
    else:
        print_table([{"name": r["name"], "kind": r["kind"], "jobs": r["n_jobs"]} for r in rows])
    return EXIT_OK
