"""Paper 001's baselines (Sec. 7) as policies on optsched's one discrete-event simulator.

Conversion (:func:`to_sim`): an :class:`~optsched.elastic.model.ElasticInstance` becomes a core
:class:`~optsched.core.Cluster` whose servers carry the elastic resources (``Server.resources``,
checked by the engine's :class:`~optsched.sim.FreeResources` at every start), and one sim job per
elastic job, arriving at a_j, whose work is the slot count d of the configuration the policy runs
it with (1 simulator second = 1 slot; the engine runs in slotted mode, ``slot=1``, so decisions
are made at slot boundaries and a job completes at a boundary). The engine's GPU count is not an
elastic resource here: each sim job holds one *token* GPU on the first server it uses (every
server has as many tokens as there are jobs, so tokens never bind); the elastic resources, the
GPU among them, are the resource vectors of the placement ``{server: {"gpus": token, r: amount}}``
(a PS-only server is a vector without a worker).

A job runs with a *shape* (:class:`Shape`: worker type m, PS type p, q, N workers, d slots); the
servers are chosen when it starts (:func:`find_placement`): q = 1 puts N workers and one PS on one
server, q = 0 puts the PSs (s = max(1, ceil((N - g) b_m / B_p)), (2i)) with g < N workers on one
server (the most workers there first, so the fewest PSs, then the lowest index) and the other
workers on the servers with the most room (RAR q = 0: at least two servers),
so every start is a schedule of the restricted Gamma_j (``formulations/elastic.md#gamma``).

The *ideal configuration* of job j (:func:`ideal_config`, Sec. 7 "the same as that in the ideal
case", i.e. the most expedited single-job training) is the configuration of the restricted
Gamma_j with the least duration d on the empty cluster, ties by the least total use
d * sum_h sum_r f_jh^r, then by Gamma_j's order. Every baseline uses its worker and PS types; FIFO
draws the worker count, DRF computes it; AntMan-, Tiresias-like and 2D-LAS run the whole ideal
shape (m, p, q, N, d).

Policies (registered in the simulator's policy registry; each takes ``instance=``):

* ``elastic-fifo`` (:class:`ElasticFIFO`, non-preemptive): strict arrival order (a job that does
  not fit blocks the later ones), N drawn uniformly in [1, 30] and capped at D_j (seeded).
* ``elastic-drf`` (:class:`ElasticDRF`, non-preemptive): at each slot boundary the waiting jobs
  share the free resources by progressive filling of worker bundles (a worker of the ideal type
  plus its PS share) in order of least dominant share, each up to its ideal N; jobs given at least
  one worker start with that N.
* ``elastic-antman`` (:class:`ElasticAntMan`): guarantee jobs (every job on arrival) start in
  strict arrival order, preempting opportunistic jobs if that makes room; a guarantee job that has
  waited ``demote_after`` slots (default: its own ideal duration d_j) becomes opportunistic;
  opportunistic jobs backfill the free resources and are preempted for guarantee jobs.
* ``elastic-tiresias`` (:class:`ElasticTiresias`, preemptive): smallest remaining slots x size first.
* ``elastic-2d-las`` (:class:`Elastic2DLAS`, preemptive): least attained slots x size first.
* ``elastic-online`` (:class:`ElasticOnline`): A_online's rounds released at tau_i, each job started
  at its planned slot on its planned servers (the paper's algorithm on the same simulator).

Preemptive policies re-decide at every slot boundary (a periodic timer: the slotted engine calls
``schedule`` only at boundaries where an event happens).

The *size* of a job is sum_r (its ideal per-slot use of r) / (the cluster's total r).

Preemption overhead: by default none: a job is preempted only at a slot boundary and keeps the
slots it trained (progress in whole slots), and it may resume on other servers. With
``overhead="checkpoint"`` each resume after a preemption first loads for the time to save and
load the model, 2 * 8 pi_j / b_m ms (:func:`optsched.elastic.model.transfer_ms`), in slots; in
slotted mode that costs the job up to one more slot at its end. See
``formulations/elastic.md#baselines``.
"""

from __future__ import annotations

