"""The Python examples of README.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples_and_both_commands():
    text = README.read_text()
    assert "make demo" in text and "make test" in text
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_readme_python_block_runs(i, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(BLOCKS[i], f"README.md[python block {i}]", "exec"), {"__name__": "__readme__"})


def _shell_lines() -> list[str]:
    """The README's shell example lines (bash blocks), trailing comments removed, `make` left out."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line and not line.startswith("make "):
                lines.append(line)
    return lines


SHELL = _shell_lines()


def test_readme_shell_examples_are_commands_with_known_options():
    import shlex

    from optsched.cli import build_parser

    parser = build_parser()
    commands = [shlex.split(c) for c in SHELL if c.startswith("optsched ")]
    assert len(commands) >= 10
    for argv in commands:
        parser.parse_args(argv[1:])  # exits (fails the test) on an unknown command or option


def test_readme_lists_every_command_and_no_checkout_path():
    from optsched.commands import COMMANDS

    listed = {c.split()[1] for c in SHELL if c.startswith("optsched ")}
    assert set(COMMANDS) <= listed, set(COMMANDS) - listed
    text = README.read_text()
    # instance arguments are library names (they work after pip install), not checkout paths
    assert not re.search(r"optsched\s+(solve|verify|simulate)\s+instances/", text)


@pytest.mark.parametrize(
    "line",
    [c for c in SHELL if c.split()[:2] in (["optsched", "simulate"], ["optsched", "compare"]) and "100000" not in c],
)
def test_readme_simulations_keep_the_cluster_busy(line, tmp_path, monkeypatch, capsys):
    """Each README simulation shows contention (jobs wait), not the "No job ever waited" warning.
    The 100,000-job line runs in tests/test_installed_wheel.py (installed, from an empty folder)."""
    import json
    import shlex
    import subprocess
    import warnings

    from optsched.cli import main

    monkeypatch.chdir(tmp_path)
    for prep in (c for c in SHELL if c.startswith("printf ")):
        subprocess.run(prep, shell=True, check=True)
    argv = shlex.split(line)[1:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the "No job ever waited" warning fails the test
        code = main([*argv, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    # simulate --json: one row per policy (a list) or one row; compare --json: {"rows": [...], ...}
    rows = out["rows"] if isinstance(out, dict) and "rows" in out else out if isinstance(out, list) else [out]
    assert rows, out
    assert any(r.get("mean_waiting", 0) > 0 or r.get("mean_queue_delay", 0) > 0 for r in rows), rows
