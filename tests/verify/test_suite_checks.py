"""The suite's checks fail when they should (they are not tests that cannot fail)."""

from optsched.core import Result, Status
from optsched.core.registry import AlgorithmSpec
from optsched.verify.suite import check_algorithm, check_exact_is_lower, check_optimal


def _res(obj, status=Status.OPTIMAL, name="rigid-exact[highs]"):
    return Result(
        algorithm=name, instance="i", objective=obj, objective_name="total_weighted_completion_time", status=status
    )


def test_exact_is_lower_and_optimal_fail_when_they_should():
    import optsched.rigid  # noqa: F401  (registers the kind)

    assert check_exact_is_lower("rigid", _res(10.0), 12.0) is True
    assert check_exact_is_lower("rigid", _res(10.0), 10.0 + 1e-9) is True
    assert "worse than" in check_exact_is_lower("rigid", _res(10.0), 9.0)
    assert "no proven optimum" in check_exact_is_lower("rigid", _res(10.0, Status.FEASIBLE), 12.0)
    assert check_optimal(_res(1.0)) is True
    assert "did not prove" in check_optimal(_res(1.0, Status.FEASIBLE))


def test_a_wrong_result_name_fails_algorithm_name():
    import optsched
    from optsched.rigid import list_schedule

    inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))

    def renamed(instance, *, seed=None):
        r = list_schedule(instance, rule="wspt")
        r.algorithm = "WSPT"
        return r

    out = check_algorithm(AlgorithmSpec("rigid-x", "rigid", renamed), inst)
    assert "not the registry name 'rigid-x'" in out["algorithm_name"]
    assert out["feasible"] is True
