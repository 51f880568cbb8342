"""Raw solver parameters (``SolveOptions.solver_options``) checked before any model is built.

The solvers themselves refuse a bad parameter only once they run: CP-SAT with "MODEL_INVALID"
(or a TypeError while the parameters are set), HiGHS with an error status after the model was
handed over. :func:`check_solver_options` asks each solver's own parameter object first, so the
mistake is an :class:`~optsched.exceptions.InvalidOptionError` naming the parameter, its value
and the fix, before any work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optsched.exceptions import InvalidOptionError
from optsched.solvers.options import max_threads


def check_solver_options(solver_options: Mapping[str, Any], backend: str) -> None:
    """Refuse ``solver_options`` that ``backend`` (``"cpsat"`` or ``"highs"``; others are not
    checked) does not have, or that it has with another type or range.

    >>> check_solver_options({"cp_model_presolve": False}, "cpsat")
    >>> check_solver_options({"presolve": "off"}, "highs")
    >>> check_solver_options({"presolv": "off"}, "highs")
    Traceback (most recent call last):
    ...
    optsched.exceptions.InvalidOptionError: HiGHS has no option 'presolv' ...
    """
    if not solver_options:
        return
    if backend == "cpsat":
        _check_cpsat(solver_options)
    elif backend == "highs":
        _check_highs(solver_options)


def _check_cpsat(solver_options: Mapping[str, Any]) -> None:
    from ortools.sat import sat_parameters_pb2

    p = sat_parameters_pb2.SatParameters()
    for k, v in solver_options.items():
        if not isinstance(k, str) or k not in p.DESCRIPTOR.fields_by_name:
            raise InvalidOptionError(
                f"CP-SAT has no parameter {k!r} (solver_options); see the SatParameters names in OR-Tools' "
                f"sat_parameters.proto, e.g. 'num_workers', 'cp_model_presolve'."
            )
        try:
            setattr(p, k, v)
        except (AttributeError, TypeError, ValueError) as e:
            raise InvalidOptionError(
                f"The CP-SAT parameter {k!r} (solver_options) does not take {v!r}: {e}. Give a value of its type."
            ) from None
    for k in ("num_workers", "num_search_workers"):
        if k in solver_options:
            _check_threads(getattr(p, k), f"the CP-SAT parameter {k!r} (solver_options)")


def _check_threads(n: Any, what: str) -> None:
    if isinstance(n, int) and n > max_threads():
        raise InvalidOptionError(
            f"{what[0].upper()}{what[1:]} must be at most {max_threads()} (the CPUs this process may use: more only "
            f"slow the solver, and HiGHS aborts with too many); got {n}. Use SolveOptions(threads=...) within that."
        )


def _check_highs(solver_options: Mapping[str, Any]) -> None:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)  # its own complaint about a bad option would go to stdout
    for k, v in solver_options.items():
        if not isinstance(k, str):
            raise InvalidOptionError(f"HiGHS option names are strings; got {k!r} (solver_options).")
        known = h.getOptionValue(k)
        if isinstance(known, tuple) and known and known[0] != highspy.HighsStatus.kOk:
            raise InvalidOptionError(
                f"HiGHS has no option {k!r} (solver_options); see the HiGHS options list, e.g. 'presolve', "
                f"'mip_rel_gap'."
            )
        try:
            status = h.setOptionValue(k, v)
        except Exception as e:  # a value of another type
            raise InvalidOptionError(
                f"The HiGHS option {k!r} (solver_options) does not take {v!r}: {e}. Give a value of its type."
            ) from None
        if status != highspy.HighsStatus.kOk:
            raise InvalidOptionError(
                f"The HiGHS option {k!r} (solver_options) does not take {v!r} (out of its range or not one of "
                f"its values). See the HiGHS options list."
            )
        if k == "threads":
            _check_threads(v, "the HiGHS option 'threads' (solver_options)")
