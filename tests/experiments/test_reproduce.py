"""Every registered paper reproduction runs in its --quick form and writes its tables.

Reproductions whose quick form is declared longer than 90 s run only with ``make test-slow``.
"""

from __future__ import annotations

import pytest

from optsched.cli import main
from optsched.experiments.registry import reproductions

CASES = [
    pytest.param(r.name, id=r.name, marks=[pytest.mark.slow] if (r.quick_seconds or 0) > 90 else [])
    for r in reproductions()
]


def test_some_reproductions_are_registered():
    names = [r.name for r in reproductions()]
    for name in ("sojourn-tables", "asrpt-table2", "asrpt-fig6-9", "rarddls-sec7", "lazer"):
        assert name in names


@pytest.mark.parametrize("name", CASES)
def test_quick_reproduction_writes_tables(name, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", name, "--quick", "--quiet", "--out", str(out)]) == 0
    files = list(out.glob("*.csv"))
    assert files, f"{name} wrote no table"
    assert all(f.stat().st_size > 0 for f in files)
