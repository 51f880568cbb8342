"""`optsched solve` says which phase ran out of the time limit and how long each phase took
(result JSON, --json, the table), and writes its best schedule when the limit is reached."""

from __future__ import annotations

import importlib
import json

from optsched.cli import main

TOY = "toy:rigid-2x2-five"
rexact = importlib.import_module("optsched.rigid.exact")
rti = importlib.import_module("optsched.rigid.time_indexed")


def test_json_has_the_phases_and_no_limit_reached(capsys, tmp_path):
    assert main(["solve", TOY, "--backend", "cpsat", "--json", "-q", "--out", str(tmp_path / "o")]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["status"] == "optimal" and res["limit_reached_in"] is None
    assert list(res["phases"])[:2] == ["starting", "reading the instance"]
    assert {"warm start (list scheduling)", "building the model (cpsat)", "certifying", "verifying"} <= set(
        res["phases"]
    )
    written = json.loads((tmp_path / "o" / "result.json").read_text())
    assert written["limit_reached_in"] is None and "reading the instance" in written["phases"]


def test_a_phase_cut_for_time_is_named_and_the_schedule_written(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(rti, "BUILD_SECONDS_PER_NONZERO", 1.0)  # no time-indexed model fits in 30 s
    out = tmp_path / "o"
    assert main(["solve", TOY, "--backend", "highs", "--time-limit", "30", "-q", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "time limit (30 s) reached while building the model (highs): the warm start's schedule." in text
    written = json.loads((out / "result.json").read_text())
    assert written["status"] == "feasible" and written["limit_reached_in"] == "building the model (highs)"
    assert (out / "schedule.json").is_file() and written["verified"]
