"""The simulator's input conversion, at the path code imports it from: the module is
:mod:`optsched.sim.model.inputs`."""

from optsched.sim.model.inputs import (
    check_unique_ids,
    count_jobs,
    is_table,
    job_table_columns,
    make_jobs,
    table_columns,
)

__all__ = ["make_jobs", "table_columns", "is_table", "job_table_columns", "count_jobs", "check_unique_ids"]
