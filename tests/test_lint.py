"""The code style is enforced: ruff's rule set (pyproject.toml: E, F, W, I, B, UP, SLF, SIM, RET,
RUF; 120 columns) and ruff format, over the package, the tests and the benchmarks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["optsched", "tests", "benchmarks"]


def _ruff() -> list[str]:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("ruff is not installed (it is in the dev extra)")
    return [exe]


def test_ruff_check():
    out = subprocess.run([*_ruff(), "check", *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-1000:]


def test_ruff_format():
    out = subprocess.run([*_ruff(), "format", "--check", *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-1000:] + "\nRun: ruff format optsched tests benchmarks"
