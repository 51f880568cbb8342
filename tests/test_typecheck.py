"""mypy on the shared layers that every paper builds on (core, solvers, verify): kept clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_core_solvers_verify(tmp_path):
    pytest.importorskip("mypy")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "optsched/core",
            "optsched/solvers",
            "optsched/verify",
            "--ignore-missing-imports",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
