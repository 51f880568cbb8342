"""The documentation site: it builds strict, and its pages render with their equations in a browser.

The site is the one `make docs` builds (``make test`` builds it first and passes its folder in
``OPTSCHED_SITE_DIR``); run alone, this test builds it into a temporary folder. The browser is
Debian's Chromium (``apt-get install -y chromium``; ``.ci/run`` installs it when it can); without
it the browser checks skip and say so. Screenshots go to a temporary folder, never the repository.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=15000",
]
#: (page, what it must show): the landing page, one API page and one formulation page.
PAGES = {
    "index.html": "optsched",
    "reference/rigid/index.html": "solve_exact",
    "formulations/rigid/index.html": "Notation",
}


#: The pages whose Python examples run as written (each page's blocks in order, one namespace).
EXAMPLE_PAGES = sorted([ROOT / "docs" / "getting-started.md", *(ROOT / "docs" / "papers").glob("*.md")])


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_page_python_examples_run(page, tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page.name}[python block {i}]", "exec"), namespace)


def _build(site: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"mkdocs build --strict failed:\n{out.stdout}\n{out.stderr}"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    given = os.environ.get("OPTSCHED_SITE_DIR")
    if given and (Path(given) / "index.html").exists():
        return Path(given)
    site = tmp_path_factory.mktemp("site")
    _build(site)
    return site


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # no request log on stderr
        pass


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if exe is None:
        pytest.skip("Chromium is not installed: `apt-get install -y chromium` (Debian) to run the browser checks")
    return exe


def _chromium(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_site_has_every_section(site):
    """Built strict (by make docs or the fixture); the generated and included pages are there."""
    for page in [*PAGES, "cli/index.html", "getting-started/index.html", "simulator/index.html", "data/index.html"]:
        assert (site / page).exists(), page
    for folder, pattern in (("formulations", "*.md"), ("notebooks", "*.ipynb")):
        for src in (ROOT / folder).glob(pattern):
            assert (site / folder / src.stem / "index.html").exists(), f"{folder}/{src.name} is not on the site"
    assert (site / "javascripts/mathjax/tex-svg-full.js").exists(), "MathJax is not served from the site"
    cli = (site / "cli/index.html").read_text(encoding="utf-8")
    assert "optsched simulate --help" in cli and "--policy" in cli, "the CLI page lacks a subcommand's --help"
    html = (site / "notebooks/00-intro/index.html").read_text(encoding="utf-8")
    assert "jp-Cell" in html and 'class="jp-OutputArea' not in html, "a notebook page is missing or was executed"


def test_no_page_loads_from_the_network(site):
    """No CDN: every script and stylesheet is served from the site (CI has no internet)."""
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', html)
        assert not remote, f"{page.relative_to(site)} loads {remote}"


@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_its_equations(page, site, server, chromium, tmp_path):
    """After the scripts run, every formula of the page is typeset by MathJax and the page shows."""
    url = f"{server}/{page}"
    dom = _chromium(chromium, tmp_path / "profile", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert PAGES[page] in html
    formulas = len(re.findall(r'class="arithmatex"', html))
    typeset = len(re.findall(r"<mjx-container", html))
    assert formulas > 0, f"{page} has no formula to check"
    assert typeset >= formulas, f"{page}: {typeset} formulas typeset of {formulas} (MathJax did not run)"
    assert '<g data-mml-node="merror"' not in html, f"{page}: MathJax reported a TeX error"
    shot = tmp_path / "page.png"
    out = _chromium(chromium, tmp_path / "profile2", "--window-size=1280,1600", f"--screenshot={shot}", url)
    assert out.returncode == 0 and shot.exists() and shot.stat().st_size > 20_000, out.stderr[-2000:]


def _hook():
    spec = importlib.util.spec_from_file_location("optsched_docs_hook", ROOT / "docs" / "_hooks" / "optsched_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_github_markdown_reads_as_github_does():
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    fix = _hook().github_markdown
    # a list right after a paragraph line gets the blank line Python-Markdown needs
    assert fix("Checks:\n- (R1) one\n- (R2) two") == "Checks:\n\n- (R1) one\n- (R2) two"
    assert fix("Steps:\n1. first") == "Steps:\n\n1. first"
    # not where GitHub would not start a list either: "2." inside a paragraph, code, tables, lists
    for same in (
        "Table\n2. is wrapped",
        "```\nx:\n- y\n```",
        "| a |\n- b",
        "- a\n- b",
        "- a\n  wrapped\n- b",
        "    code:\n- x",
    ):
        assert fix(same) == same
    # an anchor inside a paragraph becomes a target; a heading's stays for attr_list
    assert fix("**Lemma** {#lemma-2} holds") == '**Lemma**<span id="lemma-2"></span> holds'
    assert fix("## Notation {#notation}") == "## Notation {#notation}"
