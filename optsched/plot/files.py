"""Write a figure to files: each format atomically (never a half-written picture; a full disk
raises :class:`~optsched.exceptions.WriteError` and leaves no file of that name changed)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from optsched.core.io import atomic_write

#: The picture formats optsched writes by default.
FIGURE_FORMATS = ("png", "svg")


def save_figure(fig: Any, out_dir: str | Path, name: str, *, formats: Iterable[str] = FIGURE_FORMATS) -> list[Path]:
    """Write the matplotlib figure ``fig`` as ``out_dir/name.<format>`` for each format.

    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); _ = fig.add_subplot().plot([0, 1], [1, 0])
    >>> [p.name for p in save_figure(fig, tempfile.mkdtemp(), "line")]
    ['line.png', 'line.svg']
    """
    return [
        atomic_write(Path(out_dir) / f"{name}.{fmt}", lambda t, fmt=fmt: fig.savefig(t, format=fmt, dpi=120))
        for fmt in formats
    ]
