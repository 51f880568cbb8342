"""``optsched solve INSTANCE --model NAME``: exact optimum (or any registered algorithm)."""

from __future__ import annotations

from optsched.commands._common import EXIT_FAILED, EXIT_OK, print_json, print_table


def add_parser(sub) -> None:
    p = sub.add_parser("solve", help="solve an instance with a registered exact model or algorithm")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("--model", default=None,
                   help="registered model or algorithm name (default: the first exact model of the instance's kind)")
    p.add_argument("--backend", default=None, help="highs (default), cpsat, or a Pyomo solver name")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds (default 60)")
    p.add_argument("--gap", type=float, default=0.0, help="relative MIP gap at which to stop (default 0)")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="write the schedule (JSON) here")
    p.add_argument("--write-model", default=None, metavar="FILE",
                   help="also write the exact model to FILE (.lp/.mps for Pyomo, .pb/.pbtxt for CP-SAT)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> int:
    import optsched
    from optsched.core import algorithms, get_algorithm
    from optsched.exceptions import InvalidOptionError, UnknownNameError
    from optsched.solvers import SolveOptions
    from optsched.verify import verify_result

    inst = optsched.load_instance(args.instance)
    if args.model is None:
        exact = algorithms(inst.kind, exact=True)
        if not exact:
            raise UnknownNameError(f"No exact model is registered for kind {inst.kind!r}; pass --model.")
        spec = exact[0]
    else:
        spec = get_algorithm(args.model)
    if spec.kind != inst.kind:
        raise InvalidOptionError(f"Model {spec.name!r} is for instances of kind {spec.kind!r}; "
                                 f"{args.instance} is of kind {inst.kind!r}. See `optsched info`.")
    kw = {"seed": args.seed}
    if spec.exact:
        backend = args.backend or (spec.backends[0] if spec.backends else "highs")
        if spec.backends and backend not in spec.backends and backend == "cpsat":
            raise InvalidOptionError(f"Model {spec.name!r} has no CP-SAT version; backends: {list(spec.backends)}.")
        kw["backend"] = backend
        # mip_abs_gap stays None: each exact model knows whether its objective is integral
        kw["options"] = SolveOptions(time_limit=args.time_limit, mip_rel_gap=args.gap, threads=args.threads,
                                     seed=args.seed)
        if args.write_model:
            kw["write_model"] = args.write_model
    elif args.backend:
        raise InvalidOptionError(f"{spec.name!r} is not an exact model; --backend does not apply.")
    result = spec(inst, **kw)
    report = verify_result(inst, result) if result.schedule is not None else None
    row = result.to_row()
    row["verified"] = None if report is None else report.ok
    if args.out and result.schedule is not None and hasattr(result.schedule, "to_json"):
        result.schedule.to_json(args.out)
    if args.json:
        out = dict(row)
        out["violations"] = [] if report is None else [str(v) for v in report.violations]
        if result.schedule is not None and hasattr(result.schedule, "to_dict"):
            out["schedule"] = result.schedule.to_dict()
        print_json(out)
    else:
        print_table([{k: row[k] for k in ("instance", "algorithm", "status", "objective", "bound", "gap",
                                          "runtime", "verified")}])
        if report is not None and not report.ok:
            print(report.summary())
    if not result.status.has_solution:
        return EXIT_FAILED
    return EXIT_OK if report is None or report.ok else EXIT_FAILED