import heapq
from abc import ABCMeta, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster, Server
from optsched.core.job import Job
from optsched.elastic.gamma import Config, _make, _useful_counts
from optsched.elastic.model import ElasticInstance, transfer_ms
from optsched.exceptions import InfeasibleError, InvalidOptionError, SimulationError
from optsched.sim import DONE, FAILED, LOADING, TRAINING, WAITING, Policy, RateModel, register_policy

__all__ = [
    "Shape",
    "ideal_config",
    "ideal_shape",
    "fifo_shape",
    "find_placement",
    "candidate_shapes",
    "shape_config",
    "least_total_use",
    "placement_use",
    "to_sim",
    "sim_resource_names",
    "ElasticRate",
    "ElasticPolicy",
    "ElasticFIFO",
    "ElasticDRF",
    "ElasticAntMan",
    "ElasticTiresias",
    "Elastic2DLAS",
    "ElasticOnline",
    "OVERHEADS",
    "TOL",
]

TOL = 1e-9
OVERHEADS = ("none", "checkpoint")


@dataclass(frozen=True)
class Shape:
    """What a baseline fixes for a job before placing it: worker type m, PS type p (None for RAR),
    q (1: one server), N workers and the duration d = d_q(N) in slots."""

    m: int
    p: int | None
    q: int
    n: int
    d: int


def _no_config(instance: ElasticInstance, j: int) -> InfeasibleError:
    return InfeasibleError(
        f"{instance.jobs[j].label} has no configuration that fits the empty cluster (restricted Gamma_j "
        f"is empty); give it a smaller worker/PS type or larger servers."
    )


def candidate_shapes(instance: ElasticInstance, j: int) -> list[Shape]:
    """Every (m, p, q, useful N) of job index ``j`` with d = d_q(N), in that order (a larger N with
    the same d needs no less room, so the useful N of :func:`~optsched.elastic.gamma.useful_counts`
    suffice)."""
    out = []
    for m in range(instance.M):
        for p in range(instance.P) if instance.is_ps else [None]:
            for q in (1, 0):
                out.extend(Shape(m, p, q, n, d) for n, d in _useful_counts(instance, j, m, p, q))
    return out


def shape_config(
    instance: ElasticInstance, j: int, shape: Shape, workers: Mapping[int, int], ps: Mapping[int, int]
) -> Config:
    """The :class:`~optsched.elastic.gamma.Config` of a placed shape."""
    return _make(instance, j, shape.m, shape.p, shape.q, shape.n, shape.d, dict(workers), dict(ps))


def ideal_config(instance: ElasticInstance, j: int) -> Config:
    """The ideal configuration of job index ``j``: least d on the empty cluster, ties by the least
    total use d * sum_h sum_r f_jh^r, then the order of :func:`candidate_shapes` (see the module
    doc). Computed from the shapes and :func:`find_placement` on the empty servers, without
    enumerating Gamma_j (whose size grows with the compositions of N over H servers); the tests
    check it against Gamma_j.

    Raises
    ------
    InfeasibleError
        Naming the job, if no configuration fits.

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> c = ideal_config(toy_instance(), 0)
    >>> c.m, c.n_workers, c.d
    (1, 1, 10)
    """
    C = np.asarray(instance.C, dtype=float)
    best: tuple[int, float, Config] | None = None
    for sh in sorted(candidate_shapes(instance, j), key=lambda s: s.d):
        if best is not None and sh.d > best[0]:
            break
        got = find_placement(instance, sh, C)
        if got is None:
            continue
        cfg = shape_config(instance, j, sh, *got)
        key = (sh.d, sh.d * cfg.total_use)
        if best is None or key < best[:2]:
            best = (key[0], key[1], cfg)
    if best is None:
        raise _no_config(instance, j)
    return best[2]


def least_total_use(instance: ElasticInstance, j: int) -> float:
    """min over j's configurations of d * sum_h sum_r f_jh^r (slots x resource units), on the empty
    servers: the least total resource use of any schedule of job index ``j``.

    Raises
    ------
    InfeasibleError
        Naming the job, if no configuration fits.
    """
    C = np.asarray(instance.C, dtype=float)
    se = [float(sum(v)) for v in instance.e]
    sz = [float(sum(v)) for v in instance.z]

    def lower(sh: Shape) -> float:  # d (N sum e_m + sum z_p): at least one PS
        return sh.d * (sh.n * se[sh.m] + (sz[sh.p] if sh.p is not None else 0.0))

    best = None
    for sh in sorted(candidate_shapes(instance, j), key=lower):
        if best is not None and lower(sh) >= best - 1e-12:
            break
        got = find_placement(instance, sh, C)
        if got is not None:
            v = sh.d * float(placement_use(instance, sh, *got).sum())
            best = v if best is None else min(best, v)
    if best is None:
        raise _no_config(instance, j)
    return best


