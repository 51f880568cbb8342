"""``--plot`` of ``optsched solve`` and ``optsched verify``: a Gantt chart of the schedule
(:func:`optsched.plot.plot_schedule`), written as PNG and SVG beside ``schedule.json``.

Everything that can be checked is checked before any work: that the kind's schedules can be
drawn (a sojourn schedule is a job order without times: no Gantt chart) and that the files can
be written.

Tested in ``tests/cli/test_cli_plot.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optsched.exceptions import InvalidOptionError

FORMATS = ("png", "svg")


def check_plot(kind: str, stem: Path | None = None) -> None:
    """Raise :class:`InvalidOptionError` unless a ``kind`` schedule has a Gantt chart and (with
    ``stem``) it can be written as ``stem.png`` and ``stem.svg``."""
    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.core import get_kind
    from optsched.core.output import check_writable_file

    cls = getattr(get_kind(kind)["cls"], "schedule_class", None)
    if cls is not None and not hasattr(cls, "gantt_schedule"):
        raise InvalidOptionError(
            f"--plot draws a Gantt chart (GPUs of each server over time); a {kind!r} schedule is "
            f"{'a job order without fixed times (the job sizes are random)' if kind == 'sojourn' else 'not one'}, so "
            f"it has none. Drop --plot."
        )
    for fmt in FORMATS if stem is not None else ():
        check_writable_file(stem.with_suffix(f".{fmt}"), option="--plot")


def write_gantt(instance: Any, schedule: Any, stem: Path, *, title: str) -> list[Path]:
    """Draw ``schedule`` of ``instance`` and write ``stem.png`` and ``stem.svg``."""
    from matplotlib.figure import Figure

    # deferred: ``optsched --help`` imports every command and loads no NumPy, pandas or matplotlib
    from optsched.plot import plot_schedule, save_figure
    from optsched.plot.style import FIGURE_WIDTH

    cluster = getattr(instance, "cluster", None)
    if hasattr(schedule, "gantt_schedule"):  # a kind's own schedule (elastic): as run segments; its
        schedule, cluster = schedule.gantt_schedule(instance), None  # servers have resources, not GPU rows
    n_servers = cluster.n_servers if cluster is not None else len(getattr(instance, "servers", ())) or 1
    fig = Figure(figsize=(FIGURE_WIDTH, 1.4 + 0.9 * n_servers))
    plot_schedule(schedule, cluster, ax=fig.add_subplot(), title=title)
    return save_figure(fig, stem.parent, stem.name, formats=FORMATS)
