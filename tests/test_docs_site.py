"""The documentation site, as a reader finds it: built strict, every page of the navigation loaded
in a browser, every formula typeset, every notebook and gallery picture shown, every link and
anchor leading somewhere.

The site is the one `make docs` builds (``make test`` builds it first and passes its folder in
``OPTSCHED_SITE_DIR``); run alone, this test builds it into a temporary folder (the notebooks and
the gallery's commands are cached in ``.cache/optsched-docs/`` by the code's hash). It is served
under ``/optsched/``, the path of ``site_url``, with the 404 page for a missing path, as GitHub
Pages serves it. The browser is Debian's Chromium (``apt-get install -y chromium``; ``.ci/run``
installs it when it can); without it the browser checks skip and say so. Screenshots of every page
and the counts go to ``OPTSCHED_SHOTS_DIR`` when it is set, never into the repository.
"""

from __future__ import annotations

import fcntl
import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.docs_browser import PAGE_STATS, Browser

#: One worker runs this module's tests (with ``--dist loadgroup``, as ``make test`` runs them), so
#: the site is built and opened in the browser once.
pytestmark = pytest.mark.xdist_group("docs-site")

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "docs" / "_hooks"
BASE = "/optsched/"  # the path of site_url in mkdocs.yml

#: Pages whose mathematics are known not to render yet, each with the reason (a strict xfail fails
#: once the page is right). Empty: every page renders.
KNOWN_MATH: dict[str, str] = {}
#: Pages that still mention "issue N" and the branch that rewrites them (remove on merge).
KNOWN_ISSUE_PAGES: dict[str, str] = {}
#: Source files known to hold control characters (empty: none may).
KNOWN_CONTROL: set[str] = set()


def _hook_module(name: str):
    """A module of docs/_hooks (they import each other by name, as mkdocs loads them)."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    if str(HOOKS) not in sys.path:
        sys.path.insert(0, str(HOOKS))
    spec = importlib.util.spec_from_file_location(name, HOOKS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# -- the built site -------------------------------------------------------------------------------


def _build(site: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    warnings = [line for line in out.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert out.returncode == 0, "mkdocs build --strict failed:\n" + "\n".join(warnings or [out.stderr[-4000:]])


@pytest.fixture(scope="module")
def site() -> Path:
    """The site ``make docs`` built (``OPTSCHED_SITE_DIR``), or one built for this test run into
    ``.cache/optsched-docs/test-site`` (once per run: pytest-xdist workers share it)."""
    given_dir = os.environ.get("OPTSCHED_SITE_DIR")
    if given_dir and (Path(given_dir) / "index.html").exists():
        return Path(given_dir)
    shared = ROOT / ".cache" / "optsched-docs" / "test-site"
    shared.parent.mkdir(parents=True, exist_ok=True)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid-{os.getpid()}"
    with open(shared.parent / "test-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = shared / ".built-by-run"
        if not (stamp.exists() and stamp.read_text() == run):
            _build(shared)
            stamp.write_text(run)
    return shared


def _nav_pages(site: Path) -> list[str]:
    """Every page of the site (the build fails on a page left out of the navigation), as paths
    under the site's root: ``""``, ``getting-started/``, ..."""
    xml = (site / "sitemap.xml").read_text(encoding="utf-8")
    return [urlsplit(u).path.removeprefix(BASE) for u in re.findall(r"<loc>([^<]+)</loc>", xml)]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """The site under /optsched/, and its 404 page (status 404) for anything missing."""

    def log_message(self, format, *args):  # no request log on stderr
        pass

    def translate_path(self, path):
        path = urlsplit(path).path
        if not path.startswith(BASE):
            return str(Path(self.directory) / "__missing__")
        return super().translate_path("/" + path[len(BASE) :])

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.exists():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return None


@pytest.fixture(scope="module")
def server(site):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}{BASE}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if exe is None:
        pytest.skip("Chromium is not installed: `apt-get install -y chromium` (Debian) to run the browser checks")
    return exe


