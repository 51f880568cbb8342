"""optsched.plot.files: a figure written whole in each format, its PNG recording its smallest
text, read back without decoding the picture."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from optsched.plot.files import png_text_size, save_figure
from optsched.plot.style import DPI, text_sizes


@settings(max_examples=10, deadline=None)
@given(width=st.floats(2.0, 12.0), sizes=st.lists(st.integers(4, 20), min_size=3, max_size=3))
def test_a_png_records_its_smallest_text_dpi_and_width(tmp_path_factory, width, sizes):
    fig = Figure(figsize=(width, 3))
    ax = fig.add_subplot()
    ax.set_xlabel("x", fontsize=sizes[0])
    ax.set_title("t", fontsize=sizes[1])
    ax.tick_params(labelsize=sizes[2])
    out = tmp_path_factory.mktemp("fig")
    paths = save_figure(fig, out, "f")
    assert [p.name for p in paths] == ["f.png", "f.svg"]
    size, dpi, px = png_text_size(out / "f.png")
    assert size == min(s for s, _ in text_sizes(fig)) == min(sizes)
    assert dpi == pytest.approx(DPI, abs=0.1)
    assert px == pytest.approx(width * DPI, abs=1)


def test_a_png_of_another_writer_records_no_size_and_other_files_are_refused(tmp_path):
    fig = Figure(figsize=(3, 2))
    fig.add_subplot().plot([0, 1])
    fig.savefig(tmp_path / "plain.png", dpi=72)
    assert png_text_size(tmp_path / "plain.png") == (None, pytest.approx(72, abs=0.1), 216)
    (tmp_path / "x.png").write_text("not a picture")
    with pytest.raises(ValueError, match="not a PNG"):
        png_text_size(tmp_path / "x.png")
