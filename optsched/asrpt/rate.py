"""A-SRPT jobs on the shared simulator and the speed they run at.

:func:`sim_jobs` turns an :class:`~optsched.asrpt.model.AsrptInstance` into core ``Job``s with
``work`` = n_i iterations (the AsrptJob, its stage profile and the instance's slots in ``job.attrs``);
the rate model :class:`HeavyEdgeRate` runs a job at 1 / alpha_i(x) iterations per second, x the
Heavy-Edge mapping on the GPUs per server it was given (every policy of the paper maps with
Heavy-Edge); :class:`ClusterParams` is the cluster's g and bandwidths it reads. Tested in
``tests/asrpt/test_policy.py`` and ``tests/asrpt/test_reading.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from optsched.asrpt.formulation import job_shape_key
from optsched.asrpt.heavy_edge import heavy_edge, placement_counts
from optsched.asrpt.model import AsrptInstance, AsrptJob
from optsched.asrpt.timing import alpha, check_reading
from optsched.core.cluster import Cluster
from optsched.core.job import Job
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.sim.rates import RateModel


@dataclass(frozen=True)
class ClusterParams:
    """The paper's g (GPUs per server), B_inter and B_intra (bytes/s) of a cluster: what
    :func:`~optsched.asrpt.timing.alpha` reads from an instance (``instance=``)."""

    g: int
    b_inter: float
    b_intra: float

    @classmethod
    def of(cls, cluster: Cluster) -> ClusterParams:
        for b in ("bandwidth_intra", "bandwidth_inter"):
            if getattr(cluster, b, None) is None:
                raise InvalidInstanceError(
                    f"The '{b}' field of the cluster is missing; the A-SRPT policies need "
                    f"both bandwidths in bytes/s (e.g. optsched.core.units.gbit_per_s(10))."
                )
        return cls(int(cluster.max_server_gpus), float(cluster.bandwidth_inter), float(cluster.bandwidth_intra))


class HeavyEdgeRate(RateModel):
    """Rate model: 1 / alpha_i(Heavy-Edge mapping on the placement) iterations per second.

    Reads g and the bandwidths from the simulator's cluster (or from :meth:`bind`) and the job's
    profile from ``job.attrs["asrpt_job"]`` (:func:`sim_jobs`).

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> rm = HeavyEdgeRate().bind(inst.cluster)
    >>> round(rm.alpha(inst.jobs[0], {0: 2}), 6), round(rm.alpha(inst.jobs[0], {0: 1, 1: 1}), 6)
    (0.3, 2.2)
    """

    corunner_dependent = False

    def __init__(self, *, seed=0, reading: str = "nic-share"):
        self.seed = seed
        self.reading = check_reading(reading)
        self._cache: dict = {}
        self._params: ClusterParams | None = None
        self._cluster = None

    def bind(self, cluster: Cluster) -> HeavyEdgeRate:
        """Use ``cluster``'s g and bandwidths (the simulator binds its cluster at the first rate)."""
        if cluster is not self._cluster:
            params = ClusterParams.of(cluster)
            if params != self._params:
                self._cache = {}
            self._cluster, self._params = cluster, params
        return self

    @property
    def params(self) -> ClusterParams | None:
        """The bound cluster's g and bandwidths (None before :meth:`bind`)."""
        return self._params

    def alpha(self, job: AsrptJob, placement) -> float:
        """alpha_i of the Heavy-Edge mapping on ``placement`` ({server: GPUs}). Servers are identical and
        Heavy-Edge orders them by GPUs (ties by index), so alpha depends only on the job's profile and the
        sorted GPU counts: memoised on that (one Heavy-Edge per profile and count vector, not per start)."""
        counts = tuple(sorted((int(c) for c in placement.values() if c > 0), reverse=True))
        key = (job_shape_key(job), counts)
        hit = self._cache.get(key)
        if hit is None:
            p = self._params
            if p is None:
                raise InvalidOptionError(
                    "HeavyEdgeRate has no cluster yet: call bind(cluster) first, or let the simulator bind it."
                )
            mp = heavy_edge(job, list(counts), seed=self.seed)
            hit = alpha(
                job,
                placement_counts(job, mp, len(counts)),
                reading=self.reading,
                g=p.g,
                b_inter=p.b_inter,
                b_intra=p.b_intra,
            )
            self._cache[key] = hit
        return hit

    def rate(self, job, placement, sim) -> float:
        if sim.cluster is not self._cluster:
            self.bind(sim.cluster)
        return 1.0 / self.alpha(asrpt_job(job), placement)


def asrpt_job(job) -> AsrptJob:
    j = job.attrs.get("asrpt_job")
    if not isinstance(j, AsrptJob):
        raise InvalidInstanceError(
            f"Job {job.id!r} has no AsrptJob in its attrs['asrpt_job'] (got {j!r}); the A-SRPT policies read each "
            f"job's stage profile from there: build the jobs with optsched.asrpt.rate.sim_jobs(instance)."
        )
    return j


def sim_jobs(instance: AsrptInstance):
    """Core Jobs for the simulator: work = n_i iterations, gpus = g_i; in ``attrs`` the AsrptJob
    (``asrpt_job``) and the instance's slot length and first slot (``asrpt_slot``, ``asrpt_first_slot``)."""
    slot, first = instance.slot, instance.first_slot
    return [
        Job(
            j.id,
            work=float(j.iterations),
            gpus=j.gpus,
            arrival=j.arrival,
            attrs={"asrpt_job": j, "asrpt_slot": slot, "asrpt_first_slot": first},
        )
        for j in instance.jobs
    ]