def ideal_shape(instance: ElasticInstance, j: int) -> Shape:
    c = ideal_config(instance, j)
    return Shape(c.m, c.p, c.q, c.n_workers, c.d)


def fifo_shape(instance: ElasticInstance, j: int, n: int) -> Shape:
    """The ideal worker/PS types with ``n`` workers (lowered to the largest count that fits the
    empty cluster, at least 1), and the q of least d that can hold them."""
    c = ideal_config(instance, j)
    for k in range(max(1, min(n, instance.jobs[j].chunks)), 0, -1):
        best = None
        for q in (1, 0):
            if instance.placeable(c.m, c.p, q, k):
                d = instance.duration(j, c.m, c.p, q, k)
                if best is None or d < best[0]:
                    best = (d, q)
        if best is not None:
            return Shape(c.m, c.p, best[1], k, best[0])
    raise _no_config(instance, j)  # pragma: no cover - the ideal configuration fits


# -- placement on free resources ------------------------------------------------------------------
def _fit_counts(free: np.ndarray, vec: np.ndarray, cap: int) -> np.ndarray:
    """How many copies of ``vec`` fit on each server of ``free`` (H x R), at most ``cap``."""
    pos = vec > 0
    if not pos.any():
        return np.full(free.shape[0], cap, dtype=np.int64)
    k = np.floor(np.maximum(free[:, pos], 0.0) / vec[pos] + TOL).min(axis=1)
    return np.minimum(k, cap).astype(np.int64)


def _spread(caps: np.ndarray, k: int, exclude: int | None) -> dict[int, int] | None:
    """k workers over the servers with the most room first (lower index among equals)."""
    out: dict[int, int] = {}
    for h in np.argsort(-caps, kind="stable"):
        h = int(h)
        if k == 0 or caps[h] <= 0:
            break
        if h == exclude:
            continue
        y = min(int(caps[h]), k)
        out[h] = y
        k -= y
    return out if k == 0 else None


def find_placement(
    instance: ElasticInstance, shape: Shape, free: np.ndarray
) -> tuple[dict[int, int], dict[int, int]] | None:
    """Workers and PSs per server for ``shape`` within ``free`` (H x R, the order of
    ``instance.resources``), or None (see the module doc for the rule).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> inst = toy_instance()
    >>> find_placement(inst, ideal_shape(inst, 0), np.array(inst.C, dtype=float))
    ({0: 1}, {0: 1})
    """
    e = np.asarray(instance.e[shape.m], dtype=float)
    z = np.asarray(instance.z[shape.p], dtype=float) if shape.p is not None else None
    n = shape.n
    if shape.q == 1:
        need = n * e + (z if z is not None else 0.0)
        ok = np.flatnonzero(np.all(need <= free + TOL, axis=1))
        if not len(ok):
            return None
        h = int(ok[0])
        return {h: n}, ({h: 1} if z is not None else {})
    caps = _fit_counts(free, e, n)
    if z is None:  # RAR, q = 0: at least two servers
        if n < 2:
            return None
        y = _spread(caps, n, None)
        if y is None:
            return None
        if len(y) == 1:
            (h0,) = y
            other = _spread(caps, 1, h0)
            if other is None:
                return None
            y[h0] -= 1
            y.update(other)
        return y, {}
    total = int(caps.sum())
    # the PS server nn holds g < N workers and s = max(1, ceil((N - g) b / B)) PSs; the most workers
    # there first (fewest PSs), then the lowest nn
    for g in range(min(n - 1, int(caps.max())), -1, -1):
        s = instance.ps_needed(shape.m, shape.p, n - g)
        ok = (total - caps >= n - g) & np.all(g * e + s * z <= free + TOL, axis=1)
        for nn in np.flatnonzero(ok):
            y = _spread(caps, n - g, int(nn))
            if y is None:  # pragma: no cover - total - caps[nn] >= n - g
                continue
            if g:
                y[int(nn)] = g
            return dict(sorted(y.items())), {int(nn): s}
    return None


