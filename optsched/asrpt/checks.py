"""Verifier checks for kind ``asrpt``: the shared cluster checks plus ``non_preemptive`` and
``iteration_time`` (each job's single segment lasts at least n_i alpha_i for its server counts).

Tested in ``tests/asrpt/test_problem8.py`` and ``tests/verify/test_common_suite.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from optsched.asrpt.formulation import best_split
from optsched.verify import Violation

TOL = 1e-6


def check_iteration_time(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(7) A segment on server counts a lasts >= n_i * min_x alpha_i(x) over splits x with those counts.

    The schedule stores GPUs per server, not the stage split, so the check uses the best split for
    those counts (computed here by enumeration, independent of any solver's report)."""
    n = instance.cluster.n_servers
    for j in instance.jobs:
        for seg in schedule.segments(j.id) if j.id in schedule else []:
            if seg.gpus != j.gpus or any(m >= n for m in seg.placement):
                continue  # reported by 'demand'
            if any(c > instance.g for c in seg.placement.values()):
                continue  # reported by 'capacity'
            counts = [seg.placement.get(m, 0) for m in range(n)]
            _, a = best_split(j, counts, instance)
            need = j.iterations * a
            if seg.duration < need - TOL * max(1.0, need):
                yield Violation(
                    "bottleneck",
                    f"{j.label} runs {seg.duration:g} s on {dict(seg.placement)}; its "
                    f"{j.iterations} iterations need >= {need:g} s (alpha = {a:g} s).",
                    job=j.id,
                    time=seg.start,
                )
