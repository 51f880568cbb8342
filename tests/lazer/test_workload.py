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


def test_each_jobs_model_belongs_to_the_job_not_its_row():
    # drawn by row position, a shuffled table gave other load/save times to the same jobs
    t = pd.DataFrame({"job_id": list("abcdefgh"), "arrival": 0.0, "gpus": 1, "duration": 5.0})
    a = with_load_save(t, seed=2).set_index("job_id")
    b = with_load_save(t.iloc[::-1].reset_index(drop=True), seed=2).set_index("job_id")
    assert a.loc[list("abcdefgh"), "model"].tolist() == b.loc[list("abcdefgh"), "model"].tolist()
    assert with_load_save(t, seed=3)["model"].tolist() != a["model"].tolist()  # the seed matters


@pytest.mark.parametrize(
    "name, how, params",
    [
        ("vgg19", "column", 143_667_240),
        ("ViT-B/16", "column", 86_567_656),  # case and separators aside
        ("llama-70b", "mapped", 70e9),  # a parameter count in the name
        ("bert-340m", "mapped", 340e6),
        ("resnet50", "mapped", 25_557_032),  # a common model
        ("gpt2", "mapped", 124_439_808),
        ("vgg16", "mapped", 143_667_240),  # a family prefix: VGG19's variant
        ("mystery-net", "drawn", None),
        (None, "drawn", None),
    ],
)
def test_model_names_known_mapped_or_drawn(name, how, params):
    from optsched.lazer.workload import resolve_model

    _, n, kind = resolve_model(name, LoadSaveModel())
    assert kind == how and (n == pytest.approx(params) if params is not None else n is None)


def test_mapped_and_unknown_names_are_counted_and_warned():
    from optsched.exceptions import WorkloadWarning

    t = pd.DataFrame(
        {"arrival": [0.0] * 4, "gpus": 1, "duration": 5.0, "model": ["vgg19", "llama-70b", "resnet50", "nope"]}
    )
    with pytest.warns(WorkloadWarning, match="2 job.*mapped.*1 an unknown name"):
        out = with_load_save(t, base=0.0)
    a = out.attrs["assumptions"]
    assert (a["models_from_column"], a["models_mapped"], a["models_drawn"], a["unknown_model_names"]) == (1, 2, 1, 1)
    assert out["model"].tolist()[:3] == ["vgg19", "llama-70b", "resnet50"]  # a mapped job keeps its name
    assert out["save_time"][1] == pytest.approx(12 * 70e9 / 125e6)  # (L1) with the count in the name
