"""Solver parameters a solver cannot take are refused before any work, naming the field, the
value and the fix: thread counts beyond the machine's CPUs (HiGHS aborted the process after
74 s with 100,000; CP-SAT answered "MODEL_INVALID:"), seeds beyond the solvers' 32 bits (an
OR-Tools TypeError), raw solver options the solver does not have or with a value it refuses."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from optsched.cli import main
from optsched.exceptions import InvalidOptionError
from optsched.rigid import random_instance, solve_exact
from optsched.solvers import SolveOptions
from optsched.solvers.options import MAX_SEED, max_threads
from optsched.solvers.params import check_solver_options

TOY = "toy:rigid-2x2-five"


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"threads": max_threads() + 1}, "threads"),
        ({"threads": 100_000}, "threads"),
        ({"threads": 0}, "threads"),
        ({"seed": MAX_SEED + 1}, "seed"),
        ({"seed": 10**20}, "seed"),
        ({"seed": -1}, "seed"),
    ],
)
def test_solve_options_refuse_what_the_solvers_cannot_take(kw, field):
    with pytest.raises(InvalidOptionError, match=rf"'{field}' field of the solve options"):
        SolveOptions(**kw)


def test_the_largest_accepted_values_solve():
    inst = random_instance(5, seed=1)
    for backend in ("highs", "cpsat"):
        r = solve_exact(
            inst, backend=backend, options=SolveOptions(time_limit=30, threads=max_threads(), seed=MAX_SEED)
        )
        assert r.status.value == "optimal", (backend, r.status, r.info.get("solver_message"))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.integers(MAX_SEED - 2**10, MAX_SEED + 2**10)  # near the top end, where a draw over 2^70 never goes
    | st.integers(-(2**10), 2**10)
)
@example(0)  # the range's ends, exactly, and one past each
@example(-1)
@example(2**31 - 1)
@example(2**31)
@example(2**32 - 1)
@example(2**32)
@example(2**63)
def test_a_seed_is_accepted_exactly_in_the_32_bit_range(seed):
    """The solvers take seeds in [0, 2^31 - 1] (CP-SAT's random_seed is a signed 32-bit int)."""
    assert MAX_SEED == 2**31 - 1
    ok = 0 <= seed <= 2**31 - 1
    try:
        SolveOptions(seed=seed)
        accepted = True
    except InvalidOptionError:
        accepted = False
    assert accepted == ok


@pytest.mark.parametrize(
    ("options", "backend", "match"),
    [
        ({"bogus": 1}, "cpsat", "CP-SAT has no parameter 'bogus'"),
        ({"num_workers": "two"}, "cpsat", "'num_workers' .* does not take 'two'"),
        ({"num_workers": 100_000}, "cpsat", "'num_workers' .* must be at most"),
        ({"random_seed": 10**20}, "cpsat", "'random_seed' .* does not take"),
        ({"presolv": "off"}, "highs", "HiGHS has no option 'presolv'"),
        ({"presolve": "maybe"}, "highs", "'presolve' .* does not take 'maybe'"),
        ({"mip_rel_gap": -1}, "highs", "'mip_rel_gap' .* does not take -1"),
        ({"threads": 100_000}, "highs", "'threads' .* must be at most"),
    ],
)
def test_raw_solver_options_are_checked_before_the_build(options, backend, match):
    with pytest.raises(InvalidOptionError, match=match):
        check_solver_options(options, backend)
    inst = random_instance(5, seed=1)
    with pytest.raises(InvalidOptionError, match=match):  # through the API: before any model is built
        solve_exact(inst, backend=backend, options=SolveOptions(time_limit=10, solver_options=options))


def test_valid_raw_options_pass():
    check_solver_options({"cp_model_presolve": False, "num_workers": 1}, "cpsat")
    check_solver_options({"presolve": "off", "mip_rel_gap": 0.01, "threads": 1}, "highs")
    check_solver_options({"anything": 1}, "gurobi")  # other back ends: their own checks


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--threads", "100000"], "--threads must be in"),
        (["--threads", "0"], "--threads must be in"),
        (["--seed", str(10**20)], "--seed must be in"),
        (["--time-limit", "inf"], "--time-limit must be a positive number"),
    ],
)
def test_the_cli_refuses_them_with_exit_2(argv, match, capsys):
    assert main(["solve", TOY, "--backend", "cpsat", *argv]) == 2
    assert match in capsys.readouterr().err


@pytest.mark.skipif(max_threads() < 2, reason="needs two CPUs")
def test_highs_takes_another_thread_count_in_the_same_process():
    """HiGHS starts one scheduler per process with the first run's thread count and refused a
    later run with another (a solve with threads=2 after threads=1 returned no solution)."""
    inst = random_instance(5, seed=1)
    for threads in (1, 2, 1):
        r = solve_exact(inst, backend="highs", options=SolveOptions(time_limit=30, threads=threads))
        assert r.status.value == "optimal" and r.info["incumbent"] == "solver", threads
