"""Run every benchmark module ``benchmarks/bench_*.py`` (or those named on the command line)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if n in argv or n.removeprefix("bench_") in argv]
    for name in names:
        t0 = time.perf_counter()
        print(f"== {name}", flush=True)
        importlib.import_module(f"benchmarks.{name}").main([])
        print(f"== {name} done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
