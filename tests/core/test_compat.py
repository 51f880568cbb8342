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


def test_deprecated_names_serve_the_object_with_a_warning_naming_the_new_one():
    from optsched.core.compat import DEPRECATED_SINCE, REMOVED_IN, deprecated_names

    getattr_ = deprecated_names("pkg.mod", {"old": ("pkg.mod.new", sum)})
    with pytest.warns(DeprecationWarning) as w:
        assert getattr_("old") is sum
    assert str(w[0].message) == (
        f"pkg.mod.old is deprecated since optsched {DEPRECATED_SINCE} and will be removed in {REMOVED_IN}: "
        "use pkg.mod.new."
    )
    with pytest.raises(AttributeError, match=r"module 'pkg\.mod' has no attribute 'other'"):
        getattr_("other")
