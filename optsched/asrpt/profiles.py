"""Stage profiles derived for Table II (the paper's Table I gives models, not per-stage numbers).

Derivations (stated in ``formulations/asrpt.md#profiles``; all per mini-batch, fp32 for VGG19,
fp16 for GPT, V100-class GPU ~14 TFLOP/s effective):

* **VGG19-like** (144M parameters, batch 32, 224x224): 4 stages = conv1-2 | conv3 | conv4-5 | fc6-8,
  replicas k = (2, 2, 3, 1) (g_i = 8). Forward FLOPs per image ~19.6 G split about 30/25/44/1 %;
  forward 13 / 11 / 20 / 1 ms for the whole stage, backward twice that, divided by k per replica.
  Boundary activations (whole batch): 128x56x56, 256x28x28, 512x7x7 floats x 32 = 51.4, 25.7,
  3.2 MB, divided by k per replica. Parameters: 1.2, 8.9, 66, 494 MB (the FC layers hold 86 %).
* **GPT-like** (GPT-175B slice, hidden 12288, sequence 512, micro-batch 1, fp16): a uniform
  8-stage pure pipeline (k = 1 each, g_i = 8), forward 3.4 ms and backward 6.8 ms per stage,
  12.6 MB of activations per boundary (512 x 12288 x 2 B); no AllReduce (k = 1).

Paper's cluster for the simulations: g = 8 GPUs per server, B_inter = 10 Gbps, B_intra = 300 GB/s.

Tested in ``tests/asrpt/test_placement.py``.
"""

from __future__ import annotations

from optsched.asrpt.model import AsrptJob, Stage
from optsched.core.cluster import Cluster

MB = 1e6


def pipeline(job_id, k, fwd, act, params, *, iterations=1000, allreduce="rar", **kw) -> AsrptJob:
    """Whole-stage forward times ``fwd`` (s), boundary activations ``act`` (bytes, whole batch, between
    stage s and s+1), parameters ``params`` (bytes); per-replica values divide by k."""
    S = len(k)
    stages = []
    for s in range(S):
        d_in = act[s - 1] / k[s] if s > 0 else 0.0
        d_out = act[s] / k[s] if s + 1 < S else 0.0
        stages.append(Stage(k=k[s], p_f=fwd[s] / k[s], p_b=2 * fwd[s] / k[s], d_in=d_in, d_out=d_out, h=params[s]))
    return AsrptJob(job_id, stages, iterations=iterations, allreduce=allreduce, **kw)


def vgg19_like(job_id=0, *, iterations: int = 1000, allreduce: str = "rar", **kw) -> AsrptJob:
    """VGG19-like 4-stage job, k = (2, 2, 3, 1).

    >>> vgg19_like().gpus
    8
    """
    return pipeline(
        job_id,
        (2, 2, 3, 1),
        (0.013, 0.011, 0.020, 0.001),
        (51.4 * MB, 25.7 * MB, 3.2 * MB),
        (1.2 * MB, 8.9 * MB, 66 * MB, 494 * MB),
        iterations=iterations,
        allreduce=allreduce,
        **kw,
    )


def gpt_like(job_id=0, *, iterations: int = 1000, n_stages: int = 8, **kw) -> AsrptJob:
    """GPT-like uniform pipeline, ``n_stages`` stages of one replica.

    >>> gpt_like().gpus
    8
    """
    return pipeline(
        job_id,
        (1,) * n_stages,
        (0.0034,) * n_stages,
        (12.6 * MB,) * (n_stages - 1),
        (0.0,) * n_stages,
        iterations=iterations,
        **kw,
    )


def paper_cluster(n_servers: int = 4, *, gpus: int = 8, nic_gbps: float = 10.0, intra_gbyte: float = 300.0) -> Cluster:
    """Sec. V-B cluster: ``gpus`` per server, NIC ``nic_gbps`` Gbit/s, intra ``intra_gbyte`` GB/s."""
    return Cluster.homogeneous(n_servers, gpus, bandwidth_inter=nic_gbps * 1e9 / 8, bandwidth_intra=intra_gbyte * 1e9)


PROFILES = {"VGG19": vgg19_like, "GPT-175B": gpt_like}
