"""``python -m optsched.sim.compiled --warm``: load the compiled simulator core from numba's cache, or
compile it now (once per machine), so that no later simulation pays for it. Exit status 0 when the
kernel is ready, 1 (with the reason on stderr) when it cannot run here: the Python engine then runs
every simulation, so set-up goes on."""

from __future__ import annotations

import argparse
import sys

from optsched.sim.compiled.build import prepare


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m optsched.sim.compiled", description=__doc__.splitlines()[0])
    ap.add_argument("--warm", action="store_true", help="load or compile the simulator core now")
    args = ap.parse_args(argv)
    if not args.warm:
        ap.print_help()
        return 0
    why, seconds = prepare()
    if why is not None:
        print(f"optsched: the compiled simulator core cannot run here: {why}", file=sys.stderr)
        return 1
    if not seconds:
        print("optsched: the compiled simulator core is ready (loaded from numba's cache)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
