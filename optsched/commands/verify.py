"""``optsched verify INSTANCE SCHEDULE``: independent feasibility check of a schedule file.

Examples::

    optsched solve toy:rigid-2x2-five --out run1/
    optsched verify toy:rigid-2x2-five run1/schedule.json
    optsched verify my-instance.json my-schedule.json --claimed 19 --json

Every constraint is re-checked from the schedule alone, by its equation label; the objective is
recomputed (and compared with --claimed); --plot draws the schedule beside it as a Gantt
chart. A schedule.json written by `optsched solve --out` records the instance's name and
content hash: verify says so when they differ from INSTANCE.
Exit codes: 0 feasible; 1 a check failed; 2 bad input.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import optsched
from optsched.commands._common import EXIT_FAILED, EXIT_OK, print_json, print_table
from optsched.exceptions import InvalidScheduleError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "verify",
        help="check a schedule file against an instance, constraint by constraint",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("instance", help="instance JSON file, or a shipped name such as toy:rigid-2x2-five")
    p.add_argument("schedule", help="schedule JSON file (as written by `optsched solve --out DIR`: DIR/schedule.json)")
    p.add_argument("--objective", default=None, help="objective to recompute (default: the instance kind's objective)")
    p.add_argument("--claimed", type=float, default=None, help="objective value to check against")
    p.add_argument(
        "--plot",
        action="store_true",
        help="also draw the schedule as a Gantt chart beside it (SCHEDULE with .png and .svg; "
        "an over-capacity segment is drawn above its server, edged in red)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.commands._plot import check_plot, write_gantt
    from optsched.core import get_kind
    from optsched.core.io import instance_fingerprint, origin_mismatch, schedule_origin
    from optsched.verify import verify

    inst = optsched.load_instance(args.instance)
    spec = get_kind(inst.kind)
    sched_cls = getattr(spec["cls"], "schedule_class", None)
    if sched_cls is None:
        # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
        from optsched.core import Schedule as sched_cls

    sp = Path(args.schedule)
    if sp.is_dir():
        hint = " (it has a schedule.json: give that file)" if (sp / "schedule.json").is_file() else ""
        raise InvalidScheduleError(f"{str(sp)!r} is a directory, not a schedule file{hint}.")
    if not sp.is_file():
        raise InvalidScheduleError(
            f"Schedule file {str(sp)!r} does not exist; write one with "
            f"`optsched solve INSTANCE --out DIR` (DIR/schedule.json)."
        )
    stem = sp.with_suffix("")
    if args.plot:  # before any work: the kind has Gantt charts, the files can be written
        check_plot(inst.kind, stem)
    schedule = sched_cls.load(args.schedule)
    origin = schedule_origin(args.schedule)
    mismatch = origin_mismatch(origin, inst)
    if mismatch and args.json:  # the text report prints it above the violations instead
        warnings.warn(mismatch, stacklevel=1)
    objective = args.objective or spec.get("objective", "total_weighted_completion_time")
    report = verify(inst, schedule, objective=objective, claimed=args.claimed)
    plotted = []
    if args.plot:
        verdict = "feasible" if report.ok else f"{len(report.violations)} violation(s)"
        plotted = write_gantt(inst, schedule, stem, title=f"{inst.name}: {sp.name}, {verdict}")
    if args.json:
        print_json(
            {
                **report.to_dict(),
                "instance_sha256": instance_fingerprint(inst)["sha256"],
                "schedule_instance": origin,
                "instance_mismatch": mismatch,
                **({"plot": [str(p) for p in plotted]} if plotted else {}),
            }
        )
    else:
        if mismatch:
            print(f"note: {mismatch}")
        print(report.summary())
        if report.objectives:
            print_table([{"objective": k, "value": v} for k, v in report.objectives.items()])
        if plotted:
            print(f"drew the schedule: {', '.join(str(p) for p in plotted)}")
    return EXIT_OK if report.ok else EXIT_FAILED