def _open_every_page(site, server, chromium, profile: Path, width: int) -> dict[str, dict]:
    shots = Path(os.environ["OPTSCHED_SHOTS_DIR"]) if os.environ.get("OPTSCHED_SHOTS_DIR") else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    browser = Browser(chromium, profile, width=width)
    out = {}
    suffix = "" if width == Browser.WIDTHS[0] else f"@{width}"
    try:
        for page in _nav_pages(site):
            nav = browser.open(server + page)
            stats = browser.evaluate(PAGE_STATS) if not nav.get("errorText") else {"error": nav["errorText"]}
            out[page] = stats
            if shots:
                browser.screenshot(shots / f"{(page.strip('/') or 'index').replace('/', '__')}{suffix}.png")
    finally:
        browser.close()
    if shots:
        counts = {
            "pages": len(out),
            "equations": sum(s.get("equations", 0) for s in out.values()),
            "images": sum(s.get("images", 0) for s in out.values()),
            "per_page": {p: {k: s.get(k) for k in ("equations", "images", "notebook_outputs")} for p, s in out.items()},
        }
        (shots / f"counts{suffix}.json").write_text(json.dumps(counts, indent=1))
    return out


@pytest.fixture(scope="module")
def pages(site, server, chromium, tmp_path_factory) -> dict[str, dict]:
    """Every page of the navigation opened in one browser 1,280 px wide: what each shows
    (docs_browser.PAGE_STATS), with a screenshot of each in OPTSCHED_SHOTS_DIR when it is set."""
    return _open_every_page(site, server, chromium, tmp_path_factory.mktemp("chromium"), Browser.WIDTHS[0])


@pytest.fixture(scope="module")
def phone_pages(site, server, chromium, tmp_path_factory) -> dict[str, dict]:
    """The same at a phone's width, 390 px (screenshots named ``page@390.png``)."""
    return _open_every_page(site, server, chromium, tmp_path_factory.mktemp("chromium-phone"), Browser.WIDTHS[1])


def test_site_has_every_section(site):
    """The generated and included pages are there, the notebooks executed."""
    for page in ("index.html", "cli/index.html", "gallery/index.html", "changelog/index.html", "404.html"):
        assert (site / page).exists(), page
    for folder, pattern in (("formulations", "*.md"), ("notebooks", "*.ipynb")):
        for src in (ROOT / folder).glob(pattern):
            assert (site / folder / src.stem / "index.html").exists(), f"{folder}/{src.name} is not on the site"
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        html = (site / "notebooks" / nb.stem / "index.html").read_text(encoding="utf-8")
        assert 'class="jp-OutputArea' in html, f"{nb.name}: the page shows no output (not executed)"
        assert (site / "notebooks" / nb.stem / nb.name).read_bytes() == nb.read_bytes(), f"{nb.name}: no download"
    assert (site / "javascripts/mathjax/tex-svg-full.js").exists(), "MathJax is not served from the site"


def test_no_page_loads_from_the_network(site):
    """No CDN: every script and stylesheet is served from the site (CI has no internet)."""
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', html)
        remote = [u for u in remote if not u.startswith("https://optsched.github.io/optsched/")]  # canonical
        assert not remote, f"{page.relative_to(site)} loads {remote}"


def test_every_link_and_anchor_resolves(site):
    checks = _hook_module("docs_checks")
    assert checks.broken_links(site, BASE) == []


def test_every_page_of_the_navigation_loads(pages):
    assert len(pages) >= 40, sorted(pages)
    bad = {p: s.get("error") or "unstyled" for p, s in pages.items() if s.get("error") or not s.get("styled")}
    assert not bad, bad
    broken = {p: s["broken_images"] for p, s in pages.items() if s.get("broken_images")}
    assert not broken, broken
    sideways = [p for p, s in pages.items() if s.get("page_scrolls_sideways")]
    assert not sideways, f"pages wider than the window: {sideways}"


