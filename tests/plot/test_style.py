"""optsched.plot.style: the size a figure's texts show at once a page scales the picture to its
column, and the one text size every figure of optsched uses."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from optsched.plot.style import (
    DPI,
    FIGURE_WIDTH,
    MIN_SHOWN_PT,
    NOTEBOOK_DPI,
    NOTEBOOK_WIDTH_PX,
    PAGE_WIDTH_PX,
    PANELS_WIDTH,
    TEXT_SIZE,
    readable,
    shown_points,
    shown_scale,
    text_sizes,
    too_small,
)


@settings(max_examples=60, deadline=None)
@given(
    width_in=st.floats(1.0, 20.0),
    dpi=st.sampled_from([72, 100, 110, 120, 150, 200]),
    column=st.floats(200.0, 1200.0),
)
@example(width_in=PAGE_WIDTH_PX / DPI, dpi=DPI, column=PAGE_WIDTH_PX)  # exactly the column: not shrunk
def test_a_point_shows_at_the_shown_inches_over_the_drawn_inches(width_in, dpi, column):
    """Independently: the picture is width_in * dpi image pixels; the browser shows one CSS pixel
    per image pixel, or the column's width if that is less; 96 CSS pixels make an inch, and a
    point is 1/72 inch both in the figure and on the page."""
    shown_inches = min(width_in * dpi, column) / 96
    assert shown_scale(width_in, dpi=dpi, column_px=column) == pytest.approx(shown_inches / width_in)


def test_every_kind_of_text_is_found_with_its_size():
    fig = Figure(figsize=(5, 4))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label="line")
    ax.set_xlabel("x label", fontsize=11)
    ax.set_ylabel("y label", fontsize=12)
    ax.set_title("title", fontsize=13)
    ax.legend(fontsize=6)
    ax.annotate("note", (0.5, 0.5), fontsize=7)
    ax.tick_params(labelsize=8)
    fig.suptitle("suptitle", fontsize=14)
    found = dict((text, size) for size, text in text_sizes(fig))
    assert {k: found[k] for k in ("x label", "y label", "title", "line", "note", "suptitle")} == {
        "x label": 11,
        "y label": 12,
        "title": 13,
        "line": 6,
        "note": 7,
        "suptitle": 14,
    }
    assert {size for size, text in text_sizes(fig) if text in ("0.0", "1.0")} == {8}  # the tick labels
    assert min(text_sizes(fig))[0] == 6


def test_an_empty_or_hidden_text_is_no_text():
    fig = Figure()
    ax = fig.add_subplot()
    ax.set_title("")
    ax.text(0.5, 0.5, "hidden", fontsize=3).set_visible(False)
    assert all(text.strip() and text != "hidden" for _, text in text_sizes(fig))


def test_readable_raises_every_small_text_and_keeps_larger_ones():
    fig = Figure(figsize=(5, 4))
    ax = fig.add_subplot()
    ax.plot([0, 1e6], [0, 1], label="line")
    ax.set_xlabel("x", fontsize=6)
    ax.set_title("big", fontsize=16)
    ax.legend(fontsize=5)
    ax.text(0.1, 0.1, "note", fontsize=4)
    readable(ax)
    sizes = dict((text, size) for size, text in text_sizes(fig))
    assert min(sizes.values()) >= TEXT_SIZE
    assert sizes["big"] == 16


def test_a_wide_figure_is_too_small_and_named_a_narrow_one_is_not():
    wide = Figure(figsize=(14, 4))
    wide.add_subplot().set_xlabel("time (s)", fontsize=10)
    small = too_small(wide)
    assert small and ("time (s)" in {t for _, t in small})
    assert all(pt == pytest.approx(10 * shown_scale(14), abs=0.06) for pt, _ in small if _ == "time (s)")
    narrow = Figure(figsize=(FIGURE_WIDTH, 4))
    readable(narrow.add_subplot())
    assert too_small(narrow) == []
    assert too_small(narrow, dpi=NOTEBOOK_DPI, column_px=NOTEBOOK_WIDTH_PX) == []
    assert [pt for pt, _ in shown_points(narrow)] == sorted(pt for pt, _ in shown_points(narrow))


@pytest.mark.parametrize(
    ("width", "dpi", "column"),
    [
        (FIGURE_WIDTH, DPI, PAGE_WIDTH_PX),  # a file on a page
        (FIGURE_WIDTH, NOTEBOOK_DPI, NOTEBOOK_WIDTH_PX),  # inline in a notebook's page
        (PANELS_WIDTH, DPI, PAGE_WIDTH_PX),  # two panels in a file on a page
    ],
)
def test_the_default_sizes_show_at_9_points_or_more(width, dpi, column):
    assert TEXT_SIZE * shown_scale(width, dpi=dpi, column_px=column) >= MIN_SHOWN_PT
