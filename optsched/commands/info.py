"""``optsched info``: versions, solvers found, registered kinds and algorithms."""

from __future__ import annotations

import platform

from optsched.commands._common import EXIT_OK, print_json, print_table


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="versions, solvers found, registered instance kinds and algorithms")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    import optsched
    from optsched.core import algorithms, kinds
    from optsched.solvers import available_solvers, solver_versions

    optsched.load_plugins()
    info = {
        "optsched": optsched.__version__,
        "python": platform.python_version(),
        "packages": solver_versions(),
        "solvers": available_solvers(),
        "kinds": kinds(),
        "algorithms": [{"name": a.name, "kind": a.kind, "exact": a.exact, "backends": list(a.backends),
                        "description": a.description} for a in algorithms()],
    }
    if args.json:
        print_json(info)
        return EXIT_OK
    print(f"optsched {info['optsched']} on Python {info['python']}")
    print("packages: " + ", ".join(f"{k} {v}" for k, v in info["packages"].items()))
    print("solvers:  " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in info["solvers"].items()))
    print("instance kinds: " + ", ".join(info["kinds"]))
    print()
    print_table([{"algorithm": a["name"], "kind": a["kind"], "exact": "yes" if a["exact"] else "",
                  "backends": ",".join(a["backends"]), "description": a["description"][:70]}
                 for a in info["algorithms"]])
    return EXIT_OK
