import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.lazer import DEFAULT_VARIANT, FAMILIES, PARAMETER_COUNTS, SOURCES, LoadSaveModel
from optsched.lazer.loadsave import BASE_LOAD_SWEEP
from optsched.sim import Simulator, get_policy


def test_table_covers_the_seven_families_with_sources():
    assert len(FAMILIES) == 7 and set(DEFAULT_VARIANT) == set(FAMILIES)
    assert all(DEFAULT_VARIANT[f] in PARAMETER_COUNTS for f in FAMILIES)
    assert set(SOURCES) == set(PARAMETER_COUNTS) and all(SOURCES.values())
    for fam in FAMILIES:  # at least two named variants per family, except VGG19 (vgg19, vgg19_bn)
        prefix = DEFAULT_VARIANT[fam].split("_")[0]
        assert sum(v.startswith(prefix) for v in PARAMETER_COUNTS) >= 2


def test_mean_save_is_sec32s_8_seconds_and_loads_in_60_360():
    ls = LoadSaveModel()
    assert 7.0 < np.mean([ls.save_seconds(f) for f in FAMILIES]) < 9.0
    for v in PARAMETER_COUNTS:
        assert 60.0 < ls.load_seconds(v) < 360.0


@settings(max_examples=30, deadline=None)
@given(base=st.sampled_from(BASE_LOAD_SWEEP), model=st.sampled_from(sorted(PARAMETER_COUNTS) + list(FAMILIES)))
def test_formulas(base, model):
    ls = LoadSaveModel(base=base)
    n = PARAMETER_COUNTS[DEFAULT_VARIANT.get(model, model)]
    assert ls.save_seconds(model) == pytest.approx(12 * n / 125e6)
    assert ls.load_seconds(model) == pytest.approx(base + 12 * n / 125e6)


def test_used_by_the_simulator():
    ls = LoadSaveModel(base=30)
    jobs = [Job(0, work=100, attrs={"model": "VGG19"}), Job(1, work=10, arrival=50, attrs={"model": "tnt_s"})]
    res = Simulator(
        Cluster.homogeneous(1, 1),
        jobs,
        get_policy("srtf", reserve="best"),
        load_time=ls.load_time,
        save_time=ls.save_time,
    ).run()
    df = res.jobs_frame().set_index("job_id")
    assert df.loc[0, "saving_time"] == pytest.approx(ls.save_seconds("vgg19"))
    assert df.loc[1, "loading_time"] == pytest.approx(ls.load_seconds("tnt_s"))
    assert df.loc[0, "loading_time"] == pytest.approx(2 * ls.load_seconds("vgg19"))


def test_bad_input():
    ls = LoadSaveModel()
    with pytest.raises(InvalidInstanceError, match="'resnet50' has no load/save entry"):
        ls.save_seconds("resnet50")
    with pytest.raises(InvalidInstanceError, match="no 'model' attribute"):
        ls.load_time(Job(0, work=1))
    for bad in (-1.0, math.nan, math.inf, "x"):
        with pytest.raises(InvalidOptionError, match="'base'"):
            LoadSaveModel(base=bad)
    for bad in (-5, math.nan):
        with pytest.raises(InvalidInstanceError, match="parameter count of model 'm'"):
            LoadSaveModel(counts={"m": bad})
    with pytest.raises(InvalidOptionError, match="bandwidth"):
        LoadSaveModel(bandwidth=0)
    assert LoadSaveModel(counts={"m": 125e6 / 12}).save_seconds("m") == pytest.approx(1.0)