def _math_problems(stats: dict) -> list[str]:
    out = []
    if stats.get("math_errors"):
        out.append(f"{stats['math_errors']} math error(s)")
    if stats.get("raw_tex"):
        out.append(f"raw TeX: {stats['raw_tex']}")
    if stats.get("equations", 0) < stats.get("formulas", 0):
        out.append(f"{stats['equations']} formulas typeset of {stats['formulas']}")
    return out


def test_no_page_shows_a_math_error_or_raw_tex(pages):
    bad = {p: _math_problems(s) for p, s in pages.items() if p not in KNOWN_MATH and _math_problems(s)}
    assert not bad, bad


def test_known_formulation_pages_still_fail_to_render(pages):
    """Each page of KNOWN_MATH still has its problem (one that renders now must leave the list)."""
    fixed = [p for p in KNOWN_MATH if not (_math_problems(pages[p]) or (not pages[p]["equations"]))]
    assert not fixed, f"{fixed} render now: remove them from KNOWN_MATH"


def test_every_formulation_page_renders_its_equations(pages):
    formulations = {p: s for p, s in pages.items() if p.startswith("formulations/") and p not in KNOWN_MATH}
    assert len(formulations) >= 3, sorted(formulations)
    empty = [p for p, s in formulations.items() if s["equations"] == 0]
    assert not empty, f"no typeset equation on {empty}"


def test_every_notebook_page_shows_its_plots(pages):
    nbs = {p: s for p, s in pages.items() if p.startswith("notebooks/") and p != "notebooks/"}
    assert len(nbs) == len(list((ROOT / "notebooks").glob("*.ipynb")))
    for page, s in nbs.items():
        assert s["notebook_outputs"] > 0, f"{page}: no output"
        assert s["images"] >= 1, f"{page}: no plot"
        assert "Download the notebook" in s["text"], f"{page}: no download link"


def test_the_gallery_shows_the_commands_figures(site, pages):
    drawn = list((site / "gallery").rglob("*.png"))
    assert len(drawn) >= 20, drawn
    assert pages["gallery/"]["images"] == len(drawn)
    text = pages["gallery/"]["text"]
    for command in ("optsched compare", "optsched verify", "optsched reproduce", "bench_sim --plot"):
        assert command in text, command


def test_the_simulator_diagrams_show(pages):
    assert pages["simulator-phases/"]["images"] == 2


def test_the_command_line_page_fits_its_width(pages):
    assert pages["cli/"]["code_scrolling"] == 0, "a --help block scrolls sideways"


def _cut_off(pages: dict[str, dict]) -> dict[str, dict]:
    return {
        page: {k: s[k] for k in ("out_of_box", "clipped_text", "page_scrolls_sideways") if s.get(k)}
        for page, s in pages.items()
        if s.get("out_of_box") or s.get("clipped_text") or s.get("page_scrolls_sideways")
    }


def test_no_block_is_cut_off_at_a_laptops_width(pages):
    """At 1,280 px every code block, table, picture and formula wraps or scrolls inside its box."""
    assert _cut_off(pages) == {}


def test_no_block_is_cut_off_at_a_phones_width(phone_pages):
    assert _cut_off(phone_pages) == {}


