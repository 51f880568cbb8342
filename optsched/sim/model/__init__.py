"""What the simulator simulates: jobs and their phases (:mod:`.state`), the servers' free GPUs
and other resources (:mod:`.resources`), and the conversion of the input (core ``Job`` lists or
job tables) into simulated jobs (:mod:`.inputs`).

The lowest layer of :mod:`optsched.sim`: it imports nothing else of the simulator. The engines,
the policies and the results build on it.
"""

from optsched.sim.model.inputs import count_jobs, is_table, job_table_columns, make_jobs, table_columns
from optsched.sim.model.resources import FreeGPUs, FreeResources, ids_of
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
    "PHASES",
    "PENDING",
    "WAITING",
    "LOADING",
    "TRAINING",
    "SAVING",
    "DONE",
    "FAILED",
    "FreeGPUs",
    "FreeResources",
    "ids_of",
    "make_jobs",
    "table_columns",
    "is_table",
    "job_table_columns",
    "count_jobs",
]
