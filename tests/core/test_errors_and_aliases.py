"""Issue 10 items 5-6 in core: errors from optsched.exceptions, algorithm aliases, deprecated call forms."""

import warnings

import pytest

from optsched.core import Cluster, Instance, Job
from optsched.core.compat import deprecated_positional
from optsched.core.registry import (
    _ALGORITHMS,
    _ALIASES,
    KindSpec,
    algorithms,
    get_algorithm,
    register_algorithm,
)
from optsched.exceptions import InvalidOptionError, OptschedError, UnknownNameError


def test_missing_job_is_an_optsched_error_and_still_a_key_error():
    inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=1)])
    with pytest.raises(UnknownNameError, match="No job with id 7") as e:
        inst.job(7)
    assert isinstance(e.value, KeyError) and isinstance(e.value, OptschedError)


def test_kind_spec_sense_is_checked():
    with pytest.raises(InvalidOptionError, match="sense must be one of"):
        KindSpec("k", object, sense="maximise")


def test_aliases_resolve_but_are_not_listed():
    try:

        @register_algorithm("t-new", "t-kind", aliases=("t-old", "t_older"))
        def f(instance):
            return instance

        with pytest.warns(DeprecationWarning, match="'t-old' is deprecated"):
            old = get_algorithm("t-old")
        with pytest.warns(DeprecationWarning, match="'t_older' is deprecated"):
            older = get_algorithm("t_older")
        assert old is older is get_algorithm("t-new")
        assert [a.name for a in algorithms("t-kind")] == ["t-new"]
        assert get_algorithm("t-new").aliases == ("t-old", "t_older")
        with pytest.raises(UnknownNameError, match="t-nope"):
            get_algorithm("t-nope")
    finally:
        _ALGORITHMS.pop("t-new", None)
        _ALIASES.pop("t-old", None)
        _ALIASES.pop("t_older", None)


def test_deprecated_positional():
    assert deprecated_positional("f", (), ("a",), {}) == {}
    with pytest.warns(DeprecationWarning, match=r"f\(\.\.\., 1\) is deprecated: pass a=1 by keyword"):
        assert deprecated_positional("f", (1,), ("a", "b"), {"b": None}) == {"a": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidOptionError, match="both by position and by keyword"):
            deprecated_positional("f", (1,), ("a",), {"a": 2})
        with pytest.raises(InvalidOptionError, match="at most 1"):
            deprecated_positional("f", (1, 2), ("a",), {})


def test_an_algorithm_alias_warns_that_it_is_deprecated():
    import optsched

    optsched.load_plugins()
    with pytest.warns(DeprecationWarning, match=r"'a-srpt' is deprecated .* use 'asrpt-a-srpt'"):
        assert get_algorithm("a-srpt") is get_algorithm("asrpt-a-srpt")
