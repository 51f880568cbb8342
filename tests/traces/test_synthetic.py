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
    df = synthetic_workload(3000, cluster_gpus=32, gpus="openb", max_gpus=4, max_duration=1000.0,
                            outcomes="Philly", seed=1)
    assert df["gpus"].max() <= 4 and df["duration"].max() <= 1000.0
    assert set(df["status"]) <= {"completed", "killed", "failed"}
    assert abs((df["status"] == "completed").mean() - 0.605) < 0.04


@pytest.mark.parametrize("kw, msg", [
    ({"n_jobs": 0}, "n_jobs"), ({"load": 0}, "load"), ({"arrivals": "burst"}, "arrivals"),
    ({"gpus": {0: 1.0}}, "keys >= 1"), ({"gpus": "alibaba"}, "'gpus' option"), ({"durations": [1, -1]}, "durations"),
    ({"outcomes": "Mars"}, "Unknown Acme cluster"), ({"outcomes": "PAI"}, "no outcome rates"),
    ({"gpus": {16: 1.0}}, "fits"), ({"cluster_gpus": 0}, "cluster_gpus"),
])
def test_bad_options(kw, msg):
    args = {"n_jobs": 10, "cluster_gpus": 8} | kw
    n = args.pop("n_jobs")
    with pytest.raises(InvalidOptionError, match=msg):
        synthetic_workload(n, **args)
