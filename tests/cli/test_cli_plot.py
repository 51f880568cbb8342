"""Issue 28 item 6: ``optsched solve --plot`` and ``optsched verify --plot`` write a Gantt chart
(PNG and SVG) beside the schedule; what cannot be drawn is refused before any work."""

from __future__ import annotations

import json

import pytest

from optsched.cli import main
from optsched.core.registry import AlgorithmSpec

PNG = b"\x89PNG\r\n\x1a\n"


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _pictures(stem):
    png, svg = stem.with_suffix(".png"), stem.with_suffix(".svg")
    return png.read_bytes()[:8] == PNG and "<svg" in svg.read_text()[:2000]


@pytest.mark.parametrize("toy", ["rigid-2x2-five", "elastic-intro", "rarddls-2x2-three"])
def test_solve_plot_writes_a_gantt_chart_into_out(tmp_path, capsys, toy):
    out = tmp_path / "run"
    code, text, _ = run(["solve", f"toy:{toy}", "--out", str(out), "--plot"], capsys)
    assert code == 0 and _pictures(out / "schedule")
    assert "schedule.png" in text
    code, text, _ = run(["solve", f"toy:{toy}", "--out", str(out), "--force", "--plot", "--json"], capsys)
    assert code == 0 and [p.endswith((".png", ".svg")) for p in json.loads(text)["plot"]] == [True, True]


def test_verify_plot_draws_beside_the_schedule_even_when_infeasible(tmp_path, capsys):
    bad = {"jobs": [{"id": j, "segments": [{"start": 0, "end": 1, "placement": {"0": 2}}]} for j in range(5)]}
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    code, text, _ = run(["verify", "toy:rigid-2x2-five", str(p), "--plot"], capsys)
    assert code == 1 and _pictures(tmp_path / "bad")  # over capacity: drawn, edged in red
    assert "[capacity]" in text and "bad.png" in text


def test_plot_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    def refuse(self, *a, **k):
        raise AssertionError("solved before --plot was checked")

    monkeypatch.setattr(AlgorithmSpec, "__call__", refuse)
    code, _, err = run(["solve", "toy:rigid-2x2-five", "--plot"], capsys)
    assert code == 2 and "give --out" in err
    out = tmp_path / "sojourn"
    code, _, err = run(["solve", "toy:sojourn-two-jobs", "--out", str(out), "--plot"], capsys)
    assert code == 2 and "job order without fixed times" in err and not out.exists()
