"""The contention model on the shared simulator: :class:`ContentionRate` (continuous time) and
:class:`ReplayStarts`, a policy that starts each job at a given time on a given placement.

In the simulator a job's work is F_j iterations and its rate is 1/tau_j iterations per slot (no
floor: continuous time, one simulator second = one slot), with tau_j from (8) at the contention
count (6) of the jobs training now. For the same decisions, every job completes no later than
in the slotted model (floor(1/tau) <= 1/tau and completions round up to a slot); as tau_j shrinks relative
to the slot (more, shorter iterations) the slotted completions approach the continuous ones up to the
rounding to the slot end, at most 1 slot (``tests/rarddls/test_policy.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from optsched.core.job import Job
from optsched.rarddls.model import RarInstance
from optsched.sim import Policy, RateModel, Simulator, Start


def _split(placement: Mapping[int, int], gpus: int) -> list[int]:
    return [s for s, y in placement.items() if 0 < y < gpus]


class ContentionRate(RateModel):
    """Rate 1/tau_j (iterations per slot) with tau_j from (6)-(8) among the training jobs.

    Parameters
    ----------
    instance : RarInstance
        Jobs are matched by id.
    """

    corunner_dependent = True

    def __init__(self, instance: RarInstance):
        self.instance = instance
        self._index = {j.id: i for i, j in enumerate(instance.jobs)}
        self._split: dict[Any, list[int]] = {}  # servers where each job was last split (it may have stopped)

    def rate(self, job, placement, sim) -> float:
        i = self._index[job.id]
        mine = _split(placement, job.gpus)
        self._split[job.id] = mine
        p = 0
        if mine:
            counts: dict[int, int] = {}
            for other in sim.training_jobs():
                for s in _split(other.placement or {}, other.gpus):
                    counts[s] = counts.get(s, 0) + 1
            if job not in sim.training_jobs():  # rate asked before the job is listed as training
                for s in mine:
                    counts[s] = counts.get(s, 0) + 1
            p = max(counts.get(s, 0) for s in mine)
        r = sum(1 for y in placement.values() if y > 0)
        return 1.0 / self.instance.tau(i, r, p)

    def affected(self, sim, changed) -> Iterable[Any]:
        """The changed jobs and the training jobs split on a server where a changed job is split."""
        changed = list(changed)
        servers = {s for j in changed for s in _split(j.placement or {}, j.gpus)}
        for j in changed:  # a job that stopped has no placement any more: use the last one we saw
            servers |= set(self._split.get(j.id, ()))
        out = {id(j): j for j in changed}
        for j in sim.training_jobs():
            if servers & set(_split(j.placement or {}, j.gpus)):
                out[id(j)] = j
        return list(out.values())


class ReplayStarts(Policy):
    """Start job ``ids[k]`` at time ``starts[k]`` on ``placements[k]`` (timers), nothing else."""

    def __init__(self, ids: Sequence[Any], starts: Sequence[float], placements: Sequence[Mapping[int, int]]):
        super().__init__()
        self.plan = list(zip(ids, starts, placements, strict=True))

    def on_start(self, sim):
        for jid, t, pl in self.plan:
            sim.set_timer(at=float(t), data=(jid, dict(pl)))
        return

    def on_timer(self, sim, timer):
        jid, pl = timer.data
        return [Start(jid, pl)]


def simulate_decisions(
    instance: RarInstance, starts: Sequence[float], placements: Sequence[Mapping[int, int]]
) -> list[float]:
    """Continuous-time completions (slots) of the given decisions on the shared simulator."""
    jobs = [Job(j.id, work=float(j.iterations), gpus=j.gpus) for j in instance.jobs]
    pol = ReplayStarts([j.id for j in instance.jobs], starts, placements)
    res = Simulator(instance.cluster, jobs, pol, rate_model=ContentionRate(instance), record_log=False).run()
    df = res.jobs_frame().set_index("job_id") if "job_id" in res.jobs_frame().columns else res.jobs_frame()
    return [float(df.loc[j.id, "completion"]) for j in instance.jobs]
