"""What every elastic baseline policy shares: the conversion of an elastic instance to the
simulator's input (:func:`to_sim`: servers carrying the elastic resources, one sim job per elastic
job whose work is the slot count d of its shape), the rate of a started shape (:class:`ElasticRate`)
and the policies' base (:class:`ElasticPolicy`: free resources as an H x R array, placement, start
records, the preemption overhead and the livelock guard).

The policies and the model they run are described in :mod:`optsched.elastic.policy`. Tested in
``tests/elastic/test_policy.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster, Server
from optsched.core.job import Job
from optsched.core.limits import MAX_SERVER_GPUS
from optsched.elastic.constants import transfer_ms
from optsched.elastic.model import ElasticInstance
from optsched.elastic.shapes import TOL, Shape, ideal_config, ideal_shape, placement_use
from optsched.exceptions import InvalidOptionError, SimulationError
from optsched.sim import DONE, FAILED, Policy, RateModel

OVERHEADS = ("none", "checkpoint")


# -- the simulator's input ---------------------------------------------------------------------
def sim_resource_names(instance: ElasticInstance) -> dict[str, str]:
    """Elastic resource name -> the simulator's name (``gpus`` is the placement's token key, so an
    elastic resource named ``gpus`` is called ``res:gpus`` there)."""
    return {r: (f"res:{r}" if r == "gpus" else r) for r in instance.resources}


def to_sim(instance: ElasticInstance, shapes: Sequence[Shape] | None = None) -> tuple[Cluster, list[Job]]:
    """The core cluster and the sim jobs of ``instance``: job j's work is ``shapes[j].d`` slots
    (default: the ideal shape) and ``attrs`` carry ``elastic_index`` (j) and ``shape``.

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> cluster, jobs = to_sim(toy_instance())
    >>> cluster.servers[0].resources, [j.work for j in jobs]
    ({'gpu': 3.0, 'cpu': 8.0}, [10.0, 10.0])
    """
    names = sim_resource_names(instance)
    servers = tuple(
        Server(
            _tokens(instance, h),
            name=s.name or f"h{h}",
            resources={names[r]: float(s.capacity[r]) for r in instance.resources},
        )
        for h, s in enumerate(instance.servers)
    )
    if shapes is None:
        shapes = [ideal_shape(instance, j) for j in range(instance.n_jobs)]
    jobs = [
        Job(
            job.id,
            work=float(shapes[j].d),
            gpus=1,
            arrival=float(job.arrival),
            weight=float(job.weight),
            attrs={"elastic_index": j, "shape": shapes[j]},
        )
        for j, job in enumerate(instance.jobs)
    ]
    return Cluster(servers), jobs


def _tokens(instance: ElasticInstance, h: int) -> int:
    """Placement tokens of server h in the simulator's cluster (the ``gpus`` key: a started job takes
    one, on the first server of its placement, which holds one of its workers or PSs): as many as
    workers and PSs can be on h at once, each type counted alone (sum over types of the most of that
    type that fit), and never more than the jobs. A type that needs nothing fits without end: one
    token per job then (at most the limit of a server's GPUs)."""
    cap = instance.C[h]
    most = 0
    for need in (*instance.e, *instance.z):
        fits = [math.floor(cap[r] / need[r] + 1e-9) for r in range(instance.R) if need[r] > 0]
        if not fits:
            return max(1, min(instance.n_jobs, MAX_SERVER_GPUS))
        most += min(fits)
    return max(1, min(instance.n_jobs, most, MAX_SERVER_GPUS))


class ElasticRate(RateModel):
    """Rate work / d of the shape the job was started with (``job.config``): 1 when the job runs the
    shape its work was set from; DRF's computed worker counts run at d_ideal / d."""

    def rate(self, job, placement, sim) -> float:
        cfg = job.config
        if cfg is None:
            return 1.0
        return float(job.work) / float(cfg["shape"].d)


# -- policies -----------------------------------------------------------------------------------
class ElasticPolicy(Policy):
    """Base of the elastic baselines: free resources as an H x R array, placement, start records.

    Parameters
    ----------
    instance : ElasticInstance
        The instance the sim jobs come from (:func:`to_sim`).
    overhead : {"none", "checkpoint"}
        Preemption overhead (see the module doc); only preemptive policies use it.

    After a run, ``starts`` lists (job id, slot, shape, workers, ps) per start, in order.
    """

    name = "elastic"
    preemptive = False

    def __init__(self, instance: ElasticInstance, *, overhead: str = "none"):
        super().__init__(placement="first_fit")
        if not isinstance(instance, ElasticInstance):
            raise InvalidOptionError(
                f"The 'instance' of policy {self.name!r} must be an ElasticInstance; got {type(instance).__name__}."
            )
        if overhead not in OVERHEADS:
            raise InvalidOptionError(f"The 'overhead' option must be one of {list(OVERHEADS)}; got {overhead!r}.")
        self.instance = instance
        self.overhead = overhead

    # per run
    def on_start(self, sim):
        names = sim_resource_names(self.instance)
        self._ridx = [sim.res.index[names[r]] for r in self.instance.resources]
        self._names = [names[r] for r in self.instance.resources]
        self.starts: list[tuple[Any, float, Shape, dict[int, int], dict[int, int]]] = []
        self._arrived: list = []
        self._total = np.asarray(self.instance.C, dtype=float).sum(axis=0)
        self._size: dict[Any, float] = {}
        self._last_start: dict[Any, float] = {}
        self._use: dict[Any, np.ndarray] = {}  # per-server use of each started job's placement
        if self.preemptive:  # priorities and waiting times change every slot, not only at events
            inst = self.instance
            load = max((self._overhead_slots(j, ideal_shape(inst, j).m) for j in range(inst.n_jobs)), default=0.0)
            if load >= 1.0 - TOL:
                raise InvalidOptionError(
                    f"overhead='checkpoint' costs {load:g} slots per resume on {inst.name!r}, a whole slot or "
                    f"more: a job preempted every slot would never progress. Use overhead='none' or longer slots."
                )
            self._deadline = max((j.arrival for j in inst.jobs), default=0) + sum(
                2 * int(j.attrs["shape"].d) + 2 for j in sim.jobs
            ) / (1.0 - load)
            sim.set_timer(1.0, period=1.0, data="slot")
        return

    def on_arrival(self, sim, job):
        self._arrived.append(job)

    def free(self, sim) -> np.ndarray:
        """Free amounts now, H x R in the order of ``instance.resources``."""
        return sim.res.free[:, self._ridx].copy()

    def active(self) -> list:
        out = [j for j in self._arrived if j.phase not in (DONE, FAILED)]
        if len(out) < len(self._arrived):
            self._arrived = out
        return out

    def shape(self, job) -> Shape:
        return job.attrs["shape"]

    def size(self, job) -> float:
        """sum_r (ideal per-slot use of r) / (cluster total of r)."""
        got = self._size.get(job.id)
        if got is not None:
            return got
        c = ideal_config(self.instance, job.attrs["elastic_index"])
        use = np.zeros(self.instance.R)
        for _, vec in c.use:
            use += np.asarray(vec)
        with np.errstate(divide="ignore", invalid="ignore"):
            got = self._size[job.id] = float(
                np.where(self._total > 0, use / np.where(self._total > 0, self._total, 1), 0).sum()
            )
        return got

    def start(
        self, sim, job, shape: Shape, workers: dict[int, int], ps: dict[int, int], use: np.ndarray | None = None
    ) -> None:
        """Start ``job`` with ``shape`` on ``workers`` / ``ps`` per server (``use``: their
        :func:`~optsched.elastic.shapes.placement_use`, if the caller has it already)."""
        use = placement_use(self.instance, shape, workers, ps) if use is None else use
        self._use[job.id] = use
        pl: dict[int, dict[str, Any]] = {}
        hosts = sorted(set(workers) | set(ps))
        # the job's placement token goes to the first server holding one of its workers or PSs
        # (to_sim gives each server as many tokens as such units fit on it)
        home = next((h for h in hosts if workers.get(h, 0) > 0 or ps.get(h, 0) > 0), hosts[0] if hosts else None)
        names = self._names
        for h in hosts:
            vec = {name: v for name, v in zip(names, use[h].tolist(), strict=True) if v > 0}
            pl[h] = {"gpus": 1 if h == home else 0, **vec}
        sim.start(job, pl, config={"shape": shape, "workers": dict(workers), "ps": dict(ps)})
        self.starts.append((job.id, float(sim.now), shape, dict(workers), dict(ps)))
        self._last_start[job.id] = float(sim.now)

    def load_time(self, job, placement) -> float:
        """The resume overhead in slots (0 at a job's first start or with ``overhead="none"``)."""
        if job.n_starts <= 1:
            return 0.0
        return self._overhead_slots(job.attrs["elastic_index"], job.attrs["shape"].m)

    def _overhead_slots(self, j: int, m: int) -> float:
        """2 * 8 pi_j / b_m ms in slots (0 with ``overhead="none"``)."""
        if self.overhead == "none":
            return 0.0
        inst = self.instance
        return 2.0 * transfer_ms(inst.jobs[j].grad_mb, inst.worker_types[m].bandwidth) / (1000.0 * inst.slot)

    def check_progress(self, sim) -> None:
        """Raise SimulationError if a preemptive run goes past a bound no progressing run reaches
        (max a_j + sum_j (2 d_j + 2), stretched by the resume overhead): a livelock, not a schedule."""
        if self.preemptive and sim.now > self._deadline:
            raise SimulationError(
                f"Policy {self.name!r} is still running at slot {sim.now:g} on {self.instance.name!r}, past "
                f"{self._deadline:g}: jobs are preempted without progress (a livelock). Report it."
            )
