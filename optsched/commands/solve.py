"""``optsched solve INSTANCE [--model NAME] [--backend B]``: exact optimum (or any registered algorithm).

Examples::

    optsched solve toy:rigid-2x2-five                               # a shipped instance, by name
    optsched solve my-instance.json --backend cpsat --time-limit 30 --out run1/
    optsched solve papers/sojourn:crossing-n40 --json
    optsched solve toy:rigid-2x2-five -v                            # solver log + model summary
    optsched verify toy:rigid-2x2-five run1/schedule.json

INSTANCE is a JSON file or a shipped name (`optsched instances` lists them). --out DIR writes
schedule.json (with the instance's name and content hash, which `optsched verify` compares)
and result.json there; --plot also draws the schedule as a Gantt chart (schedule.png, .svg).
--time-limit bounds the whole command (loading, warm start, building, solving, checking); a run
that reaches it reports status "feasible" (or "no_solution") with its best schedule, bound and
gap, never "optimal", names the phase that ran out of time (limit_reached_in in --json and
result.json, with the seconds of every phase) and still writes its best schedule. A solve that
runs over a second shows its elapsed time, incumbent and bound on stderr (off with --quiet;
stdout carries only the result). Ctrl-C, SIGTERM or SIGHUP stops the solver (or the phase under
way: a warm start, an LP bound, a model build) and writes its best schedule so far (status
"interrupted"); a second signal while it is written changes nothing. Exit codes: 0 solved
(schedule verified); 1 infeasible, no solution, a failed verification or results that could not
be written; 2 bad input (file, field, option, unknown name, --out in use by another run); 130
(Ctrl-C), 143 (SIGTERM), 129 (SIGHUP) interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import time

import optsched
from optsched.commands._common import EXIT_FAILED, EXIT_OK, out_folder, print_json, print_table
from optsched.exceptions import InvalidInstanceError, InvalidOptionError

#: Optional Pyomo back ends (commercial or external), usable by Pyomo-based exact models.
PYOMO_EXTRA = ("gurobi", "gurobi_direct", "cplex", "cplex_direct", "glpk", "cbc")
#: Model file suffixes per back end (--write-model is checked before the model is built); a back
#: end not listed (a portfolio, a dynamic program) picks the format per model.
MODEL_SUFFIXES = {"cpsat": (".pb", ".pbtxt"), **{b: (".lp", ".mps") for b in ("highs", *PYOMO_EXTRA)}}
#: Models whose back end writes more than one format (rarddls' cpsat solves its MILP's rows).
MODEL_SUFFIXES_OF = {("rarddls-exact", "cpsat"): (".lp", ".mps", ".pb", ".pbtxt")}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "solve",
        help="solve an instance with a registered exact model or algorithm",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("instance", help="instance JSON file, or a shipped name such as toy:rigid-2x2-five")
    p.add_argument(
        "--model",
        default=None,
        help="registered model or algorithm name (default: the exact model of the instance's kind; "
        "`optsched info` lists them)",
    )
    p.add_argument(
        "--backend",
        default=None,
        help="exact back end: highs (default), cpsat, or the model's others (`optsched info`); "
        f"Pyomo models also take {', '.join(PYOMO_EXTRA)} when installed",
    )
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds (default 60)")
    p.add_argument("--gap", type=float, default=0.0, help="relative MIP gap at which to stop (default 0)")
    p.add_argument("--threads", type=int, default=None, help="solver threads, at most the CPUs this process may use")
    p.add_argument("--seed", type=int, default=0, help="random seed (exact models: in [0, 2147483647])")
    p.add_argument(
        "--out", default=None, metavar="DIR", type=out_folder, help="write schedule.json and result.json to this folder"
    )
    p.add_argument("--force", action="store_true", help="replace the files of an existing --out folder")
    p.add_argument(
        "--write-model",
        default=None,
        metavar="FILE",
        help="also write the exact model to FILE (.lp/.mps for Pyomo, .pb/.pbtxt for CP-SAT)",
    )
    p.add_argument(
        "--plot",
        action="store_true",
        help="also draw the schedule as a Gantt chart: schedule.png and schedule.svg in --out DIR",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress display on stderr (elapsed time, incumbent, bound)"
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the solver log and a one-line model summary (variables, constraints, non-zeros, horizon)",
    )
    p.set_defaults(func=run)


def _check_solver_numbers(args) -> None:
    """The options that need no instance, checked before it is read (a large file takes seconds)."""

    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.solvers.options import max_threads

    if args.time_limit is not None and not (args.time_limit > 0 and math.isfinite(args.time_limit)):
        raise InvalidOptionError(f"--time-limit must be a positive number of seconds; got {args.time_limit}.")
    if not 0 <= args.gap < 1:
        raise InvalidOptionError(f"--gap must be in [0, 1); got {args.gap}.")
    if args.threads is not None and not 1 <= args.threads <= max_threads():
        raise InvalidOptionError(
            f"--threads must be in [1, {max_threads()}] (the CPUs this process may use: more only slow the solvers, "
            f"and HiGHS aborts with too many); got {args.threads}. Give --threads {max_threads()} or fewer."
        )


def _check_options(args, spec) -> str | None:
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.solvers.options import MAX_SEED

    _check_solver_numbers(args)
    if spec.exact and not 0 <= args.seed <= MAX_SEED:
        raise InvalidOptionError(
            f"--seed must be in [0, {MAX_SEED}] (the solvers' seeds are 32-bit integers); got {args.seed}."
        )
    if not spec.exact:
        if args.backend:
            raise InvalidOptionError(f"{spec.name!r} is not an exact model; --backend does not apply.")
        return None
    backends = list(spec.backends) or ["highs"]
    allowed = backends + ([b for b in PYOMO_EXTRA if b not in backends] if "highs" in backends else [])
    backend = args.backend or backends[0]
    if backend not in allowed:
        raise InvalidOptionError(
            f"--backend {backend!r} is not a back end of model {spec.name!r}; choose from {allowed}."
        )
    return backend


@contextlib.contextmanager
def _stdout_to_stderr():
    """Send what is written to standard output (Python's and the solvers' native output) to stderr.

    Python's ``sys.stdout`` becomes a file on a *copy* of the stderr descriptor: Pyomo captures
    descriptors 1 and 2 while a solver runs and, with ``-v``, echoes what it captured to
    ``sys.stdout``; were that descriptor 2 itself, the echo would be captured again (Pyomo then
    stops with "TeeStream: deadlock observed")."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        fd1, fd2 = sys.stdout.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # no real descriptors (a test's capture)
        with contextlib.redirect_stdout(sys.stderr):
            yield
        return
    saved = os.dup(fd1)
    err = os.fdopen(os.dup(fd2), "w", buffering=1, encoding="utf-8", errors="replace")
    try:
        os.dup2(fd2, fd1)
        with contextlib.redirect_stdout(err):
            yield
    finally:
        err.flush()
        err.close()
        sys.stdout.flush()
        os.dup2(saved, fd1)
        os.close(saved)


