import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.asrpt import toy_instance
from optsched.asrpt.prediction import IterationPredictor, average_prediction_error, with_predictions
from optsched.exceptions import InvalidOptionError

rows = st.lists(
    st.tuples(st.sampled_from("abcd"), st.sampled_from(["u1", "u2"]), st.integers(0, 1000)), min_size=1, max_size=30
)


@settings(max_examples=30, deadline=None)
@given(hist=rows)
def test_mean_median_match_numpy_and_unseen_is_zero(hist):
    for kind, f in (("mean", np.mean), ("median", np.median)):
        p = IterationPredictor(kind).fit(hist)
        for g in "abcd":
            vals = [n for gg, _, n in hist if gg == g]
            got = p.predict([(g, "u1")])[0]
            assert got == (int(np.rint(f(vals))) if vals else 0)
    assert IterationPredictor("rf", n_estimators=5).fit(hist).predict([("zz", "u1")])[0] == 0


def test_random_forest_learns_recurring_groups():
    rng = np.random.default_rng(0)
    hist = [(g, f"u{g % 3}", 100 * (g + 1) + int(rng.integers(-5, 6))) for g in range(10) for _ in range(20)]
    p = IterationPredictor("rf", seed=0).fit(hist)
    pred = p.predict([(g, f"u{g % 3}") for g in range(10)])
    assert average_prediction_error([100 * (g + 1) for g in range(10)], pred) < 10


def test_perfect_and_errors():
    inst = toy_instance()
    out = with_predictions(inst, IterationPredictor("perfect"))
    assert [j.predicted_iterations for j in out.jobs] == [j.iterations for j in inst.jobs]
    with pytest.raises(InvalidOptionError, match="kind"):
        IterationPredictor("lstm")
    with pytest.raises(InvalidOptionError, match="fit"):
        IterationPredictor("mean").predict([("a", "u")])
    with pytest.raises(InvalidOptionError, match="row 0"):
        IterationPredictor("mean").fit([("a", "u", -1)])


def test_online_retraining_in_asrpt():
    from optsched.asrpt.generate import random_instance
    from optsched.asrpt.online import ASRPT
    from optsched.asrpt.policy import simulate_asrpt
    from optsched.verify import verify

    inst = random_instance(12, n_servers=2, gpus_per_server=2, seed=5, single_gpu=0.5, arrival_rate=1.0)
    hist = [(j.group, j.user, j.iterations) for j in inst.jobs[:3]]
    pol = ASRPT(tau=0.5, predictor=IterationPredictor("median"), history=hist, retrain_every=20.0)
    res = simulate_asrpt(inst, pol)
    assert verify(inst, res.schedule()).ok
    assert pol.n_retrains >= 2  # fitted at the start and again on the schedule
    assert len(pol._history) == len(hist) + inst.n_jobs
    with pytest.raises(InvalidOptionError, match="retrain_every"):
        ASRPT(predictor=IterationPredictor("rf"), retrain_every=0)
