"""A_online (Alg. 1 of paper 001) as a policy of the simulator: :class:`ElasticOnline` releases each
round of :func:`optsched.elastic.primal_dual.a_online`'s plan at its boundary tau_i. Tested in
``tests/elastic/test_policy.py``.
"""

from __future__ import annotations

from typing import Any

from optsched.elastic.model import ElasticInstance
from optsched.elastic.policy_base import ElasticPolicy
from optsched.elastic.primal_dual import a_online
from optsched.elastic.shapes import TOL, Shape
from optsched.exceptions import InfeasibleError, SimulationError
from optsched.sim.registry import forwards_options


@forwards_options(a_online, set_here=("instance",))  # its options are A_online's; get_policy checks them
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
