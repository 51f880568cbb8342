"""Pictures readable where they are shown: one text size for every figure optsched draws, and the
size a figure's smallest text has once a page scales the picture to its width.

A page shows a picture at its natural size (one image pixel per CSS pixel) or, when it is wider
than the page's column, shrunk to the column. A text of ``f`` points in a figure drawn at ``dpi``
dots per inch then shows at ``f * dpi / 96 * min(1, column / (width_in * dpi))`` points (CSS:
96 px to the inch, 72 pt to the inch): :func:`shown_points`. Tested in ``tests/plot/test_style.py``.
"""

from __future__ import annotations

from typing import Any

#: The resolution pictures are written at (:func:`optsched.plot.save_figure`).
DPI = 120
#: The width of the documentation site's text column on a 1,280-px window (CSS px; measured on
#: the built site: mkdocs-material's article is 688 px wide there; a little less is assumed).
PAGE_WIDTH_PX = 680
#: The width of a notebook's output column on that page (CSS px; measured on the built site:
#: 584 px), where notebooks draw at matplotlib's inline resolution.
NOTEBOOK_WIDTH_PX = 584
NOTEBOOK_DPI = 100
#: The smallest text a reader should meet, in points as shown.
MIN_SHOWN_PT = 9.0
#: The size of every text of optsched's figures (labels, ticks, legends, titles, annotations).
TEXT_SIZE = 10
#: The default width of optsched's figures (inches; matplotlib's own default): at :data:`DPI`
#: and at the notebook's resolution, a :data:`TEXT_SIZE` text shows at 9.5 pt or more.
FIGURE_WIDTH = 6.4
#: The width of a picture of two panels side by side written as a file (inches): the widest whose
#: :data:`TEXT_SIZE` texts show at 9 pt or more in the page's column at :data:`DPI` (10.1 pt).
PANELS_WIDTH = 7.0


def readable(ax: Any) -> Any:
    """Set every text of ``ax`` (tick labels, axis labels, title, legend, annotations) to at
    least :data:`TEXT_SIZE` points; returns ``ax``. Ticks made later (at draw time) take the
    size too.

    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> _ = ax.plot([0, 1], [0, 1], label="x"); _ = ax.legend(fontsize=6)
    >>> readable(ax).get_legend().get_texts()[0].get_fontsize()
    10.0
    """
    from matplotlib.text import Text

    ax.tick_params(axis="both", which="both", labelsize=TEXT_SIZE)
    for axis in (ax.xaxis, ax.yaxis):
        axis.label.set_fontsize(max(TEXT_SIZE, axis.label.get_fontsize()))
        axis.get_offset_text().set_fontsize(TEXT_SIZE)
    for t in ax.findobj(Text):
        if t.get_fontsize() < TEXT_SIZE:
            t.set_fontsize(TEXT_SIZE)
    return ax


def text_sizes(fig: Any) -> list[tuple[float, str]]:
    """(size in points as drawn, text) of every visible, non-empty text of ``fig``: tick labels,
    axis labels, titles, legends, annotations. The figure is drawn first (ticks exist only then).

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot(); _ = ax.set_xlabel("time", fontsize=7)
    >>> min(text_sizes(fig))
    (7.0, 'time')
    """
    from matplotlib.text import Text

    fig.draw_without_rendering()
    return [
        (float(t.get_fontsize()), t.get_text()) for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
    ]


def shown_scale(width_in: float, *, dpi: float = DPI, column_px: float = PAGE_WIDTH_PX) -> float:
    """Points as shown per point as drawn, for a picture ``width_in`` inches wide drawn at ``dpi``
    and shown in a column ``column_px`` CSS pixels wide.

    >>> round(shown_scale(7.0), 3)  # 840 px shrunk to 680: 1.25 * 680 / 840
    1.012
    >>> shown_scale(4.0)  # 480 px, shown at its natural size: 120 / 96
    1.25
    """
    return dpi / 96 * min(1.0, column_px / (width_in * dpi))


def shown_points(
    fig: Any, *, dpi: float = DPI, column_px: float = PAGE_WIDTH_PX, width_in: float | None = None
) -> list[tuple[float, str]]:
    """(points as shown, text) of every text of ``fig`` (:func:`text_sizes`), smallest first,
    for the picture drawn at ``dpi`` and shown in a column ``column_px`` wide. ``width_in``: the
    picture's width when it is not the figure's (a tight bounding box).

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(14, 4)); _ = fig.add_subplot().set_title("cramped", fontsize=10)
    >>> round(shown_points(fig)[0][0], 2)  # 10 pt in 1,680 px shrunk to 680
    5.06
    """
    scale = shown_scale(width_in or fig.get_figwidth(), dpi=dpi, column_px=column_px)
    return sorted((float(size * scale), text) for size, text in text_sizes(fig))


def too_small(
    fig: Any, *, dpi: float = DPI, column_px: float = PAGE_WIDTH_PX, width_in: float | None = None
) -> list[tuple[float, str]]:
    """The texts of ``fig`` shown below :data:`MIN_SHOWN_PT` (:func:`shown_points`), rounded to
    0.1 pt, each text cut to 30 characters; empty when every text is readable."""
    return [
        (round(pt, 1), text[:30])
        for pt, text in shown_points(fig, dpi=dpi, column_px=column_px, width_in=width_in)
        if pt < MIN_SHOWN_PT - 1e-9
    ]
