"""Run the doctests of every asrpt module (toy instances only)."""

import doctest
import importlib

import pytest

MODULES = [
    "optsched.asrpt",
    "optsched.asrpt.model",
    "optsched.asrpt.timing",
    "optsched.asrpt.heavy_edge",
    "optsched.asrpt.placement",
    "optsched.asrpt.formulation",
    "optsched.asrpt.exact",
    "optsched.asrpt.bounds",
    "optsched.asrpt.profiles",
    "optsched.asrpt.generate",
    "optsched.asrpt.prediction",
    "optsched.asrpt.policy",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
