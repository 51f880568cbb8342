"""Write a figure to files: each format atomically (never a half-written picture; a full disk
raises :class:`~optsched.exceptions.WriteError` and leaves no file of that name changed). A PNG
records the size of its smallest text (:data:`SMALLEST_TEXT_KEY`), so a page that shows it can
check how large that text is shown (:func:`optsched.plot.style.shown_scale`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from optsched.core.io import atomic_write
from optsched.plot.style import DPI, text_sizes

#: The picture formats optsched writes by default.
FIGURE_FORMATS = ("png", "svg")
#: The PNG text chunk holding the size of the figure's smallest text, in points as drawn ("10").
SMALLEST_TEXT_KEY = "optsched:smallest-text-pt"


def save_figure(fig: Any, out_dir: str | Path, name: str, *, formats: Iterable[str] = FIGURE_FORMATS) -> list[Path]:
    """Write the matplotlib figure ``fig`` as ``out_dir/name.<format>`` for each format.

    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); _ = fig.add_subplot().plot([0, 1], [1, 0])
    >>> [p.name for p in save_figure(fig, tempfile.mkdtemp(), "line")]
    ['line.png', 'line.svg']
    """
    sizes = [size for size, _ in text_sizes(fig)]
    png = {"metadata": {SMALLEST_TEXT_KEY: f"{min(sizes):g}"}} if sizes else {}

    def write(target: Any, fmt: str) -> None:
        fig.savefig(target, format=fmt, dpi=DPI, **(png if fmt == "png" else {}))

    return [atomic_write(Path(out_dir) / f"{name}.{fmt}", lambda t, fmt=fmt: write(t, fmt)) for fmt in formats]


def png_text_size(path: str | Path) -> tuple[float | None, float, int]:
    """``(smallest text in points as drawn, dots per inch, width in pixels)`` of a PNG written by
    :func:`save_figure`; the size is None when the file records none (another writer). Read from
    the file's chunks (IHDR, pHYs, tEXt), without decoding the picture.

    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(5, 3)); _ = fig.add_subplot().set_xlabel("time", fontsize=8)
    >>> png = save_figure(fig, tempfile.mkdtemp(), "f", formats=("png",))[0]
    >>> png_text_size(png)
    (8.0, 120.0, 600)
    """
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    pos, width, dpi, size = 8, 0, 72.0, None
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width = int.from_bytes(body[:4], "big")
        elif kind == b"pHYs" and body[8:9] == b"\x01":  # pixels per metre
            dpi = round(int.from_bytes(body[:4], "big") * 0.0254, 1)
        elif kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            if key.decode("latin-1") == SMALLEST_TEXT_KEY:
                size = float(value.decode("latin-1"))
        elif kind == b"IEND":
            break
        pos += 12 + length
    return size, dpi, width
