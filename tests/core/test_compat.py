"""optsched.core.compat: old call forms and former names keep working, each with one DeprecationWarning."""

import warnings

import pytest

from optsched.core.compat import deprecated_positional
from optsched.exceptions import InvalidOptionError


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
