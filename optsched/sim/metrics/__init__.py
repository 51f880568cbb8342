"""Results of a simulation: the per-job table, summary statistics, utilization, plots
(:mod:`.result`: :class:`SimResult`), the columns and :func:`summarize` (:mod:`.summary`), and the
table rebuilt from the event log alone (:mod:`.replay`: :func:`replay_log`).
"""

from optsched.sim.metrics.replay import replay_log
from optsched.sim.metrics.result import RunRecord, SimResult
from optsched.sim.metrics.summary import JOB_COLUMNS, summarize

__all__ = ["SimResult", "RunRecord", "replay_log", "summarize", "JOB_COLUMNS"]
