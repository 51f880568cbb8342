"""No input to the command line produces a traceback: hypothesis draws commands with options
from pools of good, bad and awkward values (zero, negative, tiny, huge, NaN, infinite, text where a
number goes, empty lists, unknown names, files that are missing, folders, empty, nested 100,000
deep or with a byte-order mark) and runs them in-process. Every run ends with exit 0, 1 or 2 and,
when it fails, one line that starts with ``optsched: error:`` (or argparse's usage error).

Sizes stay small (a few dozen jobs, time limits of seconds): the point is the answer to each
input, not the work."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import optsched
from optsched.cli import main

TOY = "toy:rigid-2x2-five"

NUMBERS = ["0", "-1", "1e-9", "0.5", "1", "3", "1e9", "1e308", "nan", "inf", "-inf", "abc", "", "1,5", "0x10"]
SMALL_INTS = ["0", "-1", "1", "2", "4", "30", "1.5", "abc", ""]
TEXT = ["", " ", ",,", "nope", "fifo", "all", "diagonal", "é", "a" * 300]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("fuzz")
    (d / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "bom.json").write_bytes(b"\xef\xbb\xbf" + optsched.toy_path("rigid-2x2-five").read_bytes())
    (d / "empty.json").write_text("")
    (d / "list.json").write_text("[1, 2, 3]")
    (d / "folder").mkdir()
    (d / "full").mkdir()
    (d / "full" / "x.txt").write_text("x")
    (d / "jobs.csv").write_text(
        "job_id,arrival,gpus,duration,model,status\n"
        + "".join(
            f"j{i},{i * 7},{1 + i % 4},{30 + 11 * i},resnet50,{'failed' if i % 3 else 'completed'}\n" for i in range(30)
        )
    )
    (d / "dup.csv").write_text("job_id,arrival,gpus,duration\na,0,1,5\na,1,1,5\n")
    (d / "bad.csv").write_text("arrival,gpus,duration\n0,x,5\n")
    (d / "nohead.csv").write_text("")
    sched = d / "schedule.json"
    assert main(["solve", TOY, "--out", str(d / "solved"), "--quiet"]) == 0
    sched.write_text((d / "solved" / "schedule.json").read_text())
    return {
        "toy": TOY,
        "name?": "toy:no-such-instance",
        "missing": str(d / "missing.json"),
        "nested": str(d / "nested.json"),
        "bom": str(d / "bom.json"),
        "empty": str(d / "empty.json"),
        "list": str(d / "list.json"),
        "folder": str(d / "folder"),
        "full": str(d / "full"),
        "jobs": str(d / "jobs.csv"),
        "dup": str(d / "dup.csv"),
        "bad": str(d / "bad.csv"),
        "nohead": str(d / "nohead.csv"),
        "schedule": str(sched),
        "root": str(d),
    }


def _out(draw, f) -> list[str]:
    kind = draw(st.sampled_from(["none", "new", "full", "file", "folder"]))
    if kind == "none":
        return []
    path = {
        "new": str(Path(f["root"]) / f"out-{draw(st.integers(0, 10**9))}"),
        "full": f["full"],
        "file": f["jobs"],
        "folder": f["folder"],
    }[kind]
    return ["--out", path] + (["--force"] if draw(st.booleans()) and kind != "full" else [])


def _opts(draw, pools: dict[str, list[str]]) -> list[str]:
    """A few options, each with a value from its pool (a flag when the pool is None)."""
    names = draw(st.lists(st.sampled_from(sorted(pools)), max_size=4, unique=True))
    argv: list[str] = []
    for n in names:
        argv += [n] if pools[n] is None else [n, draw(st.sampled_from(pools[n]))]
    return argv


@st.composite
def solve_argv(draw, f):
    inst = f[draw(st.sampled_from(["toy", "toy", "name?", "missing", "nested", "bom", "empty", "list", "folder"]))]
    pools = {
        "--model": ["rigid-exact", "nope", ""],
        "--backend": ["highs", "cpsat", "nope", "", "gurobi"],
        "--time-limit": ["2", "0", "-1", "nan", "inf", "1e-9", "abc"],
        "--gap": ["0", "0.5", "1", "-1", "nan"],
        "--threads": SMALL_INTS,
        "--seed": ["0", "-1", "7", "1e20", "abc"],
        "--write-model": [str(Path(f["root"]) / "m.lp"), str(Path(f["root"]) / "m.txt"), f["folder"]],
        "--plot": None,
        "--json": None,
        "--quiet": None,
    }
    return ["solve", inst, *_opts(draw, pools), *_out(draw, f)]


@st.composite
def verify_argv(draw, f):
    inst = f[draw(st.sampled_from(["toy", "name?", "missing", "bom"]))]
    sched = f[draw(st.sampled_from(["schedule", "schedule", "missing", "nested", "bom", "empty", "list", "folder"]))]
    pools = {"--objective": ["makespan", "bogus", "", "total_weighted_completion_time"], "--claimed": NUMBERS}
    pools["--json"] = None
    return ["verify", inst, sched, *_opts(draw, pools)]


@st.composite
def simulate_argv(draw, f):
    src = draw(st.sampled_from(["synthetic", "openb-sample", "jobs", "dup", "bad", "nohead", "missing", "folder"]))
    if src in ("synthetic", "openb-sample"):
        head = ["--trace", src, "--jobs", "40"]
    elif src in ("missing", "folder"):
        head = ["--trace", f[src]]
    else:
        head = ["--jobs-csv", f[src]]
    pools = {
        "--policy": [
            "fifo",
            "srtf",
            "las",
            "srtf-periodic",
            "nope",
            "",
            "sojourn-online-rank",
            "elastic-fifo",
            "lazer",
        ],
        "--placement": ["consolidate", "whole_node", "diagonal"],
        "--period": NUMBERS,
        "--servers": SMALL_INTS,
        "--gpus-per-server": SMALL_INTS,
        "--load": NUMBERS,
        "--load-time": NUMBERS,
        "--save-time": NUMBERS,
        "--max-jobs": SMALL_INTS,
        "--columns": ["arrival=submit", "nope=x", "gpus=", ",,", ""],
        "--engine": ["auto", "python", "compiled", "nope"],
        "--out-format": ["csv", "parquet", "xml"],
        "--arrivals": ["poisson", "trace"],
        "--no-backfill": None,
        "--skip-oversized": None,
        "--json": None,
    }
    argv = ["simulate", *head, *_opts(draw, pools), *_out(draw, f)]
    if "--servers" not in argv and draw(st.booleans()):
        argv += ["--servers", "4"]
    return argv


@st.composite
def compare_argv(draw, f):
    src = draw(st.sampled_from(["synthetic", "openb-sample", "jobs", "dup", "bad", "missing"]))
    if src == "synthetic":
        head = ["--trace", "synthetic", "--servers", "4", "--jobs", "40", "--max-duration", "600"]
    elif src == "openb-sample":
        head = ["--trace", "openb-sample", "--jobs", "30", "--servers", "2"]
    elif src == "missing":
        head = ["--trace", f["missing"]]
    else:
        head = ["--jobs-csv", f[src]]
    pools = {
        "--policies": [
            "",
            ",,",
            "fifo",
            "fifo,srtf",
            "nope",
            "fifo,nope",
            "asrpt-a-srpt",
            "asrpt-a-srpt-backfill",
            "sojourn-online-rank",
            "lazer",
        ],
        "--placement": ["consolidate", "diagonal", ""],
        "--servers": SMALL_INTS,
        "--gpus-per-server": SMALL_INTS,
        "--load": NUMBERS,
        "--max-duration": NUMBERS,
        "--seeds": ["0", "1", "2", "-1", "x"],
        "--overheads": ["model", "none", "nope"],
        "--load-base": NUMBERS,
        "--elastic-slot": NUMBERS,
        "--asrpt-nic-gbps": NUMBERS,
        "--format": ["csv", "json", "xml"],
        "--columns": ["arrival=submit", "nope=x"],
        "--json": None,
    }
    argv = ["compare", *head, *_opts(draw, pools), *_out(draw, f)]
    if "--policies" not in argv:
        argv += ["--policies", "fifo,srtf"]
    return argv


@st.composite
def other_argv(draw, f):
    return draw(
        st.sampled_from(
            [
                ["info", "--json"],
                ["instances", "--kind", draw(st.sampled_from(TEXT))],
                ["instances", "--path", draw(st.sampled_from(["toy:nope", "", TOY, "nope"]))],
                ["data", "path", "nope"],
                ["data", "fetch"],
                ["reproduce", draw(st.sampled_from(["nope", "", "sojourn-tables"])), "--seeds", "0"],
                ["reproduce", "--list"],
                ["demo", "--only", draw(st.sampled_from(["nope", "", "rigid,sojourn"])), "--format", "xml"],
                ["nope"],
                [],
            ]
        )
    )


def _check(argv, capsys) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    if code != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("optsched: error:")]
        usage = any(ln.startswith("usage:") for ln in lines + out.splitlines())  # argparse, or no command
        assert errors or usage or code == 1, (argv, err)
        assert len(errors) <= 1, (argv, err)
        for ln in errors:
            assert len(ln) < 2500, (argv, len(ln))  # messages are cut to a readable length
            assert not re.search(r"\bmax_time=|\bmax_events=|run\(", ln), (argv, ln)  # the CLI's words, not Python's
    if code == 0 and "--json" in argv and out.strip():
        json.loads(out)


# no shrinking: an example costs up to seconds, and the failing command line is in the message
_NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]
FUZZ = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), phases=_NO_SHRINK)
FUZZ_LONG = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), phases=_NO_SHRINK)


@FUZZ
@given(data=st.data())
def test_no_input_gives_a_traceback(files, capsys, data):
    argv = data.draw(
        st.one_of(solve_argv(files), verify_argv(files), simulate_argv(files), compare_argv(files), other_argv(files))
    )
    _check(argv, capsys)


@pytest.mark.slow
@FUZZ_LONG
@given(data=st.data())
def test_no_input_gives_a_traceback_many(files, capsys, data):
    argv = data.draw(
        st.one_of(solve_argv(files), verify_argv(files), simulate_argv(files), compare_argv(files), other_argv(files))
    )
    _check(argv, capsys)
