"""Paper 001 (Zhou et al., IEEE TCC): online scheduling of heterogeneous elastic ML jobs, PS and
Ring-AllReduce; exact (2) / (8) over the restricted Gamma_j.

Kind ``"elastic"`` (objective: sum_j w_j c_j, slots, minimised). Importing this package registers
what :mod:`optsched.elastic.plugin` declares: the kind, the verifier checks (2a)-(2o), (15a),
(15b), the evaluator, the algorithms, the policies and the suite instances. Pyomo and OR-Tools
load inside the exact functions. See ``formulations/elastic.md``.

>>> from optsched.elastic import toy_instance
>>> toy_instance().n_jobs
2
"""

from optsched.core.plugins import load_plugin
from optsched.elastic.baselines import BASELINES, jain_greedy, run_baseline
from optsched.elastic.cluster import PsType, WorkerType
from optsched.elastic.constants import KIND, OBJECTIVE
from optsched.elastic.direct import solve_direct, solve_direct_maxweight
from optsched.elastic.exact import greedy, solve_exact, solve_maxweight
from optsched.elastic.job import ElasticJob
from optsched.elastic.lp import column_generation, solve_dual9, solve_lp8
from optsched.elastic.model import ElasticInstance, toy_instance
from optsched.elastic.primal_dual import a_maxweight, a_online
from optsched.elastic.schedule import Assignment, ElasticSchedule

__all__ = [
    "solve_exact",
    "solve_maxweight",
    "greedy",
    "solve_direct",
    "solve_direct_maxweight",
    "solve_lp8",
    "solve_dual9",
    "column_generation",
    "a_maxweight",
    "a_online",
    "run_baseline",
    "jain_greedy",
    "BASELINES",
    "ElasticInstance",
    "ElasticJob",
    "ElasticSchedule",
    "Assignment",
    "WorkerType",
    "PsType",
    "KIND",
    "OBJECTIVE",
    "toy_instance",
]

load_plugin(__name__)
