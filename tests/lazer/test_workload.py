"""Load and save times per job from a generic job table (formulations/lazer.md#from-a-trace)."""

from __future__ import annotations

import pandas as pd
import pytest

from optsched.exceptions import InvalidInstanceError
from optsched.lazer import FAMILIES, LoadSaveModel
from optsched.lazer.workload import with_load_save


def test_known_models_kept_others_drawn_times_from_the_model():
    t = pd.DataFrame({"arrival": [0.0] * 4, "gpus": 1, "duration": 5.0, "model": ["vit_b_16", "Swin", "gpt-9", None]})
    out = with_load_save(t, base=30.0, seed=0)
    assert list(out["model"][:2]) == ["vit_b_16", "Swin"] and set(out["model"][2:]) <= set(FAMILIES)
    ls = LoadSaveModel(base=30.0)
    for m, lt, st in zip(out["model"], out["load_time"], out["save_time"], strict=True):
        assert lt == pytest.approx(ls.load_seconds(m)) and st == pytest.approx(ls.save_seconds(m))
    assert out.attrs["assumptions"]["models_from_column"] == 2 and out.attrs["assumptions"]["base_load_s"] == 30.0
    assert set(with_load_save(t.drop(columns="model"), seed=1)["model"]) <= set(FAMILIES)


def test_bad_input():
    with pytest.raises(InvalidInstanceError, match="arrival"):
        with_load_save(pd.DataFrame({"gpus": [1]}))
    with pytest.raises(InvalidInstanceError, match="families"):
        with_load_save(pd.DataFrame({"arrival": [0.0]}), families=[])
