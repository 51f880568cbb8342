"""``optsched data``: trace data shipped in the package, and public traces fetched on request.

Examples::

    optsched data list                          # shipped files, and where unshipped ones were looked for
    optsched data fetch pai-2020                # download with checksums into the data folder
    optsched data fetch philly --data-dir /big/disk
    optsched data path philly                   # where a fetched trace is

Unshipped files are looked up in --data-dir, then $OPTSCHED_DATA, then the user cache folder.
Exit codes: 0 ok; 1 download failed; 2 unknown dataset or file not found.
"""

from __future__ import annotations

import argparse
import sys

from optsched.commands._common import EXIT_FAILED, EXIT_OK, print_json, print_table
from optsched.exceptions import InvalidOptionError
from optsched.traces.datasets import DATASETS, SHIPPED, data_dirs, dataset_status, fetch, find_file


def add_parser(sub) -> None:
    p = sub.add_parser(
        "data",
        help="list shipped trace data, fetch the public traces too large to ship",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=["list", "fetch", "path"])
    p.add_argument("name", nargs="?", choices=sorted(DATASETS), help="dataset (for fetch and path)")
    p.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="data folder (default: $OPTSCHED_DATA, then the user cache folder)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.action in ("fetch", "path") and not args.name:
        raise InvalidOptionError(f"`optsched data {args.action}` needs a dataset name; see `optsched data list`.")
    if args.action == "path":
        print(find_file(args.name, data_dir=args.data_dir))
        return EXIT_OK
    if args.action == "fetch":
        try:
            paths = fetch(args.name, data_dir=args.data_dir, progress=True)
        except OSError as e:  # requests/pooch network errors derive from OSError or carry one
            print(
                f"optsched: error: download of {args.name!r} failed ({e}); check the network, or download the "
                f"files by hand into {data_dirs(args.data_dir)[0] / args.name}.",
                file=sys.stderr,
            )
            return EXIT_FAILED
        for pth in paths:
            print(pth)
        return EXIT_OK
    rows = dataset_status(args.data_dir)
    shipped = sorted(str(p.relative_to(SHIPPED)) for p in SHIPPED.rglob("*") if p.is_file())
    if args.json:
        print_json({"shipped": shipped, "remote": rows, "data_dirs": [str(d) for d in data_dirs(args.data_dir)]})
        return EXIT_OK
    print(f"Shipped with optsched ({SHIPPED}):")
    for s in shipped:
        print(f"  {s}")
    print("\nPublic traces fetched on request (`optsched data fetch NAME`):")
    print_table([{**r, "local": r["local"] or "not fetched"} for r in rows])
    print("\nLooked up in: " + ", ".join(str(d) for d in data_dirs(args.data_dir)))
    return EXIT_OK