def test_pictures_are_shown_as_wide_as_the_label_check_assumes(pages):
    """The label checks (optsched.plot.style: the gallery's build check, the notebooks' record,
    tests/test_docs_pages.py) take a picture as shown at its natural width or shrunk to a column
    of PAGE_WIDTH_PX (NOTEBOOK_WIDTH_PX in a notebook's output) at 1,280 px: the columns are at
    least that wide, and no picture of the site is shown narrower than that (two a row, say)."""
    from optsched.plot.style import NOTEBOOK_WIDTH_PX, PAGE_WIDTH_PX
    from tests.test_docs_pages import CONTENT_PX

    assert CONTENT_PX <= PAGE_WIDTH_PX
    narrow = {}
    for page, s in pages.items():
        if not s.get("image_widths"):
            continue
        assert s["content_width"] >= PAGE_WIDTH_PX, page
        for src, natural, shown, column in s["image_widths"]:
            in_output = column < s["content_width"] - 1  # inside a notebook's output area
            least = NOTEBOOK_WIDTH_PX if in_output else PAGE_WIDTH_PX
            assert column >= least - 1, (page, src[-40:], column)
            if shown < min(natural, least) - 1:
                narrow.setdefault(page, []).append((src[-40:], natural, round(shown)))
    assert narrow == {}, narrow


def test_the_404_page_works_under_the_sites_path(server, chromium, tmp_path):
    browser = Browser(chromium, tmp_path / "profile")
    try:
        browser.open(server + "no/such/page/at/depth/")
        stats = browser.evaluate(PAGE_STATS)
        if os.environ.get("OPTSCHED_SHOTS_DIR"):
            browser.screenshot(Path(os.environ["OPTSCHED_SHOTS_DIR"]) / "404-under-a-sub-path.png")
    finally:
        browser.close()
    assert stats["styled"], "the 404 page's stylesheets did not load under a sub-path"
    assert "404" in stats["text"]


def test_getting_started_shows_the_first_result(pages):
    text = pages["getting-started/"]["text"]
    assert text.index("pip install optsched") < text.index("make test")
    assert "rigid-exact[highs]" in text and "optimal" in text  # the demo's rows, as built


def test_no_page_mentions_an_issue(site):
    checks = _hook_module("docs_checks")
    found = {p.split(":")[0]: p for p in checks.issue_mentions(site)}
    unknown = [msg for page, msg in found.items() if page.removesuffix("index.html") not in KNOWN_ISSUE_PAGES]
    assert not unknown, unknown


def test_known_pages_still_mention_an_issue(site):
    """Each page of KNOWN_ISSUE_PAGES still mentions one (one that does not must leave the list)."""
    checks = _hook_module("docs_checks")
    found = {p.split(":")[0].removesuffix("index.html") for p in checks.issue_mentions(site)}
    gone = [p for p in KNOWN_ISSUE_PAGES if p not in found]
    assert not gone, f"{gone} mention no issue now: remove them from KNOWN_ISSUE_PAGES"


# -- the checks themselves, on sources and on small made-up sites ---------------------------------

SOURCES = sorted(
    [
        *(p for p in (ROOT / "docs").rglob("*.md") if "_hooks" not in p.parts),
        *(ROOT / "formulations").glob("*.md"),
        *(ROOT / "notebooks").glob("*.ipynb"),
        ROOT / "notebooks" / "README.md",
        ROOT / "CHANGELOG.md",
    ]
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_control_character_in_a_source_page(path):
    checks = _hook_module("docs_checks")
    rel = path.relative_to(ROOT).as_posix()
    found = checks.control_characters([path], ROOT)
    if rel in KNOWN_CONTROL:
        if found:
            pytest.xfail("TeX escapes turned into control characters; repaired on branch i33-math")
        pytest.fail(f"{rel} is clean now: remove it from KNOWN_CONTROL")
    assert not found, "\n".join(found)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=40), min_size=1, max_size=8),
    where=st.data(),
    char=st.sampled_from(["\t", "\x07", "\r", "\x0c", "\x00", "\x1b", "\x7f"]),
)
def test_a_control_character_is_reported_at_its_line_and_column(tmp_path_factory, lines, where, char):
    checks = _hook_module("docs_checks")
    row = where.draw(st.integers(0, len(lines) - 1))
    col = where.draw(st.integers(0, len(lines[row])))
    lines[row] = lines[row][:col] + char + lines[row][col:]
    folder = tmp_path_factory.mktemp("src")
    page = folder / "page.md"
    page.write_text("\n".join(lines), encoding="utf-8", newline="")
    found = checks.control_characters([page], folder)
    assert found and found[0].startswith(f"page.md:{row + 1}:{col + 1}: a control character"), found
    clean = folder / "clean.md"
    clean.write_text("\n".join(lines).replace(char, "x"), encoding="utf-8")
    assert checks.control_characters([clean], folder) == []


