"""optsched.core.registry: kinds and algorithms by name, aliases, KindSpec checks."""

import pytest

from optsched.core.registry import (
    _ALGORITHMS,
    _ALIASES,
    KindSpec,
    algorithms,
    get_algorithm,
    register_algorithm,
)
from optsched.exceptions import InvalidOptionError, UnknownNameError


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


def test_an_algorithm_alias_warns_that_it_is_deprecated():
    import optsched

    optsched.load_plugins()
    with pytest.warns(DeprecationWarning, match=r"'a-srpt' is deprecated .* use 'asrpt-a-srpt'"):
        assert get_algorithm("a-srpt") is get_algorithm("asrpt-a-srpt")
