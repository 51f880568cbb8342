"""The calibrated synthetic generator: seeded, marginals as documented, load as asked."""

import numpy as np
import pytest

from optsched.exceptions import InvalidOptionError
from optsched.traces import PHILLY_GPU_MIX, philly_runtimes, synthetic_workload


def test_same_seed_same_table_and_different_seed_differs():
    a = synthetic_workload(500, cluster_gpus=64, seed=3)
    b = synthetic_workload(500, cluster_gpus=64, seed=3)
    c = synthetic_workload(500, cluster_gpus=64, seed=4)
    assert a.equals(b) and not a.equals(c)


@pytest.mark.parametrize("arrivals", ["poisson", "trace"])
def test_marginals_and_load(arrivals):
    n, C, load = 20000, 6000, 0.7
    df = synthetic_workload(n, cluster_gpus=C, load=load, arrivals=arrivals, seed=0)
    frac = df["gpus"].value_counts(normalize=True)
    for g, p in PHILLY_GPU_MIX.items():
        assert abs(frac[g] - p) < 0.015
    # durations come from the real Philly runtimes
    pool = set(philly_runtimes().tolist())
    assert df["duration"].isin(pool).all()
    assert abs(np.median(df["duration"]) / np.median(philly_runtimes()) - 1) < 0.05
    # mean gap = E[g d] / (load C) over the drawn jobs, so offered load ~ load
    gaps = np.diff(df["arrival"].to_numpy())
    target = float((df["gpus"] * df["duration"]).mean()) / (load * C)
    assert abs(gaps.mean() / target - 1) < (0.03 if arrivals == "poisson" else 0.15)
    assert (gaps >= 0).all()


def test_openb_mix_outcomes_caps():
    df = synthetic_workload(
        3000, cluster_gpus=32, gpus="openb", max_gpus=4, max_duration=1000.0, outcomes="Philly", seed=1
    )
    assert df["gpus"].max() <= 4 and df["duration"].max() <= 1000.0
    assert set(df["status"]) <= {"completed", "killed", "failed"}
    assert abs((df["status"] == "completed").mean() - 0.605) < 0.04


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"n_jobs": 0}, "n_jobs"),
        ({"load": 0}, "load"),
        ({"arrivals": "burst"}, "arrivals"),
        ({"gpus": {0: 1.0}}, "keys >= 1"),
        ({"gpus": "alibaba"}, "'gpus' option"),
        ({"durations": [1, -1]}, "durations"),
        ({"outcomes": "Mars"}, "Unknown Acme cluster"),
        ({"outcomes": "PAI"}, "no outcome rates"),
        ({"gpus": {16: 1.0}}, "fits"),
        ({"cluster_gpus": 0}, "cluster_gpus"),
    ],
)
def test_bad_options(kw, msg):
    args = {"n_jobs": 10, "cluster_gpus": 8} | kw
    n = args.pop("n_jobs")
    with pytest.raises(InvalidOptionError, match=msg):
        synthetic_workload(n, **args)


def test_mean_gap_mean_duration_and_models():
    df = synthetic_workload(
        20000, cluster_gpus=64, mean_gap=39.0, mean_duration=600.0, models=["bert", "vgg16"], seed=4
    )
    gaps = np.diff(df["arrival"].to_numpy())
    assert abs(gaps.mean() - 39.0) < 39.0 * 0.03  # 20,000 exponential gaps: within 3%
    assert df["duration"].mean() == pytest.approx(600.0)
    assert set(df["model"]) == {"bert", "vgg16"} and abs((df["model"] == "bert").mean() - 0.5) < 0.02
    cols = synthetic_workload(50, cluster_gpus=8, models={"a": 0.25, "b": 0.75}, seed=1, frame=False)
    assert set(cols["model"]) <= {"a", "b"}
    for kw, word in [
        ({"load": 0.5, "mean_gap": 3.0}, "not both"),
        ({"mean_gap": 0}, "mean_gap"),
        ({"mean_duration": -1}, "mean_duration"),
        ({"models": []}, "models"),
        ({"models": {"a": 0.5}}, "sum to 1"),
    ]:
        with pytest.raises(InvalidOptionError, match=word):
            synthetic_workload(10, cluster_gpus=8, **kw)


def test_default_draws_are_unchanged_by_the_new_options():
    a = synthetic_workload(300, cluster_gpus=32, seed=7)
    b = synthetic_workload(300, cluster_gpus=32, seed=7, load=0.8, models=["m"])
    assert a["arrival"].tolist() == b["arrival"].tolist() and a["duration"].tolist() == b["duration"].tolist()
