"""optsched.core.registry: kinds and algorithms by name, KindSpec checks."""

import pytest

from optsched.core.registry import (
    KindSpec,
    get_algorithm,
)
from optsched.exceptions import InvalidOptionError, UnknownNameError


def test_kind_spec_sense_is_checked():
    with pytest.raises(InvalidOptionError, match="sense must be one of"):
        KindSpec("k", object, sense="maximise")


def test_an_algorithm_has_one_name():
    import optsched

    optsched.load_plugins()
    with pytest.raises(UnknownNameError, match="a-srpt"):
        get_algorithm("a-srpt")
