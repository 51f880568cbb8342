"""CLI and demo on sojourn instances."""

from __future__ import annotations

import json

import optsched
from optsched.cli import main


def test_solve_and_verify_cli(tmp_path, capsys):
    toy = str(optsched.toy_path("sojourn-four-jobs"))
    out = tmp_path / "run"
    assert main(["solve", toy, "--json", "--out", str(out), "--threads", "1", "--time-limit", "20"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["status"] == "optimal" and res["verified"] and abs(res["objective"] - 10.754166666666668) < 1e-9
    assert main(["verify", toy, str(out / "schedule.json"), "--objective", "successful_sojourn_time"]) == 0
    assert main(["solve", toy, "--model", "sojourn-rank"]) == 0


def test_bad_instance_cli(tmp_path, capsys):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"kind": "sojourn", "jobs": [{"sizes": [2, 1], "probs": [0.5, 0.5]}]}))
    assert main(["solve", str(p)]) == 2
    err = capsys.readouterr().err
    assert "strictly increasing" in err and "Traceback" not in err


def test_demo_rows_quick():
    from optsched.sojourn.demo import demo_rows

    rows = demo_rows(quick=True)
    assert rows and all(r["verified"] for r in rows)
    by = {(r["instance"], r["algorithm"]): r for r in rows}
    assert abs(by[("sojourn-two-jobs", "sojourn-sr")]["objective"] - 10) < 1e-12
    for r in rows:
        if r["optimum"] is not None:
            assert r["objective"] >= r["optimum"] * (1 - 1e-9)
