"""``optsched info``: versions, solvers found, registered kinds, algorithms and online policies.

Examples::

    optsched info            # a table of algorithms and one of online policies
    optsched info --json     # the same, machine-readable

Exit codes: 0 ok.
"""

from __future__ import annotations

import argparse
import platform

import optsched
from optsched.commands._common import EXIT_OK, plain_text, print_json, print_table


def add_parser(sub) -> None:
    p = sub.add_parser(
        "info",
        help="versions, solvers found, registered instance kinds and algorithms",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core import algorithms, kinds
    from optsched.sim import policy_registry
    from optsched.solvers import available_solvers, solver_versions

    optsched.load_plugins()
    info = {
        "optsched": optsched.__version__,
        "python": platform.python_version(),
        "packages": solver_versions(),
        "solvers": available_solvers(),
        "kinds": kinds(),
        "algorithms": [
            {
                "name": a.name,
                "kind": a.kind,
                "exact": a.exact,
                "backends": list(a.backends),
                "description": a.description,
            }
            for a in algorithms()
        ],
        "policies": [
            {"name": p.name, "paper": p.paper, "needs": list(p.needs), "description": p.description}
            for p in policy_registry().values()
        ],
    }
    if args.json:
        print_json(info)
        return EXIT_OK
    print(f"optsched {info['optsched']} on Python {info['python']}")
    print("packages: " + ", ".join(f"{k} {v}" for k, v in info["packages"].items()))
    print("solvers:  " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in info["solvers"].items()))
    print("instance kinds: " + ", ".join(info["kinds"]))
    print()
    print_table(
        [
            {
                "algorithm": a["name"],
                "kind": a["kind"],
                "exact": "yes" if a["exact"] else "",
                "backends": ",".join(a["backends"]),
                "description": plain_text(a["description"]),
            }
            for a in info["algorithms"]
        ],
        wrap={"description": 70},
    )
    print()
    print_table(
        [
            {
                "online policy": p["name"],
                "paper": p["paper"] or "baseline",
                "needs": ",".join(p["needs"]) or "-",
                "description": plain_text(p["description"]),
            }
            for p in info["policies"]
        ],
        wrap={"description": 70},
    )
    return EXIT_OK
