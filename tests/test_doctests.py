"""Run the Examples sections (doctests) of every optsched module."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import optsched

MODULES = sorted(m.name for m in pkgutil.walk_packages(optsched.__path__, "optsched."))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert res.failed == 0, f"{res.failed} doctest(s) failed in {name}"
