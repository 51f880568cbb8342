"""The simulated jobs and timers, at the path code imports them from: the module is
:mod:`optsched.sim.model.state`."""

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

__all__ = [
    "SimJob",
    "Timer",
    "Phase",
    "WAITING",
    "LOADING",
    "TRAINING",
    "SAVING",
    "DONE",
    "FAILED",
    "PENDING",
    "PHASES",
]