def _mini_site(tmp_path: Path, links: str) -> Path:
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "index.html").write_text(f'<h1 id="top">Home</h1><p id="p1">x</p>{links}', encoding="utf-8")
    (site / "a" / "index.html").write_text('<h2 id="sec">A</h2><a href="../#top">home</a>', encoding="utf-8")
    (site / "img.png").write_bytes(b"\x89PNG")
    return site


@pytest.mark.parametrize(
    ("link", "why"),
    [
        ('<a href="a/#nowhere">x</a>', "has no anchor #nowhere"),
        ('<a href="b/">x</a>', "no file b/index.html"),
        ('<img src="missing.png">', "no file missing.png"),
        ('<a href="#p2">x</a>', "has no anchor #p2"),
        ('<a href="/a/">x</a>', "an absolute link outside /optsched/"),
        ('<a href="../../x.html">x</a>', "leads outside the site"),
    ],
)
def test_the_link_check_finds_what_leads_nowhere(tmp_path, link, why):
    checks = _hook_module("docs_checks")
    site = _mini_site(tmp_path, link)
    found = checks.broken_links(site, BASE)
    assert len(found) == 1 and why in found[0], found


def test_the_link_check_accepts_what_leads_somewhere(tmp_path):
    checks = _hook_module("docs_checks")
    ok = '<a href="a/#sec">a</a><a href="#p1">p</a><img src="img.png"><a href="/optsched/a/">abs</a>'
    ok += '<a href="https://example.org/#x">ext</a><a href="mailto:a@b">m</a><img src="data:image/png;base64,AA">'
    assert checks.broken_links(_mini_site(tmp_path, ok), BASE) == []


def test_issue_mentions_are_found_in_the_text_not_the_markup(tmp_path):
    checks = _hook_module("docs_checks")
    (tmp_path / "p.html").write_text('<p data-x="issue 3">fine</p><p>Closing note (issue 16)</p>', encoding="utf-8")
    (tmp_path / "q.html").write_text("<p>a tissue 4 and issues</p>", encoding="utf-8")
    assert checks.issue_mentions(tmp_path) == ["p.html: mentions issue 16"]


def test_github_markdown_reads_as_github_does():
    fix = _hook_module("docs_pages").github_markdown
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


def test_doctests_outside_examples_become_code():
    pytest.importorskip("griffe")
    fence = _hook_module("griffe_sphinx_roles").fence_doctests
    text = "Intro.\n>>> 1 + 1\n2\n\nMore.\n\nExamples\n--------\n>>> 3\n3"
    assert fence(text) == "Intro.\n\n```pycon\n>>> 1 + 1\n2\n```\n\nMore.\n\nExamples\n--------\n>>> 3\n3"
    assert fence("    >>> x\n    1") == "    ```pycon\n    >>> x\n    1\n    ```"
    assert fence("```\n>>> kept\n```") == "```\n>>> kept\n```"


def test_notebook_titles_name_the_topic_not_a_number():
    title = _hook_module("docs_notebooks").title
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        t = title(nb)
        assert t and not re.search(r"paper \d{3}|^\d\d\b", t), (nb.name, t)


