"""Helpers shared by the CLI subcommands: table output, JSON output, exit codes.

Tested in ``tests/cli/test_output_text.py``.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
import textwrap
from typing import Any

from optsched.exceptions import InvalidOptionError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
#: Stopped by Ctrl-C (SIGINT): 128 + 2, as shells report it; what was finished is written. SIGTERM
#: gives 143 and SIGHUP 129 (:func:`optsched.solvers.interrupt.exit_code`).
EXIT_INTERRUPTED = 130


#: Column name -> unit shown in the header.
UNITS = {
    "runtime": "s",
    "mean_jct": "s",
    "p50_jct": "s",
    "p95_jct": "s",
    "p99_jct": "s",
    "makespan": "s",
    "mean_queue_delay": "s",
    "p95_queue_delay": "s",
    "p99_queue_delay": "s",
    "sim_seconds": "s",
    "load_seconds": "s",
}


def fmt_runtime(v: float) -> str:
    """Runtimes in ms below one second, in s above."""
    return f"{v * 1000:.3g} ms" if v < 1 else f"{v:.3g} s"


def _fmt(v: Any, column: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):  # numpy scalars print as plain numbers
        with contextlib.suppress(TypeError, ValueError):
            v = v.item()
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if column == "runtime":
            return fmt_runtime(v)
        if column == "gap" and abs(v) < 1e-9:
            return "0"
        from optsched.core.units import fmt_number  # every integer digit (no 1e+07); imported late: a fast --help

        return fmt_number(v)
    return str(v)


def plain_text(doc: str | None) -> str | None:
    r"""A docstring as ``--help`` shows it: reST markup removed.

    Double backquotes and ``:role:`` references go (their text stays), a line ending in ``::`` (a
    literal block follows) ends in one colon.

    Examples
    --------
    >>> print(plain_text("``optsched demo``: see :func:`run`.\n\nExamples::\n\n    optsched demo"))
    optsched demo: see run.
    <BLANKLINE>
    Examples:
    <BLANKLINE>
        optsched demo
    """
    if not doc:
        return doc

    doc = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", doc)
    doc = re.sub(r"``([^`]+)``", r"\1", doc)
    return re.sub(r"(?m)(\S)::$", r"\1:", doc)


def _header(c: str) -> str:
    if c == "runtime":
        return "runtime"
    return f"{c} [{UNITS[c]}]" if c in UNITS else c


def print_table(
    rows: list[dict[str, Any]],
    columns: list[str] | None = None,
    file=None,
    *,
    title: str | None = None,
    wrap: dict[str, int] | None = None,
) -> None:
    """An aligned table: rich on a terminal, plain text otherwise (pipes, files, tests).

    Units stand in the headers, runtimes in ms or s, gaps below 1e-9 as 0. ``wrap`` maps a column
    to a width: its cells are wrapped at word boundaries onto continuation lines, never cut.
    """
    file = file or sys.stdout
    if not rows:
        print("(no rows)", file=file)
        return
    columns = columns or list(rows[0])
    cells = [[_fmt(r.get(c), c) for c in columns] for r in rows]
    heads = [_header(c) for c in columns]
    if file.isatty() if hasattr(file, "isatty") else False:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title, show_lines=False)
        for h, c in zip(heads, columns, strict=True):
            numeric = any(isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool) for r in rows)
            t.add_column(h, justify="right" if numeric else "left", max_width=(wrap or {}).get(c))
        for row in cells:
            t.add_row(*row)
        Console(file=file).print(t)
        return
    if title:
        print(title, file=file)
    if wrap:
        lines = []
        for row in cells:
            parts = [
                textwrap.wrap(x, wrap[c], break_long_words=False, break_on_hyphens=False) or [""] if c in wrap else [x]
                for x, c in zip(row, columns, strict=True)
            ]
            for k in range(max(len(p) for p in parts)):
                lines.append([p[k] if k < len(p) else "" for p in parts])
        cells = lines
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip(), file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row in cells:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip(), file=file)


def fmt_people(v: float) -> str:
    """A number as a message shows it: thousands separated, three significant digits for fractions,
    an exponent only beyond 10^12.

    >>> fmt_people(19274.3), fmt_people(1.3e6), fmt_people(2.5e13), fmt_people(1e-9), fmt_people(60.0)
    ('19,274', '1,300,000', '2.5e13', '1e-09', '60')
    """
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return str(v) if v else "0"
    if abs(v) >= 1e12:
        return f"{v:.3g}".replace("e+", "e")
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


#: The simulator's own limits on a run (``Simulator.run(max_time="auto", max_events="auto")``): a run
#: past them is taken for a livelock. The command line checks periods and overheads against them
#: before a run, so that a hopeless option is refused at once, in the words of its option.
def sim_time_limit(arrival: Any, work: Any) -> float:
    """Simulated seconds: the last arrival + 1,000 x the jobs' total work + 10^6 s."""
    import numpy as np

    return float(np.max(arrival)) + 1000.0 * float(np.sum(work)) + 1e6


def sim_event_limit(n_jobs: int) -> int:
    """Events: 1,000,000 + 1,000 per job."""
    return 1_000_000 + 1_000 * int(n_jobs)


