"""Every registered paper reproduction runs in its --quick form and writes its tables, and the
pictures of the tables that stand for the paper's figures and tables (PNG and SVG).

Reproductions whose quick form is declared longer than 90 s run only with ``make test-slow``.

``make test`` builds the documentation site first, and its gallery runs each of these
reproductions with ``--quick`` (and fails the build on a figure that could not be drawn); with
``OPTSCHED_SITE_DIR`` set, this test checks the folder that run wrote (the site's
``gallery/reproduce/<name>/``) instead of running the reproduction a second time.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.cli import main
from optsched.experiments.figures import FIGURES, figure_spec
from optsched.experiments.registry import reproductions

CASES = [
    pytest.param(r.name, id=r.name, marks=[pytest.mark.slow] if (r.quick_seconds or 0) > 90 else [])
    for r in reproductions()
]


def test_some_reproductions_are_registered():
    names = [r.name for r in reproductions()]
    for name in ("sojourn-tables", "asrpt-table2", "asrpt-fig6-9", "rarddls-sec7", "lazer"):
        assert name in names


def _run_by_the_site(name: str) -> Path | None:
    """The folder the site's gallery wrote for ``optsched reproduce NAME --quick``, if any."""
    site = os.environ.get("OPTSCHED_SITE_DIR")
    folder = Path(site) / "gallery" / "reproduce" / name if site else None
    return folder if folder is not None and any(folder.glob("*.csv")) else None


@pytest.mark.parametrize("name", CASES)
def test_quick_reproduction_writes_tables_and_figures(name, tmp_path, capsys):
    out = _run_by_the_site(name)
    if out is None:
        out = tmp_path / "out"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert main(["reproduce", name, "--quick", "--quiet", "--out", str(out)]) == 0
        # each table that stands for a paper figure or table has its picture beside it
        assert not [w for w in caught if "could not be drawn" in str(w.message)]
    files = list(out.glob("*.csv"))
    assert files, f"{name} wrote no table"
    assert all(f.stat().st_size > 0 for f in files)
    drawn = [f.stem for f in files if figure_spec(name, f.stem) is not None]
    assert drawn, f"{name} wrote no figure"
    for stem in drawn:
        png, svg = out / f"{stem}.png", out / f"{stem}.svg"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", stem
        assert "<svg" in svg.read_text()[:2000], stem
    assert {p.stem for p in out.glob("*.png")} == set(drawn)  # nothing for raw runs, claims, cells


def test_every_figure_is_named_after_a_table_of_its_reproduction():
    for repro, specs in FIGURES.items():
        assert repro in {r.name for r in reproductions()}, repro
        for key in specs:
            assert key.startswith(
                ("fig", "table", "sojourn_", "slowdown", "sensitivity", "deferral", "testbed", "base_")
            ), key


@settings(max_examples=12, deadline=None)
@given(
    panels=st.integers(1, 5),
    series=st.integers(1, 9),
    kind=st.sampled_from(["lines", "bars"]),
    paper=st.booleans(),
)
def test_a_reproductions_figure_shows_its_texts_at_9_points_or_more_on_the_gallery(panels, series, kind, paper):
    """However many panels (one per facet value) and series (groups, each with the paper's
    numbers beside it or not), every text shows at 9 pt or more once the gallery shows the
    picture in its text column (optsched.plot.style)."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from optsched.experiments.figures import Plot, draw
    from optsched.plot.style import too_small

    rows = [
        {"panel": f"p{k}", "policy": f"policy-{g}", "load": x, "jct": 1.0 + g + x, "jct_paper": 2.0 + g}
        for k in range(panels)
        for g in range(series)
        for x in (0.5, 0.7, 0.9)
    ]
    spec = Plot(
        x="load",
        y="jct",
        kind=kind,
        group="policy",
        facet="panel",
        paper="jct_paper" if paper else None,
        title="mean JCT",
    )
    fig = draw(pd.DataFrame(rows), spec)
    assert too_small(fig) == []
