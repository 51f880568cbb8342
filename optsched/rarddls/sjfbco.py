"""SJF-BCO (Alg. 1-3 of paper 002) and the baselines FF, LS and RAND of Sec. 7.

One *pass* schedules every job for a fixed (theta_u, kappa): jobs in strict smallest-G_j-first
order (ties by index, no backfilling); job j goes through FA-FFP (Alg. 2) if G_j <= kappa, else
LBSGF (Alg. 3); a GPU is *available* if it is idle now and U_g + rho^_j/u <= theta_u; when too
few are available the pass waits for the next exit of a running job (rates from (6)-(9), so a
start can slow running jobs) and tries again; the pass fails when nothing runs. U is reset for
every pass. Alg. 1 bisects theta_u over 1..T and sweeps kappa; see
``formulations/rarddls.md#sjf-bco`` for every reading of the pseudo-code.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from optsched.core.registry import requires_kind
from optsched.core.result import Result, Status
from optsched.core.seeds import as_generator
from optsched.exceptions import InfeasibleError, InternalError, InvalidOptionError
from optsched.rarddls.evaluate import build_schedule, replay_unchecked
from optsched.rarddls.model import KIND, OBJECTIVE, RarInstance

RULES = ("sjf-bco", "ff", "ls", "rand")
#: ``printed``: Alg. 1 Lines 19-23 (go left iff the makespan improved), the best pass returned;
#: ``feasibility``: go left iff some kappa placed every job, the best pass over every theta visited returned;
#: ``smallest-feasible``: the same search, the pass at the smallest feasible theta returned (the paper's
#: "minimum theta_u feasible to Problem (14)", Sec. 4, and the theta~_u of Lemmas 2 and 4).
BISECTIONS = ("printed", "feasibility", "smallest-feasible")


@dataclass
class Pass:
    """Outcome of one (theta_u, kappa) pass."""

    theta: float
    kappa: int | None
    ok: bool
    starts: list[int] = field(default_factory=list)
    placements: list[dict[int, int]] = field(default_factory=list)
    gpu_ids: list[dict[int, tuple[int, ...]]] = field(default_factory=list)
    completion: list[int] = field(default_factory=list)
    U: np.ndarray | None = None
    makespan: int | None = None
    failed_job: int | None = None


def theta_lower_bound(instance: RarInstance) -> float:
    """The lower bound max(max_j rho^_j, sum_j G_j rho^_j / N) / u on theta*_u of (14)-(16)."""
    u = instance.u
    return max(max(j.rho_hat for j in instance.jobs), sum(j.gpus * j.rho_hat for j in instance.jobs) / instance.N) / u


def kappa_values(instance: RarInstance, kappas: str | Sequence[int] = "all") -> list[int]:
    """kappa values of the sweep: ``"all"`` = 1..n_g (printed), ``"sizes"`` = {1} U {distinct G_j} (same result:
    the FA-FFP / LBSGF split changes only at a job size, and kappa below the smallest size sends every job
    through LBSGF), or an explicit list within [1, n_g]."""
    ng = instance.n_g
    if isinstance(kappas, str):
        if kappas == "all":
            return list(range(1, ng + 1))
        if kappas == "sizes":
            return sorted({1} | {j.gpus for j in instance.jobs})
        raise InvalidOptionError(f"kappas must be 'all', 'sizes' or a list of integers; got {kappas!r}.")
    out = []
    for k in kappas:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= ng:
            raise InvalidOptionError(f"Every kappa must be an integer in [1, n_g] = [1, {ng}]; got {k!r}.")
        out.append(int(k))
    if not out:
        raise InvalidOptionError("kappas is empty; give at least one value in [1, n_g].")
    return out


class _Cluster:
    """Flat GPU arrays of one pass."""

    def __init__(self, instance: RarInstance):
        caps = instance.O
        self.server = np.repeat(np.arange(len(caps)), caps)
        self.local = np.concatenate([np.arange(o) for o in caps])
        self.O = np.array(caps, dtype=float)
        self.first = np.concatenate([[0], np.cumsum(caps)[:-1]])


class _PassClock:
    """The running jobs of one pass and their rates under contention (6)-(9): time ``t``, each job's
    remaining iterations at ``tref``, its current iterations per slot, and a heap of projected
    completions (stale entries skipped by version)."""

    def __init__(self, instance: RarInstance, cl: _Cluster):
        n = instance.n_jobs
        self.tab = instance.phi_table
        self.holder = np.full(len(cl.server), -1)
        self.t = 0
        self.n_running = 0
        self.comp = [-1] * n
        self.rem = [int(j.iterations) for j in instance.jobs]  # remaining iterations at time tref[j]
        self.tref = [0] * n
        self.ph = [0] * n  # current iterations per slot
        self.fin = [0] * n  # projected completion at the current rates
        self.ver = [0] * n
        self.heap: list[tuple[int, int, int]] = []  # (projected completion, job, version)
        self.nsrv = [0] * n  # servers used by each placed job
        self.splits: list[list[int]] = [[] for _ in range(n)]  # servers where each placed job is split (6)
        self.members: list[set[int]] = [set() for _ in range(len(cl.O))]  # running jobs split on each server
        self.held: list = [None] * n

    def set_rate(self, j: int) -> None:
        """Bring job j to time t and give it the rate of the current contention (6)-(9)."""
        t = self.t
        self.rem[j] -= self.ph[j] * (t - self.tref[j])
        self.tref[j] = t
        sp = self.splits[j]
        p = max(len(self.members[s]) for s in sp) if sp else 0
        self.ph[j] = self.tab[j][self.nsrv[j]][p]
        self.fin[j] = t + -(-self.rem[j] // self.ph[j])
        self.ver[j] += 1
        heapq.heappush(self.heap, (self.fin[j], j, self.ver[j]))

    def touched(self, servers) -> set[int]:
        out: set[int] = set()
        for s in servers:
            out |= self.members[s]
        return out

    def advance(self) -> None:
        """Move to the next exit; finish every job ending then; update the rates it changes."""
        heap, ver, comp = self.heap, self.ver, self.comp
        while True:
            f, j, v = heapq.heappop(heap)
            if v == ver[j] and comp[j] < 0:
                break
        self.t = f
        done = [j]
        while heap and heap[0][0] == f:
            _, k, v = heapq.heappop(heap)
            if v == ver[k] and comp[k] < 0:
                done.append(k)
        freed: set[int] = set()
        for k in done:
            comp[k] = f
            self.rem[k] = 0
            self.holder[self.held[k]] = -1
            for s in self.splits[k]:
                self.members[s].discard(k)
            freed.update(self.splits[k])
        self.n_running -= len(done)
        for k in self.touched(freed):
            self.set_rate(k)

    def start(self, j: int, chosen: np.ndarray, servers_used: int, G: int, pl: dict[int, int]) -> None:
        """Job j starts now on GPUs ``chosen`` (``pl``: GPUs per server); the jobs sharing its split
        servers change rate."""
        self.holder[chosen] = j
        self.held[j] = chosen
        self.nsrv[j] = servers_used
        self.splits[j] = [s for s, y in pl.items() if y < G] if servers_used > 1 else []
        for s in self.splits[j]:
            self.members[s].add(j)
        self.tref[j] = self.t
        self.n_running += 1
        for k in self.touched(self.splits[j]) | {j}:
            self.set_rate(k)


def _choose_gpus(
    job, rule: str, lbsgf: bool, avail: np.ndarray, U: np.ndarray, cl: _Cluster, rng, eps: float
) -> np.ndarray | None:
    """The GPUs job ``job`` takes among the available ones (LBSGF, first fit, random, or least U
    first), or None when too few are available."""
    G = job.gpus
    if lbsgf:
        score = np.bincount(cl.server, weights=U, minlength=len(cl.O)) / cl.O
        srv = np.argsort(score, kind="stable")
        need = job.lam * G
        csum = np.cumsum(cl.O[srv])
        m = int(np.searchsorted(csum, need - eps) + 1)
        sel = np.zeros(len(cl.O), dtype=bool)
        sel[srv[:m]] = True
        cand = np.nonzero(avail & sel[cl.server])[0]
        return cand[np.argsort(U[cand], kind="stable")[:G]] if len(cand) >= G else None
    cand = np.nonzero(avail)[0]
    if len(cand) < G:
        return None
    if rule == "ff":
        return cand[:G]
    if rule == "rand":
        return np.sort(rng.choice(cand, size=G, replace=False))
    return cand[np.argsort(U[cand], kind="stable")[:G]]  # FA-FFP (Alg. 2) and LS: least U first, ties by (server, GPU)


def run_pass(
    instance: RarInstance,
    theta: float,
    kappa: int | None,
    *,
    rule: str = "sjf-bco",
    order: Sequence[int] | None = None,
    rng: np.random.Generator | None = None,
    cl: _Cluster | None = None,
) -> Pass:
    """One pass of Alg. 1 Lines 8-18 for fixed (theta_u, kappa) (or of a baseline ``rule``)."""
    n = instance.n_jobs
    cl = cl or _Cluster(instance)
    u = instance.u
    eps = 1e-9
    U = np.zeros(len(cl.server))
    order = list(order) if order is not None else sorted(range(n), key=lambda j: (instance.jobs[j].gpus, j))
    starts = [0] * n
    pls: list[dict[int, int]] = [dict() for _ in range(n)]
    ids: list[dict[int, tuple[int, ...]]] = [dict() for _ in range(n)]
    clock = _PassClock(instance, cl)
    for j in order:
        job = instance.jobs[j]
        add = job.rho_hat / u
        lbsgf = rule == "sjf-bco" and (kappa is None or kappa < job.gpus)
        while True:
            avail = (clock.holder < 0) & (U + add <= theta + eps)
            chosen = _choose_gpus(job, rule, lbsgf, avail, U, cl, rng, eps)
            if chosen is not None:
                break
            if clock.n_running:
                clock.advance()
                continue
            return Pass(theta, kappa, False, failed_job=j, U=U)
        U[chosen] += add
        starts[j] = clock.t
        for g in chosen:
            s = int(cl.server[g])
            pls[j][s] = pls[j].get(s, 0) + 1
        for s in pls[j]:
            ids[j][s] = tuple(int(x) for x in sorted(cl.local[chosen][cl.server[chosen] == s]))
        clock.start(j, chosen, len(pls[j]), job.gpus, pls[j])
    while clock.n_running:
        clock.advance()
    return Pass(theta, kappa, True, starts, pls, ids, clock.comp, U, max(clock.comp))


def _bisect(
    instance: RarInstance,
    *,
    rule: str,
    kappas: list[int | None],
    T: int,
    bisection: str,
    rng: np.random.Generator | None,
) -> tuple[Pass | None, int, list[dict]]:
    """Alg. 1 Lines 4-24. Returns the pass it keeps (see :data:`BISECTIONS`), the number of passes and a log of
    theta steps."""
    if bisection not in BISECTIONS:
        raise InvalidOptionError(f"bisection must be one of {BISECTIONS}; got {bisection!r}.")
    cl = _Cluster(instance)
    order = sorted(range(instance.n_jobs), key=lambda j: (instance.jobs[j].gpus, j))
    best: Pass | None = None
    smallest: Pass | None = None  # the best pass at the smallest feasible theta visited
    m = T + 1  # sentinel: a pass counts only if it places every job and ends by T
    left, right = 1, T
    passes = 0
    log = []
    while left <= right:
        theta = (left + right) // 2
        m_theta, p_theta = T + 1, None
        for kappa in kappas:
            p = run_pass(instance, theta, kappa, rule=rule, order=order, rng=rng, cl=cl)
            passes += 1
            if p.ok and p.makespan < m_theta:  # Lines 17-18 after the last job
                m_theta, p_theta = p.makespan, p
        log.append(
            {
                "theta": theta,
                "makespan": m_theta if p_theta is not None else None,
                "kappa": p_theta.kappa if p_theta is not None else None,
            }
        )
        improved = p_theta is not None and m_theta < m
        if improved:  # Lines 19-21
            m, best = m_theta, p_theta
        if p_theta is not None and (smallest is None or theta < smallest.theta):
            smallest = p_theta
        go_left = improved if bisection == "printed" else p_theta is not None
        if go_left:
            right = theta - 1
        else:
            left = theta + 1
    if bisection == "smallest-feasible":
        return smallest, passes, log
    return best, passes, log


def _result(instance: RarInstance, name: str, p: Pass, t0: float, info: dict) -> Result:
    rep = replay_unchecked(instance, p.starts, p.placements)
    if rep.completion != p.completion:
        raise InternalError(
            f"{name}: the pass's incremental simulation ({p.completion}) and the slotted "
            f"evaluator ({rep.completion}) disagree; please report this bug."
        )
    sched = build_schedule(instance, p.starts, p.placements, p.gpu_ids, rep.completion)
    info = {
        "theta": p.theta,
        "kappa": p.kappa,
        "W_max": float(p.U.max()),
        "u": instance.u,
        "l": instance.l,
        "mean_jct": float(np.mean(rep.completion)),
        **info,
    }
    return Result(
        algorithm=name,
        instance=instance.name,
        objective=float(rep.makespan),
        objective_name=OBJECTIVE,
        schedule=sched,
        status=Status.HEURISTIC,
        runtime=time.perf_counter() - t0,
        info=info,
    )


def _run(instance, name, rule, *, kappas, horizon, bisection, seed):
    t0 = time.perf_counter()
    T = int(horizon) if horizon is not None else instance.T()
    if T < 1:
        raise InvalidOptionError(f"horizon must be >= 1 slot; got {horizon!r}.")
    rng = as_generator(seed if seed is not None else 0) if rule == "rand" else None
    ks: list[int | None] = list(kappa_values(instance, kappas)) if rule == "sjf-bco" else [None]
    if rule == "rand":  # theta_u = T, one pass
        p = run_pass(instance, float(T), None, rule="rand", rng=rng)
        best, passes, log = (p if p.ok and p.makespan <= T else None), 1, []
    else:
        best, passes, log = _bisect(instance, rule=rule, kappas=ks, T=T, bisection=bisection, rng=rng)
    if best is None:
        raise InfeasibleError(
            f"{name}: no theta_u <= T = {T} slots gives a schedule that places every job and ends by T "
            f"(theta*_u >= {theta_lower_bound(instance):.4g}, the lower bound max(max rho^, sum G rho^ / N) / u). "
            f"Raise the horizon T."
        )
    return _result(
        instance,
        name,
        best,
        t0,
        {"passes": passes, "T": T, "kappas": ks if rule == "sjf-bco" else None, "bisection": bisection, "log": log},
    )


@requires_kind(KIND)
def sjf_bco(
    instance: RarInstance,
    *,
    kappas: str | Sequence[int] = "all",
    horizon: int | None = None,
    bisection: str = "printed",
    seed=None,
) -> Result:
    """SJF-BCO (Alg. 1 with FA-FFP and LBSGF): bisection on theta_u in [1, T], kappa sweep.

    Parameters
    ----------
    instance : RarInstance
    kappas : "all", "sizes" or list of int
        ``"all"``: kappa = 1..n_g (printed); ``"sizes"``: {1} U {distinct G_j} (same result, fewer passes).
    horizon : int, optional
        T (slots); default ``instance.T()``.
    bisection : {"printed", "feasibility", "smallest-feasible"}
        ``printed`` (default): go left iff the makespan improved (Lines 19-23), return the best pass.
        ``feasibility``: go left iff some kappa placed every job (and ended by T), return the best pass over
        every theta visited and report *its* theta. ``smallest-feasible``: the same search, return the
        (best-kappa) pass at the smallest feasible theta and report that theta: the paper's theta~_u, "the
        minimum theta_u feasible to Problem (14)" (Sec. 4), the one Lemmas 2 and 4 speak of
        (formulations/rarddls.md#sjf-bco).
    seed : ignored (deterministic).

    Returns
    -------
    Result
        makespan (slots) recomputed by the slotted evaluator; ``info``: ``theta`` (theta~_u), ``kappa``,
        ``W_max`` (max_g U_g), ``passes``, ``mean_jct``.

    Raises
    ------
    InfeasibleError
        No theta_u <= T gives a complete schedule ending by T.

    Guarantee
    ---------
    Claimed (Thm 5): makespan <= n_g varphi (u/l) T*; see :mod:`optsched.rarddls.bounds` for the checks.

    Notes
    -----
    O(n_g |J| N log N log T) (Thm 6) plus the contention evaluation at each exit.

    References
    ----------
    Yu, Ji, Rajan, Liu (MobiHoc '22), Alg. 1-3; formulations/rarddls.md#sjf-bco.

    Examples
    --------
    >>> from optsched.rarddls import toy_instance
    >>> r = sjf_bco(toy_instance())
    >>> r.objective, r.info["passes"] > 0
    (9.0, True)
    """
    return _run(instance, "rarddls-sjf-bco", "sjf-bco", kappas=kappas, horizon=horizon, bisection=bisection, seed=seed)


@requires_kind(KIND)
def first_fit(instance: RarInstance, *, horizon: int | None = None, bisection: str = "printed", seed=None) -> Result:
    """First-Fit (Sec. 7): the first G_j available GPUs server by server, same order and bisection as SJF-BCO."""
    return _run(instance, "rarddls-ff", "ff", kappas="all", horizon=horizon, bisection=bisection, seed=seed)


@requires_kind(KIND)
def list_scheduling(
    instance: RarInstance, *, horizon: int | None = None, bisection: str = "printed", seed=None
) -> Result:
    """List Scheduling (Sec. 7): the G_j available GPUs with least U first (= SJF-BCO with kappa >= n_g)."""
    return _run(instance, "rarddls-ls", "ls", kappas="all", horizon=horizon, bisection=bisection, seed=seed)


@requires_kind(KIND)
def random_schedule(instance: RarInstance, *, horizon: int | None = None, seed=None) -> Result:
    """RAND (Sec. 7): G_j GPUs chosen uniformly among the idle ones, theta_u = T (one pass), seeded."""
    return _run(instance, "rarddls-rand", "rand", kappas="all", horizon=horizon, bisection="printed", seed=seed)


def passes_bound(instance: RarInstance, T: int | None = None) -> int:
    """Thm 6's pass count: (ceil(log2 T) + 1) n_g."""
    T = T or instance.T()
    return (math.ceil(math.log2(T)) + 1) * instance.n_g