def check_overhead(option: str, seconds: float, arrival: Any, work: Any, gpus: Any, total_gpus: int) -> None:
    """Refuse a load time every job pays before it runs (``--load-time``, ``--load-base``) that makes
    the run longer than the simulator's limit (:func:`sim_time_limit`): each job then ends no
    earlier than its arrival + the load + its work, and the cluster must hold every job's GPUs
    for its load and work."""
    import numpy as np

    if not seconds > 0:
        return
    r, w, g = (np.asarray(x, dtype=float) for x in (arrival, work, gpus))
    limit = sim_time_limit(r, w)
    area = float((g * w).sum()) / total_gpus
    need = max(float((r + w).max()) + seconds, float(r.min()) + area + seconds * float(g.sum()) / total_gpus)
    if need <= limit:
        return
    most = min(limit - float((r + w).max()), (limit - float(r.min()) - area) * total_gpus / float(g.sum()))
    raise InvalidOptionError(
        f"{option} {fmt_people(seconds)} s is too long for this workload: every job loads that long before it "
        f"runs, so the run would last at least {fmt_people(need)} s, beyond the simulator's limit of "
        f"{fmt_people(limit)} s (1,000 times the jobs' total work: a run that long is taken for a livelock). "
        f"Give {option} of at most {fmt_people(max(most, 0.0))} s."
    )


def check_period(option: str, seconds: float, arrival: Any, work: Any, *, what: str = "decisions") -> None:
    """Refuse a period (``--period``) that gives more ticks than the simulator's event limit
    (:func:`sim_event_limit`): the ticks run from time 0 at least until the last job can end."""
    import numpy as np

    r, w = np.asarray(arrival, dtype=float), np.asarray(work, dtype=float)
    span = float((r + w).max())
    limit = sim_event_limit(len(r))
    if span / seconds <= limit:
        return
    raise InvalidOptionError(
        f"{option} {fmt_people(seconds)} s gives at least {fmt_people(span / seconds)} {what} over the "
        f"workload's {fmt_people(span)} s (its last job ends no earlier), more than the simulator's limit of "
        f"{fmt_people(limit)} events. Give {option} of at least {fmt_people(span / limit)} s."
    )


def out_folder(value: str) -> str:
    """The ``type=`` of every ``--out`` option: an empty or blank name (``--out "$OUT"`` with ``OUT``
    unset) is a usage error (exit 2), never "no folder" (:func:`optsched.core.output.out_folder_arg`)."""
    # deferred: only when --out is given (``optsched --help`` loads no NumPy)
    from optsched.core.output import out_folder_arg

    return out_folder_arg(value)


#: Trace file formats that ``--trace-format`` names (detected from the file when not given).
TRACE_FORMATS = ("philly", "helios", "acme", "openb")


def add_workload_options(p) -> None:
    """The options that say which jobs run on which cluster, declared once for every command that
    takes a workload (``simulate``, ``compare``): one default and one meaning each, read by
    :func:`workload_from_args` (``optsched.traces.workload.build_workload``)."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--trace", help="openb | openb-sample | synthetic | a trace file (Philly .json, Helios/Acme/OpenB .csv)"
    )
    src.add_argument(
        "--jobs-csv",
        metavar="FILE",
        help="a CSV or Parquet job file: arrival, gpus, duration (s; optional job_id, user, work, model, status, "
        "load_time, save_time)",
    )
    p.add_argument(
        "--columns",
        default=None,
        metavar="OURS=YOURS,...",
        help="--jobs-csv column names that differ, e.g. arrival=submit,gpus=n_gpu",
    )
    p.add_argument("--trace-format", default=None, choices=TRACE_FORMATS, help="trace file format if not detected")
    p.add_argument("--servers", type=int, default=None, help="servers (default for openb: its nodes)")
    p.add_argument("--gpus-per-server", type=int, default=8)
    p.add_argument("--jobs", type=int, default=None, help="synthetic: number of jobs (1000); traces: keep the first N")
    p.add_argument(
        "--load",
        type=float,
        default=None,
        help="offered load in (0, 5): traces: size the cluster for it; synthetic: scale arrivals (default 0.8)",
    )
    p.add_argument(
        "--max-duration",
        type=float,
        default=None,
        help="synthetic: cap on durations in s (default 86400; 0 for none)",
    )
    p.add_argument("--seed", type=int, default=0, help="the seed of every draw (default 0)")


def workload_from_args(args, **options: Any) -> Any:
    """``build_workload`` on the options of :func:`add_workload_options` (and ``options``)."""
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.traces.workload import build_workload

    return build_workload(
        args.trace,
        jobs_file=args.jobs_csv,
        columns=args.columns,
        trace_format=args.trace_format,
        n_jobs=args.jobs,
        servers=args.servers,
        gpus_per_server=args.gpus_per_server,
        load=args.load,
        max_duration=args.max_duration,
        seed=args.seed,
        **options,
    )


def add_output_options(p, *, out_help: str = "write the results into this folder (created; see --force)") -> None:
    """``--out DIR``, ``--force`` and ``--format`` with the same meaning in every command."""
    p.add_argument("--out", default=None, metavar="DIR", type=out_folder, help=out_help)
    p.add_argument("--force", action="store_true", help="replace the files of an existing, non-empty --out folder")
    p.add_argument(
        "--format",
        action="append",
        default=None,
        choices=["csv", "json", "parquet"],
        help="table file format(s) for --out (repeatable; default csv)",
    )


def print_json(obj: Any, file=None) -> None:
    import json  # only when printing: ``optsched --help`` does not load it

    print(json.dumps(obj, indent=2, default=_json_default), file=file or sys.stdout)


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if hasattr(o, "value"):
        return o.value
    return str(o)
