"""The notebooks as files: distinct numbers, listed in notebooks/README.md, outputs stripped,
and plots shown, not closed unseen. ``make test`` executes them once, when it builds the site
(docs/_hooks/docs_notebooks.py: a failing cell or a missing output fails the build);
``make notebooks`` executes them under nbmake."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _code(nb: Path) -> list[str]:
    cells = json.loads(nb.read_text())["cells"]
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c["cell_type"] == "code"
    ]


def test_notebooks_have_distinct_numbers_and_are_listed():
    assert NOTEBOOKS, "no notebooks found"
    prefixes = [nb.name.split("-", 1)[0] for nb in NOTEBOOKS]
    assert all(re.fullmatch(r"\d\d", p) for p in prefixes), prefixes
    assert len(set(prefixes)) == len(prefixes), f"two notebooks share a number: {prefixes}"
    readme = (ROOT / "notebooks" / "README.md").read_text()
    listed = set(re.findall(r"`(\d\d-[\w-]+\.ipynb)`", readme))
    assert listed == {nb.name for nb in NOTEBOOKS}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_shows_its_plots_and_is_stripped(nb):
    for src in _code(nb):
        assert not re.search(r"matplotlib\.use\(\s*['\"]agg['\"]", src, flags=re.I), f"{nb.name}: Agg hides the plots"
        assert "plt.close(" not in src, f"{nb.name}: a plot is closed before it is shown"
    for c in json.loads(nb.read_text())["cells"]:
        if c["cell_type"] == "code":
            assert c["outputs"] == [] and c["execution_count"] is None, f"{nb.name}: outputs not stripped"


def _hook(name: str):
    import importlib.util
    import sys

    hooks = ROOT / "docs" / "_hooks"
    if str(hooks) not in sys.path:
        sys.path.insert(0, str(hooks))
    spec = importlib.util.spec_from_file_location(name, hooks / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_readme_types_no_runtime_and_states_the_bound_the_build_checks():
    """notebooks/README.md is read on GitHub, where no measured figure is substituted: it states
    no time of its own, only the bound the site's build checks on every run (MAX_SECONDS)."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    figures = _hook("docs_figures")
    notebooks = _hook("docs_notebooks")
    text = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    assert figures.typed_figures(text, "notebooks/README.md") == []
    words = {60: "a minute", 120: "two minutes", 180: "three minutes", 300: "five minutes"}
    assert f"runs in well under {words[notebooks.MAX_SECONDS]}" in " ".join(text.split())