def test_examples_using_this_are_found_by_what_the_code_names():
    examples = _hook_module("docs_examples")
    code = "import optsched\nfrom optsched.rigid import list_schedule as ls\nfrom optsched.sim import simulate\n"
    code += "optsched.solve(x)\nls(y)\nsimulate(z)\noptsched.verify_result(a, b)\n"
    found = examples.used_paths(code)
    assert {
        "optsched.solve",
        "optsched.rigid.list_schedule",
        "optsched.sim.simulate",
        "optsched.verify_result",
    } <= found
    html = '<h2 id="optsched.sim.simulate" class="doc doc-heading">s</h2><p>doc</p><div class="doc doc-object">'
    out = examples.insert_links(html, {"optsched.sim.simulate": [("Intro", "../../introduction/")]})
    assert out.index("Examples using this") < out.index('<div class="doc doc-object">')
    assert 'href="../../introduction/"' in out


def test_a_notebook_without_its_outputs_is_reported_at_its_cells(tmp_path):
    nbs = _hook_module("docs_notebooks")
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# T"]},
        {"cell_type": "code", "metadata": {}, "source": ["1"], "outputs": [], "execution_count": None},
        {"cell_type": "code", "metadata": {}, "source": ["plt.show()"], "outputs": [], "execution_count": 2},
    ]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    lines = path.read_text().split("\n")
    starts = [n for n, line in enumerate(lines, 1) if '"cell_type":' in line]
    found = nbs.output_problems(path, path, "notebooks/nb.ipynb")
    assert f"notebooks/nb.ipynb:{starts[1]}: cell 2 was not executed" in found
    assert f"notebooks/nb.ipynb:{starts[2]}: cell 3 calls plt.show() but shows no picture" in found
    assert any("no picture on the page" in p for p in found)


def test_the_build_fails_on_each_problem_but_the_known_ones(caplog):
    """Every problem is a warning (the strict build aborts on it); a problem another branch fixes
    is reported as known; a known pattern that matches nothing is itself a warning."""
    hook = _hook_module("optsched_docs")
    known = dict(hook.KNOWN_FAILURES)
    try:
        hook.KNOWN_FAILURES.clear()
        hook.KNOWN_FAILURES.update({r"a\.md:\d+: old": "fixed elsewhere", r"b\.md:": "stale"})
        with caplog.at_level("INFO", logger="mkdocs.hooks.optsched_docs"):
            hook._report(["a.md:3: old problem", "c.md:1: new problem"])
    finally:
        hook.KNOWN_FAILURES.clear()
        hook.KNOWN_FAILURES.update(known)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    infos = [r.getMessage() for r in caplog.records if r.levelname == "INFO"]
    assert "c.md:1: new problem" in warnings
    assert any("remove it from KNOWN_FAILURES" in w and "(stale)" in w for w in warnings)
    assert not any("a.md:3" in w for w in warnings) and any("fixed elsewhere" in i for i in infos)