def placement_use(
    instance: ElasticInstance, shape: Shape, workers: Mapping[int, int], ps: Mapping[int, int]
) -> np.ndarray:
    """Per-server use (H x R) of a placement."""
    out = np.zeros((instance.H, instance.R))
    e = np.asarray(instance.e[shape.m], dtype=float)
    for h, y in workers.items():
        out[h] += y * e
    if shape.p is not None:
        z = np.asarray(instance.z[shape.p], dtype=float)
        for h, s in ps.items():
            out[h] += s * z
    return out


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
    tokens = max(1, instance.n_jobs)
    servers = tuple(
        Server(tokens, name=s.name or f"h{h}", resources={names[r]: float(s.capacity[r]) for r in instance.resources})
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
        if job.id not in self._size:
            c = ideal_config(self.instance, job.attrs["elastic_index"])
            use = np.zeros(self.instance.R)
            for _, vec in c.use:
                use += np.asarray(vec)
            with np.errstate(divide="ignore", invalid="ignore"):
                self._size[job.id] = float(
                    np.where(self._total > 0, use / np.where(self._total > 0, self._total, 1), 0).sum()
                )
        return self._size[job.id]

    def start(self, sim, job, shape: Shape, workers: dict[int, int], ps: dict[int, int]) -> None:
        use = placement_use(self.instance, shape, workers, ps)
        self._use[job.id] = use
        pl: dict[int, dict[str, Any]] = {}
        for h in sorted(set(workers) | set(ps)):
            vec = {self._names[r]: float(use[h, r]) for r in range(self.instance.R) if use[h, r] > 0}
            pl[h] = {"gpus": 1 if not pl else 0, **vec}
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


class ElasticFIFO(ElasticPolicy):
    """FIFO (Sec. 7 (i)): strict arrival order, fixed shapes (``fifo_shape``), non-preemptive."""

    name = "elastic-fifo"

    def schedule(self, sim):
        free = None
        for job in self.active():
            if job.phase != WAITING:
                continue
            free = self.free(sim) if free is None else free
            sh = self.shape(job)
            got = find_placement(self.instance, sh, free)
            if got is None:
                return  # head of line blocks
            self.start(sim, job, sh, *got)
            free = self.free(sim)


class ElasticDRF(ElasticPolicy):
    """DRF (Sec. 7 (ii)): progressive filling of worker bundles among the waiting jobs at each slot
    boundary, least dominant share first, each up to its ideal N; non-preemptive."""

    name = "elastic-drf"

    def _try(self, free: np.ndarray, job, n: int) -> tuple[Shape, dict, dict] | None:
        base = self.shape(job)
        j = job.attrs["elastic_index"]
        cands = []
        for q in (1, 0):
            if q == 0 and base.p is None and n < 2:
                continue
            cands.append((self.instance.duration(j, base.m, base.p, q, n), q))
        for d, q in sorted(cands):
            sh = Shape(base.m, base.p, q, n, d)
            got = find_placement(self.instance, sh, free)
            if got is not None:
                return sh, got[0], got[1]
        return None

    def schedule(self, sim):
        waiting = [j for j in self.active() if j.phase == WAITING]
        if not waiting:
            return
        free = self.free(sim)
        total = np.where(self._total > 0, self._total, 1.0)
        alloc: dict[int, tuple[Shape, dict, dict, np.ndarray]] = {}
        # the open job of least (share, arrival, index) next: a heap (only the job just served changes key)
        heap = [(0.0, j.arrival, j.index, k) for k, j in enumerate(waiting)]
        heapq.heapify(heap)
        # a (worker type, PS type) whose first worker did not fit will not fit for a later job of
        # this round either while no server's free resources grow (forgotten when one does)
        no_room: set = set()
        while heap:
            _, _, _, k = heapq.heappop(heap)
            job = waiting[k]
            cur = alloc.get(k)
            n = (cur[0].n if cur else 0) + 1
            base = self.shape(job)
            if n > base.n or (cur is None and (base.m, base.p) in no_room):
                continue
            before = free.copy() if cur is not None else None
            if cur is not None:
                free += cur[3]
            got = self._try(free, job, n)
            if got is None:
                if cur is not None:
                    free -= cur[3]
                else:
                    no_room.add((base.m, base.p))
                continue
            use = placement_use(self.instance, got[0], got[1], got[2])
            free -= use
            if before is not None and no_room and np.any(free > before + TOL):
                no_room.clear()  # a wider placement moved off a server: it may fit more now
            alloc[k] = (got[0], got[1], got[2], use)
            heapq.heappush(heap, (float((use.sum(axis=0) / total).max()), job.arrival, job.index, k))
        for k in sorted(alloc, key=lambda i: (waiting[i].arrival, waiting[i].index)):
            sh, w, p, _ = alloc[k]
            self.start(sim, waiting[k], sh, w, p)


class ElasticAntMan(ElasticPolicy):
    """AntMan-like (Sec. 7 (iii)): guarantee and opportunistic jobs (see the module doc).

    Parameters
    ----------
    demote_after : int or None
        Slots a guarantee job may wait (since its arrival, never started) before it becomes
        opportunistic; ``None`` (default): its own ideal duration d_j.
    """

    name = "elastic-antman"
    preemptive = True

    def __init__(self, instance: ElasticInstance, *, demote_after: int | None = None, overhead: str = "none"):
        super().__init__(instance, overhead=overhead)
        if demote_after is not None and (
            isinstance(demote_after, bool) or not isinstance(demote_after, (int, np.integer)) or demote_after < 0
        ):
            raise InvalidOptionError(
                f"The 'demote_after' option must be an integer number of slots >= 0 or None (the job's own "
                f"ideal duration); got {demote_after!r}."
            )
        self.demote_after = demote_after

    def on_start(self, sim):
        super().on_start(sim)
        self.opportunistic: set = set()
        self.demotions = 0
        self._run_as: dict[Any, str] = {}

    def _limit(self, job) -> float:
        return float(self.shape(job).d if self.demote_after is None else self.demote_after)

    def schedule(self, sim):
        self.check_progress(sim)
        now = sim.now
        act = self.active()
        for job in act:
            if (
                job.phase == WAITING
                and job.id not in self.opportunistic
                and job.n_starts == 0
                and now - job.arrival >= self._limit(job) - TOL
            ):
                self.opportunistic.add(job.id)
                self.demotions += 1
        free = self.free(sim)
        # guarantee jobs: strict arrival order, may preempt running opportunistic jobs
        for job in act:
            if job.phase != WAITING or job.id in self.opportunistic:
                continue
            sh = self.shape(job)
            got = find_placement(self.instance, sh, free)
            victims = []
            if got is None:
                running_oj = sorted(
                    (j for j in act if j.phase in (LOADING, TRAINING) and self._run_as.get(j.id) == "opportunistic"),
                    key=lambda j: (-self._last_start.get(j.id, 0.0), -j.index),
                )
                trial = free.copy()
                for v in running_oj:
                    trial += self._held(v)
                    victims.append(v)
                    got = find_placement(self.instance, sh, trial)
                    if got is not None:
                        break
                if got is None:
                    break  # head of line blocks the later guarantee jobs
                for v in victims:
                    sim.preempt(v)
                free = self.free(sim)
                got = find_placement(self.instance, sh, free)
            self._run_as[job.id] = "guarantee"
            self.start(sim, job, sh, *got)
            free = self.free(sim)
        # opportunistic jobs backfill what is free, in arrival order (free only shrinks here, so a
        # shape that did not fit will not fit a later job either)
        no_room: set = set()
        for job in act:
            if job.phase != WAITING or job.id not in self.opportunistic:
                continue
            sh = self.shape(job)
            if (sh.m, sh.p, sh.q, sh.n) in no_room:
                continue
            got = find_placement(self.instance, sh, free)
            if got is None:
                no_room.add((sh.m, sh.p, sh.q, sh.n))
                continue
            self._run_as[job.id] = "opportunistic"
            self.start(sim, job, sh, *got)
            free = self.free(sim)

    def _held(self, job) -> np.ndarray:
        cfg = job.config
        return placement_use(self.instance, cfg["shape"], cfg["workers"], cfg["ps"])


class _PriorityPreemptive(ElasticPolicy, metaclass=ABCMeta):
    """Preemptive priority scheduling at slot boundaries: jobs by :meth:`key`, smallest first; each
    keeps its servers if they are still free for it, else waits; a waiting job is placed first where
    nothing of a job kept running is taken, else anywhere free once the lower-priority jobs that
    hold it are preempted."""

    preemptive = True

    @abstractmethod
    def key(self, job) -> float:
        """The priority of an active job (smallest first)."""

    def pinned(self, sim, job) -> bool:
        """A running job kept whatever its priority (none here; see :class:`Elastic2DLAS`)."""
        return False

    def _held_use(self, job) -> np.ndarray:
        use = self._use.get(job.id)
        if use is None:  # pragma: no cover - every running job was started by this policy
            cfg = job.config
            use = self._use[job.id] = placement_use(self.instance, cfg["shape"], cfg["workers"], cfg["ps"])
        return use

    def schedule(self, sim):
        self.check_progress(sim)
        act = self.active()
        if not act:
            return
        order = sorted(act, key=lambda j: (self.key(j), j.arrival, j.index))
        cap = np.asarray(self.instance.C, dtype=float).copy()  # resources not yet promised this slot
        now_free = self.free(sim)  # free right now (running jobs hold the rest)
        keep, start = [], []
        kept: set = set()
        for job in order:  # pinned jobs keep their resources before any priority is looked at
            if job.phase in (LOADING, TRAINING) and self.pinned(sim, job):
                cap -= self._held_use(job)
                keep.append(job)
                kept.add(id(job))
        no_room: set = set()  # shapes that did not fit ``cap``, which only shrinks in this loop
        for job in order:
            if job.phase in (LOADING, TRAINING):
                if id(job) in kept:
                    continue
                use = self._held_use(job)
                if np.all(use <= cap + TOL):
                    cap -= use
                    keep.append(job)
                    kept.add(id(job))
                continue
            if job.phase != WAITING:
                continue
            sh = self.shape(job)
            if (sh.m, sh.p, sh.q, sh.n) in no_room:
                continue
            got = find_placement(self.instance, sh, np.minimum(cap, now_free))
            if got is None:
                got = find_placement(self.instance, sh, cap)
            if got is None:
                no_room.add((sh.m, sh.p, sh.q, sh.n))
                continue
            use = placement_use(self.instance, sh, *got)
            cap -= use
            now_free -= use
            start.append((job, sh, got))
        for job in act:
            if job.phase in (LOADING, TRAINING) and id(job) not in kept:
                sim.preempt(job)
        for job, sh, got in start:
            self.start(sim, job, sh, *got)


class ElasticTiresias(_PriorityPreemptive):
    """Tiresias-like (Sec. 7 (iv), as the paper describes it): smallest remaining slots x size first."""

    name = "elastic-tiresias"

    def key(self, job) -> float:
        return job.remaining() * self.size(job)


class Elastic2DLAS(_PriorityPreemptive):
    """2D-LAS (Tiresias' discretised-free form): least attained slots x size first.

    A (re)started job keeps its resources until it has trained at least as long as it spent
    loading since that start (:meth:`pinned`). Its attained service grows every slot it trains, so
    without that rule two jobs of equal priority swap every slot; when each resume costs a load
    (``overhead="checkpoint"``, or the load and save times of the simulator, as ``optsched
    compare`` gives them) of half a slot or more, the swaps would eat all the time (a livelock).
    With it, every start buys at least as much training as it paid in loading, so the run ends.
    Without resume costs the rule never binds: the schedules are those of plain 2D-LAS
    (formulations/elastic.md#baselines).
    """

    name = "elastic-2d-las"

    def on_start(self, sim):
        super().on_start(sim)
        self._since: dict[Any, tuple[float, float]] = {}  # job id -> (its last start, attained then)
        self._static_deadline = self._deadline

    def start(self, sim, job, shape: Shape, workers: dict[int, int], ps: dict[int, int]) -> None:
        super().start(sim, job, shape, workers, ps)
        self._since[job.id] = (float(sim.now), float(job.attained))

    def pinned(self, sim, job) -> bool:
        """Whether ``job`` (running) has trained for less time than it loaded since its last start."""
        t0, a0 = self._since.get(job.id, (float(sim.now), float(job.attained)))
        trained = (job.attained - a0) / job.rate if job.phase == TRAINING and job.rate > 0 else 0.0
        return 2.0 * trained < (sim.now - t0) - TOL

    def check_progress(self, sim) -> None:
        """The livelock guard, stretched by the resume loads paid so far: under :meth:`pinned` each
        load is followed by at least as much training, so a run that progresses stays within
        max a_j + sum_j (2 d_j + 2) + 2 (the slots spent loading) + 2 (the starts)."""
        if self.preemptive and sim.now > self._deadline:  # the loads only add: recount them when it matters
            paid = sum(j.loading_time + j.saving_time for j in sim.jobs)
            starts = sum(j.n_starts for j in sim.jobs)
            self._deadline = self._static_deadline + 2.0 * paid + 2.0 * starts
        super().check_progress(sim)

    def key(self, job) -> float:
        return job.attained * self.size(job)


class ElasticOnline(ElasticPolicy):
    """A_online (Alg. 1) on the simulator: at each round boundary tau_i the round's plan is released
    and each of its jobs starts at its planned slot on its planned servers.

    The plan is :func:`optsched.elastic.primal_dual.a_online`'s (one call at the start of the run,
    with its options): that function is causal (round i reads only the jobs arrived by tau_i, plus
    the constants F, w_min and, for ``alpha="thm5"``, w(J) that it takes from the whole instance),
    so releasing round i at tau_i replays it online. The simulator then checks what the verifier
    checks elsewhere, independently: every planned start is at or after tau_i and the job's
    arrival, and fits the free resources at that time. Jobs run their planned shape (rate
    d_ideal / d, :class:`ElasticRate`), so completions equal the plan's.
    """

    name = "elastic-online"

    def __init__(self, instance: ElasticInstance, **options: Any):
        super().__init__(instance)
        self.options = dict(options)

    def on_start(self, sim):
        from optsched.elastic.primal_dual import a_online

        super().on_start(sim)
        self.result = a_online(self.instance, **self.options)
        if self.result.info["unscheduled"]:
            raise InfeasibleError(
                f"A_online left job(s) {self.result.info['unscheduled']} of {self.instance.name!r} unscheduled "
                f"after {self.result.info['rounds_used']} rounds; raise max_rounds."
            )
        self._plan: dict[int, list[Any]] = {}
        for rd in self.result.info["rounds"]:
            self._plan.setdefault(int(rd["tau"]), []).extend(rd["J_i_s"])
        for tau in sorted(self._plan):
            sim.set_timer(at=float(tau), data=("round", tau))

    def on_timer(self, sim, timer):
        kind, value = timer.data
        if kind == "round":
            for jid in self._plan[value]:
                a = self.result.schedule[jid]
                if a.start < value - TOL:  # pragma: no cover - a_online plans no start before tau_i
                    raise SimulationError(f"A_online planned {jid!r} at slot {a.start} before its round tau = {value}.")
                sim.set_timer(at=float(a.start), data=("start", jid))
            return
        a = self.result.schedule[value]
        job = sim.job(value)
        sh = Shape(a.m, a.p, a.q, int(round(a.n_workers)), int(a.d))
        self.start(
            sim, job, sh, {h: int(y) for h, y in a.workers.items() if y}, {h: int(s) for h, s in a.ps.items() if s}
        )


POLICY_CLASSES: dict[str, type[ElasticPolicy]] = {
    "fifo": ElasticFIFO,
    "drf": ElasticDRF,
    "antman": ElasticAntMan,
    "tiresias": ElasticTiresias,
    "2d-las": Elastic2DLAS,
    "online": ElasticOnline,
}


def register() -> None:
    """Register the policies in the simulator's registry (``elastic-<name>``; each needs ``instance=``
    and jobs built by :func:`to_sim`)."""
    from optsched.core.registry import doc_summary

    for short, cls in POLICY_CLASSES.items():
        register_policy(
            f"elastic-{short}",
            cls,
            needs=("elastic_index", "shape"),
            paper="elastic",
            description=doc_summary(cls.__doc__),
        )