def _summaries(result) -> dict:
    """{model name: summary} from ``info["model_summary"]`` (one model) or ``info["model_summaries"]``
    (a portfolio: one per member built)."""
    info = result.info or {}
    if info.get("model_summaries"):
        return dict(info["model_summaries"])
    if info.get("model_summary"):
        return {result.algorithm: info["model_summary"]}
    return {}


def summary_line(name: str, summ: dict) -> str:
    """One line: ``model NAME (pyomo): 5,551 variables, 158 constraints, 60,210 non-zeros, horizon 18``.

    >>> summary_line("m", {"kind": "cp-sat", "variables": 12, "constraints": 3, "nonzeros": 1200, "horizon": None})
    'model m (cp-sat): 12 variables, 3 constraints, 1,200 non-zeros'
    """

    def n(x):
        return "?" if x is None else f"{x:,}"

    line = (
        f"model {name} ({summ.get('kind') or '?'}): {n(summ.get('variables'))} variables, "
        f"{n(summ.get('constraints'))} constraints, {n(summ.get('nonzeros'))} non-zeros"
    )
    if summ.get("horizon") is not None:
        line += f", horizon {summ['horizon']}"
    return line


def run(args) -> int:
    started = time.monotonic()  # --time-limit counts from here: the imports and loading the instance too

    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.solvers import progress

    _check_solver_numbers(args)
    with progress.timeline() as timeline:
        timeline.marks.append((started, "starting"))  # the imports above
        progress.phase("reading the instance")
        inst = optsched.load_instance(args.instance)
        return _solve(args, inst, started, timeline)


