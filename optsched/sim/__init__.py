"""The discrete-event cluster simulator shared by every online policy.

Quick start::

    from optsched.core import Cluster, Job
    from optsched.sim import Simulator, get_policy

    res = Simulator(Cluster.homogeneous(2, 8), jobs, get_policy("srtf")).run()
    res.summary(); res.jobs_frame(); res.plot_cdf()

See ``docs/simulator.md`` for how to write a policy and a rate model, and for the layout of this
package (which module carries what).
"""

from optsched.sim.engine import Simulator, simulate
from optsched.sim.metrics import JOB_COLUMNS, RunRecord, SimResult, replay_log, summarize
from optsched.sim.model.resources import FreeGPUs, FreeResources
from optsched.sim.model.state import (
    DONE,
    FAILED,
    LOADING,
    PENDING,
    PHASES,
    SAVING,
    TRAINING,
    WAITING,
    Phase,
    SimJob,
    Timer,
)
from optsched.sim.policies import (
    FIFO,
    LAS,
    POLICIES,
    SJF,
    SRTF,
    PeriodicSRTF,
    WaitQueue,
    get_policy,
)
from optsched.sim.policy import CancelTimer, Migrate, Policy, Preempt, SetTimer, Start
from optsched.sim.rates import (
    ConstantRate,
    FunctionRate,
    PlacementRate,
    RateModel,
    SplitContentionRate,
)
from optsched.sim.registry import PolicySpec, policy_registry, register_policy
from optsched.sim.view import SimView

__all__ = [
    "Simulator",
    "simulate",
    "SimResult",
    "RunRecord",
    "replay_log",
    "summarize",
    "JOB_COLUMNS",
    "Policy",
    "SimView",
    "Start",
    "Preempt",
    "Migrate",
    "SetTimer",
    "CancelTimer",
    "FIFO",
    "SJF",
    "SRTF",
    "LAS",
    "PeriodicSRTF",
    "POLICIES",
    "get_policy",
    "WaitQueue",
    "register_policy",
    "policy_registry",
    "PolicySpec",
    "FreeResources",
    "RateModel",
    "ConstantRate",
    "PlacementRate",
    "FunctionRate",
    "SplitContentionRate",
    "FreeGPUs",
    "SimJob",
    "Timer",
    "PHASES",
    "Phase",
    "PENDING",
    "WAITING",
    "LOADING",
    "TRAINING",
    "SAVING",
    "DONE",
    "FAILED",
]