def test_the_gallery_check_names_a_picture_whose_text_shows_below_9_points(tmp_path):
    """docs_gallery.small_text reads each PNG's recorded text size (optsched.plot.save_figure):
    a wide picture shrunk into the page's column is named with its shown size, a picture of
    another writer is named as not checkable, a readable one passes."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from optsched.plot.files import save_figure
    from optsched.plot.style import FIGURE_WIDTH, readable

    gallery = _hook_module("docs_gallery")
    wide = Figure(figsize=(15, 4))
    wide.add_subplot().set_xlabel("jobs", fontsize=10)
    save_figure(wide, tmp_path, "wide", formats=("png",))
    fine = Figure(figsize=(FIGURE_WIDTH, 4))
    readable(fine.add_subplot())
    save_figure(fine, tmp_path, "fine", formats=("png",))
    fine.savefig(tmp_path / "plain.png")
    found = gallery.small_text(tmp_path)
    assert len(found) == 2, found
    assert found[0].startswith("plain.png records no text size")
    assert found[1].startswith("wide.png: its smallest text (10 pt, 1800 px wide) is shown at 4.7 pt")


def _notebook_with_run(tmp_path: Path, run: dict) -> tuple[Path, list[int]]:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# T"]},
        {"cell_type": "code", "metadata": {}, "source": ["plot()"], "outputs": [], "execution_count": 1},
        {"cell_type": "code", "metadata": {}, "source": ["plot()"], "outputs": [], "execution_count": 2},
    ]
    for c in cells[1:]:
        c["outputs"] = [{"output_type": "display_data", "data": {"image/png": "AA"}, "metadata": {}}]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    (tmp_path / "nb.run.json").write_text(json.dumps(run))
    starts = [n for n, line in enumerate(path.read_text().split("\n"), 1) if '"cell_type":' in line]
    return path, starts


def test_a_notebook_picture_shown_below_9_points_and_a_long_run_are_reported(tmp_path):
    """From the record run_notebook.py writes: a 1,200-px picture at 100 dpi with 10-pt text is
    shrunk into the 584-px output column, 10 * 100/96 * 584/1200 = 5.1 pt (cell 3's); a 600-px
    one is shown nearly whole, 10.1 pt (cell 2's, fine); a run over MAX_SECONDS is named."""
    nbs = _hook_module("docs_notebooks")
    run = {
        "seconds": nbs.MAX_SECONDS + 1,
        "figures": [
            {"count": 1, "dpi": 100.0, "width_px": 600, "texts": [[10.0, "fine"]]},
            {"count": 2, "dpi": 100.0, "width_px": 1200, "texts": [[10.0, "jobs"], [12.0, "title"]]},
        ],
    }
    path, starts = _notebook_with_run(tmp_path, run)
    found = nbs.output_problems(path, path, "notebooks/nb.ipynb")
    assert len(found) == 2, found
    assert found[0].startswith(f"notebooks/nb.ipynb:{starts[2]}: cell 3 shows a picture whose smallest text ('jobs'")
    assert "is shown at 5.1 pt in the page's 584-px column" in found[0]
    assert found[1].startswith(f"notebooks/nb.ipynb: ran {nbs.MAX_SECONDS + 1} s when the site was built")
    run["seconds"] = nbs.MAX_SECONDS - 1
    run["figures"].pop()
    path, _ = _notebook_with_run(tmp_path, run)
    assert nbs.output_problems(path, path, "notebooks/nb.ipynb") == []


def test_running_a_notebook_records_each_picture_it_shows_and_its_time(tmp_path):
    """run_notebook.py, on a notebook of two plots (one shown by plt.show(), one flushed at the
    cell's end) and a figure only saved to a file: two records, each with its cell's count, its
    smallest text and its width in pixels."""
    pytest.importorskip("nbclient")
    cells = [
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots(figsize=(12, 3))\nax.set_xlabel('wide', fontsize=7)\nplt.show()",
        "fig, ax = plt.subplots(figsize=(4, 3))\nax.set_xlabel('narrow', fontsize=11)\nax.tick_params(labelsize=11)",
        "fig, ax = plt.subplots(figsize=(4, 3))\nax.set_xlabel('saved', fontsize=3)\n"
        "fig.savefig('saved.png')\nplt.close(fig)",
    ]
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "src").mkdir()
    src = tmp_path / "src" / "nb.ipynb"
    src.write_text(json.dumps(nb))
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # Agg would show nothing
    out = subprocess.run(
        [sys.executable, str(HOOKS / "run_notebook.py"), str(src), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    run = json.loads((tmp_path / "out" / "nb.run.json").read_text())
    assert run["seconds"] > 0
    shown = [(f["count"], f["texts"][0][0]) for f in run["figures"]]
    assert shown == [(1, 7.0), (2, 11.0)], run["figures"]  # not the saved one's 3 pt
    assert run["figures"][0]["texts"][0][1] == "wide"
    assert run["figures"][0]["width_px"] > run["figures"][1]["width_px"]
    executed = json.loads((tmp_path / "out" / "nb.ipynb").read_text())
    assert [c["execution_count"] for c in executed["cells"]] == [1, 2, 3]  # the counts the record names
