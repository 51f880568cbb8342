"""Real-trace loaders and a calibrated synthetic generator, all returning one job table.

See :mod:`optsched.traces.table` for the columns and units, :mod:`optsched.traces.loaders` for
the mapping of each trace, :mod:`optsched.traces.synthetic` for the generator,
:mod:`optsched.traces.datasets` for shipped data and the public traces fetched on request.

:func:`load_trace` takes a name (``openb``, ``openb-sample``) or a path whose format is detected
from its extension / header (Philly JSON, Helios, Acme, OpenB CSV); PAI needs its job and task
tables: ``load_pai(job, task[, group])``.

Names are imported on first use (PEP 562), so that importing :mod:`optsched.traces.datasets` (the
command line does) does not load NumPy and pandas.

Tested in ``tests/traces/test_exports.py``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "load_trace": "api",
    "detect_format": "api",
    "TRACES": "api",
    "FORMATS": "api",
    "load_philly": "loaders",
    "load_helios": "loaders",
    "load_acme": "loaders",
    "load_pai": "loaders",
    "load_openb": "loaders",
    "openb_cluster": "loaders",
    "OPENB_JOBS": "loaders",
    "OPENB_NODES": "loaders",
    "synthetic_workload": "synthetic",
    "philly_runtimes": "synthetic",
    "acme_outcome_rates": "synthetic",
    "PHILLY_GPU_MIX": "synthetic",
    "TABLE_COLUMNS": "table",
    "to_jobs": "table",
    "read_jobs": "jobs_file",
    "check_job_table": "jobs_file",
    "parse_columns": "jobs_file",
    "SHIPPED": "datasets",
    "DATASETS": "datasets",
    "find_file": "datasets",
    "fetch": "datasets",
}

#: The public names, written out (not computed) so that static readers see them: the API pages of
#: the documentation (griffe) and type checkers, which also read the imports below.
__all__ = [
    "DATASETS",
    "FORMATS",
    "OPENB_JOBS",
    "OPENB_NODES",
    "PHILLY_GPU_MIX",
    "SHIPPED",
    "TABLE_COLUMNS",
    "TRACES",
    "acme_outcome_rates",
    "check_job_table",
    "detect_format",
    "fetch",
    "find_file",
    "load_acme",
    "load_helios",
    "load_openb",
    "load_pai",
    "load_philly",
    "load_trace",
    "openb_cluster",
    "parse_columns",
    "philly_runtimes",
    "read_jobs",
    "synthetic_workload",
    "to_jobs",
]

if TYPE_CHECKING:  # pragma: no cover - the same names as _WHERE, for static readers only
    from optsched.traces.api import FORMATS, TRACES, detect_format, load_trace
    from optsched.traces.datasets import DATASETS, SHIPPED, fetch, find_file
    from optsched.traces.jobs_file import check_job_table, parse_columns, read_jobs
    from optsched.traces.loaders import (
        OPENB_JOBS,
        OPENB_NODES,
        load_acme,
        load_helios,
        load_openb,
        load_pai,
        load_philly,
        openb_cluster,
    )
    from optsched.traces.synthetic import PHILLY_GPU_MIX, acme_outcome_rates, philly_runtimes, synthetic_workload
    from optsched.traces.table import TABLE_COLUMNS, to_jobs


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"optsched.traces.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'optsched.traces' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