def _solve(args, inst, started: float, timeline) -> int:
    """``run`` once the instance is read (``timeline`` records the phases: reading, the solve's
    own, verifying, writing)."""

    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.commands._plot import check_plot
    from optsched.core import default_exact_model, get_algorithm
    from optsched.core.io import paused_gc
    from optsched.core.output import check_writable_file, prepare_out_dir
    from optsched.solvers import SolveOptions, interrupt, progress

    if args.model is None:
        spec = default_exact_model(inst.kind)
    else:
        spec = get_algorithm(args.model)
    if spec.kind != inst.kind:
        raise InvalidOptionError(
            f"Model {spec.name!r} is for instances of kind {spec.kind!r}; "
            f"{args.instance} is of kind {inst.kind!r}. See `optsched info`."
        )
    if getattr(inst, "n_jobs", len(getattr(inst, "jobs", ()) or ())) == 0:
        raise InvalidInstanceError(
            f"{args.instance}: the 'jobs' list is empty; there is nothing to schedule. Add at least one job."
        )
    backend = _check_options(args, spec)
    if args.write_model and spec.exact:  # before anything is built
        suffixes = MODEL_SUFFIXES_OF.get((spec.name, backend), MODEL_SUFFIXES.get(backend))
        check_writable_file(args.write_model, option="--write-model", suffixes=suffixes)
    if args.plot:
        if not args.out:
            raise InvalidOptionError("--plot writes schedule.png and schedule.svg into --out DIR; give --out too.")
        check_plot(inst.kind)
    out = prepare_out_dir(args.out, force=args.force, command="solve", inputs=(args.instance,)) if args.out else None
    kw = {"seed": args.seed}
    if spec.exact:
        kw["backend"] = backend
        # mip_abs_gap stays None: each exact model knows whether its objective is integral
        kw["options"] = SolveOptions(
            time_limit=args.time_limit,
            mip_rel_gap=args.gap,
            threads=args.threads,
            seed=args.seed,
            verbose=args.verbose,
        ).started(started)
        if args.write_model:
            kw["write_model"] = args.write_model
    show = spec.exact and not (args.quiet or args.verbose)  # with -v the solver log is the progress
    with contextlib.ExitStack() as stack:
        if spec.exact:  # a signal stops the solver (or the phase under way) and the best schedule is written
            stack.enter_context(interrupt.guard())
        # stdout stays the result only: what solvers or Pyomo print goes to stderr
        with _stdout_to_stderr(), progress.display() if show else contextlib.nullcontext():
            result = spec(inst, **kw)
        stack.enter_context(interrupt.guard())  # a signal from here on waits: the result is written whole
        stack.enter_context(paused_gc())  # verifying and writing build many objects, none of them garbage
        return _finish(args, inst, spec, result, out, json, timeline)


