"""optsched.core.compat: a warning raised deep in the package points at the user's line."""

import inspect
import warnings

import pandas as pd

from optsched.lazer.workload import with_load_save


def test_a_warning_raised_in_the_package_names_the_users_line():
    table = pd.DataFrame({"arrival": [0.0], "duration": [10.0], "gpus": [1], "model": ["my-own-net"]})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        with_load_save(table, seed=0)
    hits = [x for x in w if "outside Lazer's table" in str(x.message)]
    assert hits, [str(x.message) for x in w]
    assert (hits[0].filename, hits[0].lineno) == (__file__, line)
