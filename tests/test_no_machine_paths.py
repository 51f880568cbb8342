"""No path that exists only on a build machine or in a checkout: the installed package reads its
data with importlib.resources (see docs/data.md)."""

from __future__ import annotations

import re
from pathlib import Path

import optsched

PKG = Path(optsched.__file__).parent
ROOT = PKG.parent
ABSOLUTE = re.compile(r"""["'](/work/|/home/|/Users/|/root/|/tmp/|[A-Z]:\\\\)""")
SHARED = re.compile(r"""\.\./shared|shared/traces""")
OUTSIDE = re.compile(r"parents\[\s*[1-9]\s*\]|\.parent\.parent")


def _py_files(folder: Path):
    return sorted(p for p in folder.rglob("*.py") if "data" not in p.relative_to(folder).parts)


def _hits(files, pattern):
    return [
        f"{f.relative_to(ROOT)}:{i}: {line.strip()}"
        for f in files
        for i, line in enumerate(f.read_text().splitlines(), 1)
        if pattern.search(line)
    ]


def test_package_has_no_absolute_or_checkout_paths():
    files = _py_files(PKG)
    assert _hits(files, ABSOLUTE) == []
    assert _hits(files, SHARED) == []
    assert _hits(files, OUTSIDE) == [], "read package data with importlib.resources, not paths above the package"


def test_tests_benchmarks_and_notebooks_have_no_machine_paths():
    files = [f for d in ("tests", "benchmarks") if (ROOT / d).is_dir() for f in _py_files(ROOT / d)]
    files += sorted((ROOT / "notebooks").glob("*.ipynb")) if (ROOT / "notebooks").is_dir() else []
    files = [f for f in files if f.name != Path(__file__).name]
    assert _hits(files, ABSOLUTE) == []
    assert _hits(files, SHARED) == []


def test_the_patterns_catch_what_they_should():
    assert ABSOLUTE.search('p = "/work/shared/traces"') and SHARED.search("../shared/traces")
    assert OUTSIDE.search("Path(__file__).resolve().parents[2]") and not ABSOLUTE.search('"optsched/x"')