def _print_json_with_schedule(res: dict, schedule, text: str | None = None) -> None:
    """``print_json({**res, "schedule": schedule.to_dict()})`` with the schedule's jobs one per line,
    written by json's C encoder (``indent`` makes json use its pure-Python one: tens of seconds
    for 500,000 jobs)."""

    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core.io import json_one_item_per_line

    head = io.StringIO()
    print_json(res, file=head)
    if text is None:
        text = (
            schedule.json_text()
            if hasattr(schedule, "json_text")
            else json_one_item_per_line(schedule.to_dict(), "jobs")
        )
    sched = text.rstrip("\n").replace("\n", "\n  ")
    sys.stdout.write(head.getvalue().rstrip()[:-1].rstrip() + ',\n  "schedule": ' + sched + "\n}\n")
    sys.stdout.flush()


def _finish(args, inst, spec, result, out, json, timeline) -> int:
    """Verify, write and print the result of the solve (inside a guard: a signal waits)."""
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.commands._plot import write_gantt
    from optsched.core.io import atomic_write_text, json_one_item_per_line, save_schedule
    from optsched.core.result import Status
    from optsched.solvers import interrupt, progress
    from optsched.verify import verify_result

    progress.phase("verifying")
    report = verify_result(inst, result) if result.schedule is not None else None
    plotted: list = []
    row = result.to_row()
    row["verified"] = None if report is None else report.ok
    info = result.info or {}
    if spec.exact:  # which phase ran out of the time limit (None: none did), and the seconds of each
        row["limit_reached_in"] = info.get("limit_reached_in")
    progress.phase("writing")
    text = None  # the schedule's JSON, encoded once for schedule.json and --json
    if out is not None:
        if result.schedule is not None and hasattr(result.schedule, "to_dict"):
            sched = result.schedule
            # once, for --json too
            text = sched.json_text() if hasattr(sched, "json_text") else json_one_item_per_line(sched.to_dict(), "jobs")
            save_schedule(result.schedule, out / "schedule.json", inst, text=text)  # with the instance's name and hash
            if args.plot:
                obj = "" if result.objective is None else f" {result.objective:.10g}"
                title = f"{inst.name}: {result.algorithm}, {result.status.value}{obj}"
                plotted = write_gantt(inst, result.schedule, out / "schedule", title=title)
        atomic_write_text(
            out / "result.json",
            json.dumps(
                {
                    **row,
                    "violations": [] if report is None else [str(v) for v in report.violations],
                    "phases": timeline.seconds(),
                },
                indent=2,
                default=str,
            )
            + "\n",
        )
    if args.json:
        res = dict(row)
        res["violations"] = [] if report is None else [str(v) for v in report.violations]
        res["phases"] = timeline.seconds()
        if args.verbose:
            res["model_summary"] = _summaries(result)
        if plotted:
            res["plot"] = [str(p) for p in plotted]
        if result.schedule is not None and hasattr(result.schedule, "to_dict"):
            _print_json_with_schedule(res, result.schedule, text)
        else:
            print_json(res)
    else:
        if args.verbose:
            for name, summ in _summaries(result).items():
                print(summary_line(name, summ))
        print_table(
            [
                {
                    k: row[k]
                    for k in ("instance", "algorithm", "status", "objective", "bound", "gap", "runtime", "verified")
                }
            ]
        )
        if report is not None and not report.ok:
            print(report.summary())
        if row.get("limit_reached_in"):
            best = {"initial": "the warm start's", "solver": "the solver's"}.get(info.get("incumbent"), "no")
            print(f"time limit ({args.time_limit:g} s) reached while {row['limit_reached_in']}: {best} schedule.")
        if out is not None:
            print(f"wrote {out / 'schedule.json'} and {out / 'result.json'}")
            if plotted:
                print(f"drew the schedule: {', '.join(str(p) for p in plotted)}")
    if result.status == Status.INTERRUPTED:
        where = f" (written to {out})" if out is not None and result.schedule is not None else ""
        what = "its best schedule so far" if result.schedule is not None else "no schedule"
        print(f"optsched: interrupted ({interrupt.described()}): {what}{where}, status interrupted.", file=sys.stderr)
        return interrupt.exit_code()
    if not result.status.has_solution:
        return EXIT_FAILED
    return EXIT_OK if report is None or report.ok else EXIT_FAILED
