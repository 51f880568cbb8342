"""optsched.exceptions: one hierarchy, each error also the built-in a caller would catch."""

from __future__ import annotations

import inspect

import pytest

from optsched import exceptions as E

BUILTIN = {
    E.InvalidInstanceError: ValueError,
    E.InvalidScheduleError: ValueError,
    E.InvalidOptionError: ValueError,
    E.UnknownNameError: KeyError,
    E.SolverUnavailableError: RuntimeError,
    E.SolverError: RuntimeError,
    E.ModelTooLargeError: MemoryError,
    E.VerificationError: AssertionError,
    E.SimulationError: RuntimeError,
    E.TraceFormatError: ValueError,
    E.DataNotFoundError: FileNotFoundError,
    E.InternalError: RuntimeError,
}


def test_every_error_is_an_optsched_error_and_every_warning_an_optsched_warning():
    for name, obj in vars(E).items():
        if inspect.isclass(obj) and obj.__module__ == E.__name__:
            if issubclass(obj, Warning):
                assert issubclass(obj, E.OptschedWarning) and issubclass(obj, UserWarning), name
            else:
                assert issubclass(obj, E.OptschedError), name


@pytest.mark.parametrize(("exc", "builtin"), sorted(BUILTIN.items(), key=lambda kv: kv[0].__name__))
def test_each_error_is_also_the_builtin_callers_expect(exc, builtin):
    assert issubclass(exc, builtin)


def test_an_unplaceable_job_is_bad_input_and_infeasible():
    assert issubclass(E.UnplaceableJobError, E.InvalidInstanceError)
    assert issubclass(E.UnplaceableJobError, E.InfeasibleError)
    assert issubclass(E.SimulationLimitError, E.SimulationError)


def test_an_unknown_name_reads_as_its_message_not_as_a_quoted_key():
    assert str(E.UnknownNameError("No job with id 7.")) == "No job with id 7."
