"""Shared helpers of the Lazer tests."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job
from optsched.lazer import FAMILIES, Lazer, LoadSaveModel
from optsched.lazer.baselines import baseline
from optsched.sim import Simulator
from optsched.verify import verify

POLICIES = ["sjf", "srtf", "srtf-60", "srtf-360", "lazer-zero", "lazer-10", "lazer-oracle", "lazer-released"]


def make_policy(name: str):
    if name == "lazer-zero":
        return Lazer()
    if name == "lazer-10":
        return Lazer(deferral=10.0)
    if name == "lazer-oracle":
        return Lazer(deferral="oracle")
    if name == "lazer-released":
        return Lazer(secured="released")
    return baseline(name)


@st.composite
def workloads(draw, max_jobs: int = 10):
    """A small cluster and jobs with models of the seven families (load 60-180 s, save 0-14 s),
    durations and gaps on the same scale, so that preemptions (futile ones too) happen."""
    n_srv = draw(st.integers(1, 2))
    g = draw(st.sampled_from([1, 2, 4]))
    cluster = Cluster.homogeneous(n_srv, g)
    n = draw(st.integers(1, max_jobs))
    jobs = []
    t = 0.0
    for i in range(n):
        gpus = draw(st.integers(1, n_srv * g))
        t += draw(st.integers(0, 120))
        jobs.append(
            Job(
                i,
                work=float(draw(st.integers(1, 600))),
                gpus=gpus,
                arrival=t,
                attrs={"model": draw(st.sampled_from(FAMILIES))},
            )
        )
    return cluster, jobs


def run(cluster, jobs, name, *, base=60.0, zero=False, **kw):
    ls = LoadSaveModel(base=base)
    opts = {} if zero else {"load_time": ls.load_time, "save_time": ls.save_time}
    pol = make_policy(name)
    return Simulator(cluster, jobs, pol, **opts, **kw).run(), pol


def verify_run(cluster, jobs, res, *, full: bool):
    """Every check of optsched.verify on the GPU-holding segments; ``work`` against L+T+P (what a
    job holds GPUs for), or against the work itself when there are no overheads (``full``)."""
    df = res.jobs_frame().set_index("job_id")
    if full:
        inst = Instance(cluster, jobs)
    else:
        held = df["loading_time"] + df["training_time"] + df["saving_time"]
        inst = Instance(cluster, [Job(j.id, work=float(held[j.id]), gpus=j.gpus, arrival=j.arrival) for j in jobs])
    return verify(inst, res.schedule())
