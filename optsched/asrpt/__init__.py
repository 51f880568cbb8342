"""Paper 000, A-SRPT (Luo, Liu, Lee, Shroff): mixed-parallelism jobs, per-iteration time alpha_i(x),
Heavy-Edge GPU mapping, exact placement, exact Problem (8) and the Lemma 1-3 / Theorem 1 bounds.

Kind ``"asrpt"``. See ``formulations/asrpt.md``. Importing this package registers what
:mod:`optsched.asrpt.plugin` declares. Heavy dependencies (pyomo, ortools, networkx) load inside
the functions that need them.
"""

from optsched.asrpt.exact import solve_exact
from optsched.asrpt.model import KIND, AsrptInstance, AsrptJob, Stage, toy_instance
from optsched.asrpt.timing import alpha, alpha_max, stage_times
from optsched.core.plugins import load_plugin

__all__ = [
    "solve_exact",
    "AsrptInstance",
    "AsrptJob",
    "Stage",
    "alpha",
    "alpha_max",
    "stage_times",
    "KIND",
    "toy_instance",
]

load_plugin(__name__)
