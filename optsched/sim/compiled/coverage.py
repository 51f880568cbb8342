"""What the compiled kernel covers, and why not the rest (no numba here).

The kernel (:mod:`optsched.sim.compiled.kernel`) replays GPU-only jobs at a constant rate under
the baselines FIFO, SJF, SRTF, periodic SRTF and LAS (every placement rule but ``random``, backfill
on or off, rollback, both ``reserve`` modes) and Lazer with a fixed deferral X (X = 0 included, both
``secured`` modes; its ``decisions`` list is not kept), with per-job load and save times (numbers: the
simulator's options or the jobs' own ``load_time`` / ``save_time``) and both ``preempt_loading``
modes, and keeps the event log and the segments. :func:`unsupported` names what of a simulation
it does not cover; each item falls back to the Python engine with ``engine="auto"``:

- other policies and subclasses of these: their hooks are Python code (a policy class declares
  its compiled counterpart with ``compiled_kind``); SJF with ``size_attr`` (a predicted size);
  Lazer with a deferral chooser other than a fixed X (the BO predictor, the oracle: Python code);
- load or save times given as functions of the job and its placement: Python calls;
- rate models other than :class:`~optsched.sim.rates.ConstantRate`: Python objects asked per start
  or per event;
- stages, ``terminate_after``, slotted time, other resources, GPU ids named by a policy: engine
  features with their own state and rules;
- the ``random`` placement: it draws from the simulator's NumPy generator, whose stream the kernel
  would have to reproduce draw by draw;
- ``time_decisions=True``: the wall clock of each batch, Python work per event;
- servers of more than 62 GPUs (free-GPU counts are bits of a 64-bit mask).
"""

from __future__ import annotations

from typing import Any

from optsched.sim.compiled.layout import KIND_CODES, MAX_GPUS_PER_SERVER, RULE_CODES
from optsched.sim.model.inputs import is_table
from optsched.sim.policy import compiled_kind

#: "auto" uses the kernel from this many jobs on: below it, numba's import and the cached kernel's
#: load (about 0.5 s of CPU once per process) would cost more than the Python engine's whole run
AUTO_MIN_JOBS = 5_000
#: set (to anything but "" or "0") to turn the compiled kernel off
DISABLE_ENV = "OPTSCHED_NO_KERNEL"
#: the policy classes the kernel implements, by their declared ``compiled_kind``
KINDS = tuple(KIND_CODES)
#: the placement rules the kernel implements
RULES = tuple(RULE_CODES)


def unsupported(
    sim: Any, jobs: Any, *, load_time: Any = 0.0, save_time: Any = 0.0, stages: Any = None, terminate_after: Any = None
) -> list[str]:
    """What of this simulation the compiled kernel does not cover (empty: it covers it all).

    ``sim`` is the Simulator's checked options (:class:`~optsched.sim.options.SimOptions`),
    ``jobs`` its input, the rest its options.
    """
    why = []
    pol = sim.policy
    if compiled_kind(pol) not in KINDS:
        why.append(
            f"policy {type(pol).__name__} (the kernel has FIFO, SJF, SRTF, periodic SRTF, LAS and Lazer; a policy "
            f"class declares its counterpart with `compiled_kind`)"
        )
    else:
        if compiled_kind(pol) == "lazer" and pol.compiled_deferral() is None:
            why.append(f"Lazer with the deferral chooser {pol.deferral!r} (the kernel has a fixed X only)")
        if getattr(pol, "size_attr", None) is not None:
            why.append("SJF with size_attr (a predicted size)")
        if pol.placement not in RULES:
            why.append(f"placement {pol.placement!r} (it draws from the simulator's random generator)")
        if getattr(pol, "gpu_ids", False):
            why.append("a policy that names GPU ids")
    if compiled_kind(sim.rate_model) != "constant":
        why.append(f"rate model {type(sim.rate_model).__name__} (the kernel has ConstantRate only)")
    if callable(load_time) or callable(save_time):
        why.append("load_time/save_time functions (give numbers, or the jobs' own load_time/save_time)")
    if stages:
        why.append("stages (checkpoints)")
    if terminate_after:
        why.append("terminate_after")
    if sim.slot is not None:
        why.append("slot (slotted time)")
    if sim.time_decisions:
        why.append("time_decisions=True")
    servers = sim.cluster.servers
    if any(srv.resources for srv in servers):
        why.append("servers with other resources")
    if max((srv.gpus for srv in servers), default=0) > MAX_GPUS_PER_SERVER:
        why.append(f"servers of more than {MAX_GPUS_PER_SERVER} GPUs")
    if not is_table(jobs):
        try:
            listed = list(jobs)
        except TypeError:
            listed = []  # make_jobs refuses it with the right message
        if any(getattr(j, "resources", None) for j in listed):
            why.append("jobs with other resources")
        if any(len((getattr(j, "attrs", None) or {}).get("stages") or ()) > 1 for j in listed):
            why.append("stages (checkpoints)")
    return why
