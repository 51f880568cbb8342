"""Paper 002, RAR-DDLS (Yu, Ji, Rajan, Liu, MobiHoc '22): ring-all-reduce jobs that slow each other
when they span servers ((6)-(9)), makespan minimization, SJF-BCO (Alg. 1-3), the exact slotted
optimum and the Lemma 2-4 / Theorem 5-6 checks.

Kind ``"rarddls"`` (objective: makespan, in slots). Importing this package registers what
:mod:`optsched.rarddls.plugin` declares: the kind, the verifier checks, the algorithms
(``rarddls-sjf-bco``, ``rarddls-ff``, ``rarddls-ls``, ``rarddls-rand``, ``rarddls-exact``) and the
suite instances. Pyomo loads inside the exact functions. See ``formulations/rarddls.md``.

>>> from optsched.rarddls import toy_instance, sjf_bco
>>> sjf_bco(toy_instance()).objective
9.0
"""

from optsched.core.plugins import load_plugin
from optsched.rarddls.evaluate import build_schedule, decisions, replay
from optsched.rarddls.exact import solve_exact
from optsched.rarddls.model import KIND, OBJECTIVE, RarInstance, RarJob, toy_instance
from optsched.rarddls.sjfbco import first_fit, list_scheduling, random_schedule, sjf_bco

__all__ = [
    "RarInstance",
    "RarJob",
    "KIND",
    "OBJECTIVE",
    "toy_instance",
    "solve_exact",
    "replay",
    "build_schedule",
    "decisions",
    "sjf_bco",
    "first_fit",
    "list_scheduling",
    "random_schedule",
]

load_plugin(__name__)
