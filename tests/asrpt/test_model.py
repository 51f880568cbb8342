import json

import pytest

from optsched.asrpt import AsrptInstance, AsrptJob, Stage, toy_instance
from optsched.core.cluster import Cluster
from optsched.core.io import instance_from_dict
from optsched.exceptions import InvalidInstanceError


def _doc():
    return json.loads(toy_instance().to_json())


def test_roundtrip():
    inst = toy_instance()
    again = instance_from_dict(inst.to_dict())
    assert again.to_dict() == inst.to_dict()
    assert inst.kind == "asrpt" and inst.G == 4 and inst.g == 2 and inst.M == 2


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda d: d["jobs"][0]["stages"][0].update(k=0), ["'k'", "stages[0]", ">= 1", "got 0"]),
        (lambda d: d["jobs"][0].pop("iterations"), ["iterations"]),
        (lambda d: d["jobs"][1]["stages"][1].update(d_in=5.0), ["d_in", "stage 1", "job 1", "fix"]),
        (lambda d: d["jobs"][0].update(allreduce="ring"), ["allreduce", "ring"]),
        (lambda d: d["cluster"].pop("bandwidth_inter"), ["bandwidth_inter"]),
        (lambda d: d["jobs"][0]["stages"][0].update(k=9), ["job 0", "9", "GPUs"]),
        (lambda d: d["jobs"][0].update(predicted_iterations=-1), ["predicted_iterations", "-1"]),
        (lambda d: d["jobs"][0]["stages"][0].update(p_f=-0.1), ["p_f", "-0.1"]),
        (lambda d: d["jobs"].append(dict(d["jobs"][0])), ["appears twice"]),
        (lambda d: d["cluster"].update(servers=[{"gpus": 2}, {"gpus": 4}]), ["same number of GPUs"]),
    ],
)
def test_malformed_inputs_name_field_value_fix(mutate, words):
    d = _doc()
    mutate(d)
    with pytest.raises(InvalidInstanceError) as e:
        instance_from_dict(d)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_constructor_validates_without_schema():
    cl = Cluster.homogeneous(1, 2, bandwidth_inter=1e9, bandwidth_intra=1e10)
    with pytest.raises(InvalidInstanceError, match="stages"):
        AsrptInstance(cl, [AsrptJob(0, [], iterations=1)])
    with pytest.raises(InvalidInstanceError, match="unknown field"):
        AsrptJob(0, [{"k": 1, "flops": 3}], iterations=1)
    j = AsrptJob(0, [Stage(k=2)], iterations=3)
    assert j.gpus == 2 and j.predicted() == 3 and j.replace(predicted_iterations=0).predicted() == 0
