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
