"""What the command line prints (issue 28 item 5): numbers, --help, `info`, message wording."""

from __future__ import annotations

import ast
import io
import json
import re
from pathlib import Path

import pytest

import optsched
from optsched.cli import build_parser, main
from optsched.commands._common import plain_text, print_table
from optsched.core.units import fmt_number

PKG = Path(optsched.__file__).parent


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (10000018.0, "10000018"),  # a CP-SAT objective printed as 1e+07 before
        (-10000018.0, "-10000018"),
        (123456789012.0, "123456789012"),
        (1234567.25, "1234567.2"),
        (12345.678, "12345.7"),
        (0.000123456789, "0.000123457"),
        (3.0, "3"),
        (2.5e307, "2.5e+307"),
    ],
)
def test_numbers_keep_every_integer_digit(value, text):
    assert fmt_number(value) == text


def test_table_shows_a_large_integer_objective_in_full():
    buf = io.StringIO()
    print_table([{"objective": 10000018.0, "gap": 0.0, "ratio": 1.0000001}], file=buf)
    assert "10000018" in buf.getvalue() and "e+" not in buf.getvalue()


def test_solve_prints_a_large_integer_objective_in_full(tmp_path, capsys):
    doc = json.loads((PKG / "instances" / "toy" / "rigid-2x2-five.json").read_text())
    for j in doc["jobs"]:
        j["weight"] = 999_999  # the largest weight is 1e6 (docs/instances.md#limits)
    path = tmp_path / "heavy.json"
    path.write_text(json.dumps(doc))
    assert main(["solve", str(path), "--backend", "cpsat", "--time-limit", "30"]) == 0
    out = capsys.readouterr().out
    assert "e+07" not in out
    assert re.search(r"\b\d{8}\b", out), out  # the objective (about 1.9e7) with every digit


def _subcommands():
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    return sorted(sub.choices)


@pytest.mark.parametrize("command", _subcommands())
def test_help_has_no_rest_markup(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and not re.search(r"\S::\s*$", out, re.M) and ":func:" not in out, out


def test_plain_text():
    assert plain_text("``a``: :class:`~x.Y`.\n\nExamples::\n\n    a b") == "a: x.Y.\n\nExamples:\n\n    a b"


def test_info_wraps_descriptions_instead_of_cutting_them(capsys):
    from optsched.core import algorithms
    from optsched.sim import policy_registry

    assert main(["info"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    optsched.load_plugins()
    descs = [a.description for a in algorithms()] + [p.description for p in policy_registry().values()]
    assert any(len(d) > 70 for d in descs)  # the old table cut these at 70 characters
    for d in descs:
        assert " ".join(plain_text(d).split()) in out, d


def test_registered_descriptions_are_whole_first_paragraphs():
    from optsched.sim import policy_registry

    drf = policy_registry()["elastic-drf"].description
    assert drf.endswith(".") and "slot boundary" in drf  # was cut at the docstring's first line break


_DOUBLED = re.compile(r"\b(the|a|an|at|of|to|in|is|and|for|on|by|be|it|with)\s+\1\b", re.I)


def test_no_doubled_words_in_the_package_strings():
    bad = []
    for f in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            bad += [f"{f.relative_to(PKG)}:{node.lineno}: {m.group(0)!r}" for m in _DOUBLED.finditer(text)]
    assert not bad, bad


@pytest.mark.parametrize(
    ("edit", "start"),
    [
        (lambda d: d["jobs"][0].pop("work"), "Job 0 (jobs[0]) has no 'work' field"),
        (lambda d: d.pop("cluster"), "The instance has no 'cluster' field"),
        (lambda d: d.update(extra=1), "The instance has an unknown field"),
        (lambda d: d["jobs"][0].update(gpus="x"), "The 'gpus' field of job 0 (jobs[0]) must be of type integer"),
    ],
)
def test_schema_messages_read_as_sentences_and_cite_the_real_schema(edit, start):
    from optsched.core.io import SCHEMA_DIR, instance_from_dict
    from optsched.exceptions import InvalidInstanceError

    doc = json.loads((PKG / "instances" / "toy" / "rigid-2x2-five.json").read_text())
    edit(doc)
    with pytest.raises(InvalidInstanceError) as e:
        instance_from_dict(doc)
    msg = str(e.value)
    assert msg.startswith(start), msg
    assert "The the" not in msg and "The job 0" not in msg
    assert "optsched/core/schemas/rigid.schema.json" in msg and (SCHEMA_DIR / "rigid.schema.json").is_file()


def test_job_from_dict_without_index_has_no_article_typo():
    from optsched.core import Job
    from optsched.exceptions import InvalidInstanceError

    with pytest.raises(InvalidInstanceError, match=r"^The job must be an object"):
        Job.from_dict([1, 2])


def test_verify_names_the_missing_job_instead_of_a_key_error(tmp_path, capsys):
    assert main(["solve", "toy:rigid-2x2-five", "--out", str(tmp_path / "run")]) == 0
    doc = json.loads((tmp_path / "run" / "schedule.json").read_text())
    doc["jobs"] = [j for j in doc["jobs"] if j["id"] != 4]
    (tmp_path / "s.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["verify", "toy:rigid-2x2-five", str(tmp_path / "s.json")]) == 1
    out = capsys.readouterr().out
    assert "KeyError" not in out and "the schedule has no entry for job 4 of the instance" in out, out


def test_elastic_check_names_what_the_instance_lacks():
    from optsched.elastic import toy_instance
    from optsched.elastic.checks import violations
    from optsched.elastic.schedule import ElasticSchedule

    inst = toy_instance()
    doc = {"kind": "elastic", "jobs": [{"id": 0, "start": 0, "d": 10, "worker_type": 7, "q": 1, "workers": {"3": 1}}]}
    doc["jobs"][0].update(ps_type=0, ps={"0": 1})
    (v,) = violations(inst, ElasticSchedule.from_dict(doc), require_all=False)
    assert "worker type 7 (the instance has types 0..1)" in v.message and "server(s) [3]" in v.message
