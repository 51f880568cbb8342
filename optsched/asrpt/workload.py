"""A-SRPT jobs from a generic job table (arrival, gpus, duration; optional model): what the A-SRPT
policies need to run on any trace (``optsched compare``). Assumptions: formulations/asrpt.md#from-a-trace.

* **Model profile** (stages, replicas, per-replica times, activations, parameters) per job: from
  the ``model`` column when its name matches a family of :data:`FAMILIES` (case-insensitive
  substring, e.g. ``"vgg19_bn"`` -> VGG19, ``"gpt-3"`` -> GPT; ``profile_of=`` maps other names),
  else drawn uniformly among the families (one-GPU jobs: the single-stage family), with exactly
  the job's GPU count g_i = sum_s k_s.
* **Iterations** n_i = max(1, ceil(duration_i / alpha~min_i)): the trace's duration is read as the
  time at the placement A-SRPT itself estimates (Heavy-Edge on the fewest servers, Sec. IV-B), the
  paper's recipe (Sec. V-A-1-b), rounded up so that the job never runs faster than its trace
  duration there; predictions are perfect (ñ_i = n_i, A-SRPT-Perfect).
* **Cluster**: the given servers with g x 100 Gbit/s of NIC per server of g GPUs
  (:func:`default_bandwidth_inter`: 12.5 GB/s per GPU, 24x below NVLink's 300 GB/s, inside the paper's
  "one to two orders of magnitude", Sec. III) and the paper's 300 GB/s inside a server, unless the
  cluster or ``bandwidth_inter`` says otherwise. The paper's own 10 Gbit/s per 8-GPU server
  (:data:`B_INTER`, Sec. V-B) is 1,920x below NVLink per GPU; the paper reproductions keep it. The time
  model's premise B_inter <= g B_intra (a byte over the NIC costs at least as much as one inside a
  server) is checked (:func:`check_bandwidths`).

:func:`least_processing` gives n_i alpha^min_i, the least time of job i over every placement the
cluster can give it (one server when the job fits on one, else the exact minimum over its splits):
the lower bound of ``compare`` uses it for the A-SRPT rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from optsched.asrpt.heavy_edge import alpha_min_estimate
from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
from optsched.asrpt.placement import enumerate_placement, solve_placement
from optsched.asrpt.profiles import MB, pipeline
from optsched.asrpt.timing import alpha, consolidated_placement
from optsched.core.cluster import Cluster
from optsched.core.seeds import SeedLike, job_uniforms
from optsched.exceptions import (
    InvalidInstanceError,
    InvalidOptionError,
    ModelTooLargeError,
    SolverError,
    SolverUnavailableError,
)
from optsched.sim.model.inputs import job_table_columns
from optsched.solvers import SolveOptions

B_INTER = 10e9 / 8  #: the paper's NIC, 10 Gbit/s per server, in bytes/s (Sec. V-B; the reproductions)
#: The enrichment's default NIC share per GPU: 100 Gbit/s, in bytes/s (a server of g GPUs: g x this).
B_INTER_PER_GPU = 100e9 / 8
B_INTRA = 300e9  #: the paper's intra-server bandwidth, 300 GB/s
#: :func:`least_processing` enumerates the splits of a job wider than a server when there are at
#: most this many count matrices, else solves the placement MILP for at most MILP_SECONDS.
EXACT_PLACEMENTS = 20_000
MILP_SECONDS = 30.0

#: Model families and the name fragments that select them from a ``model`` column.
FAMILIES: dict[str, tuple[str, ...]] = {
    "ResNet": ("resnet", "conv", "efficient", "inception", "mobilenet", "cnn"),
    "VGG19": ("vgg",),
    "ViT": ("vit", "swin", "tnt", "conformer", "deit"),
    "BERT": ("bert", "transformer"),
    "GPT": ("gpt", "llama", "opt-", "llm", "t5"),
}
#: The families a job without a recognised model name is drawn from (uniformly): the four of the
#: paper's Table I kinds; ViT is only taken from a model name.
DRAWN_FAMILIES = ("ResNet", "VGG19", "BERT", "GPT")


def default_bandwidth_inter(g: int) -> float:
    """The enrichment's NIC bandwidth of a server of ``g`` GPUs (bytes/s): g x :data:`B_INTER_PER_GPU`.

    >>> default_bandwidth_inter(8) * 8 / 1e9   # Gbit/s per 8-GPU server
    800.0
    """
    return int(g) * B_INTER_PER_GPU


def profile(family: str, gpus: int, *, seed: SeedLike = 0) -> tuple[Stage, ...]:
    """Stages of a ``family`` job on ``gpus`` GPUs (sum of replicas = ``gpus``).

    ResNet (ResNet-50-like, 25.6M parameters, 0.1 s per mini-batch on one GPU), ViT (ViT-B/16-like,
    86.6M parameters, 346 MB of fp32 gradients, 0.1 s: the size of ViT-B/16, Swin-B 87.8M,
    Conformer-B 83.3M and TNT-B 65.6M) and BERT (BERT-large, 340M parameters, 0.09 s) are
    data-parallel (one stage, k = g replicas); VGG19 is the 4-stage
    pipeline of :func:`optsched.asrpt.profiles.vgg19_like` on 8 GPUs, 2 stages on 2, 4 of one
    replica on 4, data-parallel otherwise; GPT is a uniform pipeline of g one-replica stages
    (:func:`~optsched.asrpt.profiles.gpt_like`'s per-stage numbers scaled to 8 / g). One GPU: a
    single stage with ResNet's times.

    >>> [s.k for s in profile("VGG19", 8)], len(profile("GPT", 4)), profile("BERT", 3)[0].k
    ([2, 2, 3, 1], 4, 3)
    """
    if not (isinstance(gpus, (int, np.integer)) and gpus >= 1):
        raise InvalidInstanceError(f"The 'gpus' of a job must be an integer >= 1; got {gpus!r}.")
    g = int(gpus)
    if family not in FAMILIES:
        raise InvalidOptionError(f"Unknown model family {family!r}; use one of {list(FAMILIES)}.")
    if g == 1 or family == "ResNet":
        p = 0.1
        return (Stage(k=g, p_f=p / 3 / g, p_b=2 * p / 3 / g, h=102.4 * MB if g > 1 else 0.0),)
    if family == "BERT":
        p = 0.09
        return (Stage(k=g, p_f=p / 3 / g, p_b=2 * p / 3 / g, h=1360 * MB),)
    if family == "ViT":
        p = 0.1
        return (Stage(k=g, p_f=p / 3 / g, p_b=2 * p / 3 / g, h=346 * MB),)
    if family == "VGG19":
        if g == 2:
            return pipeline(0, (1, 1), (0.024, 0.021), (3.2 * MB,), (76 * MB, 494 * MB)).stages
        if g in (4, 8):
            ks = (1, 1, 1, 1) if g == 4 else (2, 2, 3, 1)
            return pipeline(
                0,
                ks,
                (0.013, 0.011, 0.020, 0.001),
                (51.4 * MB, 25.7 * MB, 3.2 * MB),
                (1.2 * MB, 8.9 * MB, 66 * MB, 494 * MB),
            ).stages
        p = 0.045
        return (Stage(k=g, p_f=p / 3 / g, p_b=2 * p / 3 / g, h=575 * MB),)
    return pipeline(0, (1,) * g, (0.0034 * 8 / g,) * g, (12.6 * MB,) * (g - 1), (0.0,) * g).stages


def family_of(name: Any, profile_of: Mapping[str, str] | None = None) -> str | None:
    """The family a model name selects (``profile_of`` first, then :data:`FAMILIES`' fragments), or None.

    >>> family_of("vgg19_bn"), family_of("GPT-3"), family_of("Swin"), family_of("my-net", {"my-net": "BERT"})
    ('VGG19', 'GPT', 'ViT', 'BERT')
    >>> family_of("my-net") is None
    True
    """
    if name is None or (isinstance(name, float) and np.isnan(name)):
        return None
    s = str(name)
    if profile_of and s in profile_of:
        fam = profile_of[s]
        if fam not in FAMILIES:
            raise InvalidOptionError(
                f"profile_of maps model {s!r} to {fam!r}, which is not a family; use one of {list(FAMILIES)}."
            )
        return fam
    low = s.lower()
    for fam, frags in FAMILIES.items():
        if any(f in low for f in frags):
            return fam
    return None


def check_bandwidths(g: int, bandwidth_inter: float, bandwidth_intra: float, *, where: str = "options") -> None:
    """Refuse bandwidths that break the premise of the A-SRPT time model: B_inter <= g B_intra.

    Under the model (eq. 5-6, formulations/asrpt.md#reading) the x replicas of a stage on a server
    share x/g of its NIC, so a byte that leaves the server costs g / B_inter seconds of that share
    and one that stays costs 1 / B_intra. With B_inter > g B_intra a job split over servers trains
    faster than the same job on one server, which is not what the paper models (its NIC is 10
    Gbit/s, its NVLink 300 GB/s), and the least time of a job is no longer its time on one server.

    Parameters
    ----------
    g : int
        GPUs per server.
    bandwidth_inter, bandwidth_intra : float
        Bytes per second.
    where : str
        Where the values come from (``"options"``: the enrichment's options; ``"cluster"``: the
        cluster's own fields), for the message.

    Raises
    ------
    InvalidOptionError
        A bandwidth that is not a finite number > 0, or B_inter > g B_intra; the message names the
        field, the value and the fix.

    Examples
    --------
    >>> check_bandwidths(8, B_INTER, B_INTRA)
    >>> try:
    ...     check_bandwidths(8, 1e14, 1e9)
    ... except InvalidOptionError as e:
    ...     print(str(e)[:98])
    The 'bandwidth_inter' of the A-SRPT enrichment options is 1e+14 bytes/s (800000 Gbit/s per server)
    """
    for name, v in (("bandwidth_inter", bandwidth_inter), ("bandwidth_intra", bandwidth_intra)):
        try:
            x = float(v)
        except (TypeError, ValueError):
            x = math.nan
        if isinstance(v, bool) or not (x > 0 and math.isfinite(x)):
            raise InvalidOptionError(
                f"The '{name}' of the A-SRPT {_WHERE[where]} must be a bandwidth > 0 in bytes/s; got {v!r} bytes/s "
                f"(a server's NIC of 100 Gbit/s is 1.25e10 bytes/s)."
            )
    if float(bandwidth_inter) > g * float(bandwidth_intra) * (1 + 1e-12):
        raise InvalidOptionError(
            f"The 'bandwidth_inter' of the A-SRPT {_WHERE[where]} is {float(bandwidth_inter):.6g} bytes/s "
            f"({float(bandwidth_inter) * 8 / 1e9:.6g} Gbit/s per server), faster across servers than inside one: "
            f"above g x "
            f"bandwidth_intra = {g} x {float(bandwidth_intra):.6g} = {g * float(bandwidth_intra):.6g} bytes/s: the "
            f"time model (eq. 5-6) would then make a job split over servers faster than on one server. Give "
            f"bandwidth_inter <= g x bandwidth_intra (the paper: 10 Gbit/s = 1.25e9 bytes/s between servers, "
            f"300 GB/s = 3e11 inside one; formulations/asrpt.md#from-a-trace)."
        )


_WHERE = {"options": "enrichment options", "cluster": "cluster (its own field)"}


def check_nic_gbps(gbps: Any, g: int, *, option: str = "--asrpt-nic-gbps") -> float:
    """A NIC bandwidth per server given in Gbit/s (the CLI's unit), checked: a finite number > 0, and
    not faster across servers than inside one (at most g x 300 GB/s = g x 2,400 Gbit/s, the premise
    of :func:`check_bandwidths`). Returns it in bytes/s.

    >>> check_nic_gbps(10, 8)   # the paper's NIC
    1250000000.0
    >>> try:
    ...     check_nic_gbps(0, 8)
    ... except InvalidOptionError as e:
    ...     print(e)
    --asrpt-nic-gbps must be a bandwidth > 0 in Gbit/s per server (the paper: 10; default: 100 per GPU); got 0 Gbit/s.
    """
    try:
        x = float(gbps)
    except (TypeError, ValueError):
        x = math.nan
    if isinstance(gbps, bool) or not (x > 0 and math.isfinite(x)):
        raise InvalidOptionError(
            f"{option} must be a bandwidth > 0 in Gbit/s per server (the paper: 10; default: 100 per GPU); "
            f"got {gbps!r} Gbit/s."
        )
    if x * 1e9 / 8 < 1.0:  # a cluster's bandwidth is at least 1 byte/s (optsched.core.limits)
        raise InvalidOptionError(
            f"{option} {x:g} Gbit/s per server is below 1 byte/s (8e-09 Gbit/s), the least bandwidth a cluster "
            f"may have; give at least 8e-09 Gbit/s (the paper: 10)."
        )
    cap = int(g) * B_INTRA * 8 / 1e9
    if x > cap * (1 + 1e-12):
        raise InvalidOptionError(
            f"{option} {x:g} Gbit/s per server is faster across servers than inside one: above g x 300 GB/s = "
            f"{int(g)} x 2,400 = {cap:,.0f} Gbit/s for servers of {int(g)} GPUs, where a split job would train "
            f"faster than on one server; give at most {cap:,.0f} Gbit/s."
        )
    return x * 1e9 / 8


def _pick(own: float | None, option: float | None, default: float) -> float:
    """The cluster's own bandwidth, else the option (0 and negatives too: refused later), else the default."""
    return own if own is not None else default if option is None else option


def _column(table: Any, name: str) -> list | None:
    if name not in getattr(table, "columns", ()):
        return None
    return table[name].tolist()


def from_table(
    table: Any,
    cluster: Cluster,
    *,
    model_column: str = "model",
    profile_of: Mapping[str, str] | None = None,
    bandwidth_inter: float | None = None,
    bandwidth_intra: float | None = None,
    slot: float = 1.0,
    seed: SeedLike = 0,
) -> AsrptInstance:
    """An :class:`AsrptInstance` from a job table (columns ``arrival``, ``gpus``, ``duration`` or
    ``work``; optional ``job_id``, ``model``, ``user``, ``group``), on ``cluster``'s servers.

    Parameters
    ----------
    table : DataFrame
    cluster : Cluster
        Identical servers (the paper's M x g); its bandwidths are used when set, else
        ``bandwidth_inter`` / ``bandwidth_intra`` (bytes/s per server; default
        :func:`default_bandwidth_inter` (g x 100 Gbit/s) and :data:`B_INTRA` (300 GB/s); the paper's
        10 Gbit/s is :data:`B_INTER`).
    model_column : str
        Column with model names (absent: every profile is drawn).
    profile_of : mapping model name -> family, optional
        Overrides the name matching of :func:`family_of`.
    slot : float
        Slot length of the instance (s): A-SRPT and its baselines start jobs at slot boundaries.
    seed : int, Generator or None
        For the drawn families.

    Returns
    -------
    AsrptInstance
        ``metadata["assumptions"]`` counts the profiles taken from the column and drawn.

    Raises
    ------
    InvalidInstanceError
        A missing column, servers of different sizes, a job larger than the cluster.
    InvalidOptionError
        Bandwidths that break the time model's premise (:func:`check_bandwidths`).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 5.0], "gpus": [1, 4], "duration": [100.0, 60.0], "model": ["x", "gpt2"]})
    >>> inst = from_table(t, Cluster.homogeneous(1, 4))
    >>> [j.gpus for j in inst.jobs], inst.metadata["assumptions"]["profiles_from_model_column"]
    ([1, 4], 1)
    """
    _, dcol = job_table_columns(table, who="the A-SRPT policies", prefer="duration")
    if not cluster.is_homogeneous:
        raise InvalidInstanceError(
            f"The A-SRPT policies need identical servers (the paper's M x g); this cluster has "
            f"{sorted({int(s) for s in cluster.gpus})} GPUs per server. Size the cluster with --load or "
            f"--servers / --gpus-per-server."
        )
    own = cluster.bandwidth_inter is not None or cluster.bandwidth_intra is not None
    g_srv = int(cluster.max_server_gpus)
    bi = _pick(cluster.bandwidth_inter, bandwidth_inter, default_bandwidth_inter(g_srv))
    ba = _pick(cluster.bandwidth_intra, bandwidth_intra, B_INTRA)
    check_bandwidths(int(cluster.max_server_gpus), bi, ba, where="cluster" if own else "options")
    cl = Cluster.homogeneous(cluster.n_servers, cluster.max_server_gpus, bandwidth_inter=bi, bandwidth_intra=ba)
    arr = table["arrival"].to_numpy(dtype=float)
    gp = table["gpus"].to_numpy()
    dur = table[dcol].to_numpy(dtype=float)
    ids = _column(table, "job_id") or list(range(len(arr)))
    models = _column(table, model_column)
    users = _column(table, "user")
    groups = _column(table, "group")
    fams = list(DRAWN_FAMILIES)
    pick = job_uniforms(seed, ids, "asrpt-profile")  # each job's own draw: by its id, not its row
    probe = AsrptInstance(cl, [], name="probe")

    a_memo: dict = {}
    jobs = []
    n_col = 0
    for i in range(len(arr)):
        g = int(gp[i])
        fam = family_of(models[i], profile_of) if models is not None else None
        if fam is None:
            fam = fams[min(int(pick[i] * len(fams)), len(fams) - 1)]
        else:
            n_col += 1
        key = (fam, g)
        hit = a_memo.get(key)
        if hit is None:
            st = profile(fam, g)
            hit = a_memo[key] = (st, alpha_min_estimate(AsrptJob("x", list(st), iterations=1), probe))
        st, a = hit
        jid = ids[i]
        jid = int(jid) if isinstance(jid, (np.integer,)) else jid
        jobs.append(
            AsrptJob(
                jid,
                list(st),
                iterations=max(1, math.ceil(float(dur[i]) / a - 1e-9)),
                arrival=float(arr[i]),
                group=None if groups is None else str(groups[i]),
                user=None if users is None else str(users[i]),
                attrs={"family": fam},
            )
        )
    return AsrptInstance(
        cl,
        jobs,
        name="from-table",
        slot=slot,
        metadata={
            "assumptions": {
                "profiles_from_model_column": n_col,
                "profiles_drawn": len(jobs) - n_col,
                "iterations": "ceil(duration / alpha~min)",
                "predictions": "perfect",
                "bandwidth_inter": bi,
                "bandwidth_intra": ba,
                "nic_gbps_per_server": bi * 8 / 1e9,
                "profiles": profile_gradients(jobs),
            }
        },
    )


def profile_gradients(jobs) -> dict[str, str]:
    """Family -> "N jobs (M on several GPUs), H MB of gradients": how many of ``jobs`` got each profile
    (``attrs["family"]``, set by :func:`from_table`) and the gradients its AllReduce carries (the sum of
    h over the stages of its 8-GPU profile; one-GPU jobs exchange none), and for a pipeline the
    activations its stages pass on per iteration (the sum of d_out over every stage but the last,
    which is what a pipeline split across servers sends over the network): which profiles a table
    got, for the assumptions that ``compare`` prints.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 1.0], "gpus": [2, 1], "duration": [60.0, 60.0]})
    >>> t["model"] = ["vit_b_16", "bert"]
    >>> for fam, what in profile_gradients(from_table(t, Cluster.homogeneous(1, 2)).jobs).items():
    ...     print(fam, what)
    BERT 1 jobs (0 on several GPUs), 1360 MB of gradients
    ViT 1 jobs (1 on several GPUs), 346 MB of gradients
    >>> print(profile_gradients(from_table(t.assign(model="gpt2"), Cluster.homogeneous(1, 2)).jobs)["GPT"])
    2 jobs (1 on several GPUs), 0 MB of gradients, 88.2 MB of activations between pipeline stages
    """
    count: dict[str, list[int]] = {}
    for j in jobs:
        c = count.setdefault(j.attrs.get("family", "?"), [0, 0])
        c[0] += 1
        c[1] += j.gpus > 1
    out = {}
    for f in sorted(count):
        stages = profile(f, 8) if f in FAMILIES else []
        h = sum(st.h for st in stages) / MB if stages else math.nan
        acts = sum(st.d_out for st in stages[:-1]) / MB
        out[f] = f"{count[f][0]} jobs ({count[f][1]} on several GPUs), {h:.4g} MB of gradients" + (
            f", {acts:.4g} MB of activations between pipeline stages" if acts > 0 else ""
        )
    return out


def least_processing(instance: AsrptInstance, *, detail: bool = False):
    """n_i alpha^min_i per job (s): the least time of job i over every placement ``instance``'s
    cluster can give it, so a valid least processing time for a lower bound.

    * A job that fits on one server: its time there (alpha(one server) <= alpha(x) for every
      placement x when B_inter <= g B_intra, the guarantee of :func:`~optsched.asrpt.timing.alpha`).
    * A job wider than a server: the exact minimum of eq. (7) over its splits on servers of g GPUs,
      by enumeration (at most :data:`EXACT_PLACEMENTS` count matrices) or else the placement MILP's
      proven bound (HiGHS, :data:`MILP_SECONDS` at most; once per profile); if neither answers, its
      time on one hypothetical server of its width, which no split beats under the premise (a
      valid, looser bound).

    With ``detail=True`` also returns, per job, how its time was found: ``"one server"``,
    ``"exact split"`` or ``"relaxed"``.

    Raises
    ------
    InvalidOptionError
        The instance's bandwidths break the premise (:func:`check_bandwidths`).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0], "gpus": [2], "duration": [600.0], "model": ["resnet50"]})
    >>> inst = from_table(t, Cluster.homogeneous(2, 1))   # 2 GPUs on servers of one: split
    >>> bool(least_processing(inst)[0] >= 600.0), least_processing(inst, detail=True)[1]
    (True, ['exact split'])
    """
    g = int(instance.g)
    check_bandwidths(g, instance.b_inter, instance.b_intra)
    memo: dict = {}
    out = np.empty(instance.n_jobs)
    how: list[str] = []
    for k, j in enumerate(instance.jobs):
        key = j.stages
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = _least_alpha(j, instance, g)
        out[k] = j.iterations * hit[0]
        how.append(hit[1])
    return (out, how) if detail else out


def _least_alpha(job: AsrptJob, instance: AsrptInstance, g: int) -> tuple[float, str]:
    def one_server(width: int) -> float:
        return alpha(job, consolidated_placement(job), g=width, b_inter=instance.b_inter, b_intra=instance.b_intra)

    if job.gpus <= g:
        return one_server(g), "one server"
    free = [g] * min(int(instance.M), job.gpus)
    try:
        return float(enumerate_placement(job, free, instance=instance, limit=EXACT_PLACEMENTS).alpha), "exact split"
    except ModelTooLargeError:
        pass
    try:  # the placement MILP: its proven bound on alpha (never its incumbent) is a valid least time
        r = solve_placement(job, free, instance=instance, options=SolveOptions(time_limit=MILP_SECONDS, threads=1))
    except (ModelTooLargeError, SolverError, SolverUnavailableError):
        r = None
    if r is not None and r.bound is not None and r.bound > 0:
        return min(float(r.bound), float(r.alpha) if r.alpha is not None else math.inf), "exact split"
    return one_server(job.gpus), "relaxed"
