"""Build-time additions to the documentation site (an mkdocs hook, see ``mkdocs.yml``).

- ``formulations/*.md``, ``notebooks/*.ipynb`` (and ``notebooks/README.md``) and
  ``CHANGELOG.md`` live outside ``docs/``: they are added to the site from where they are;
- the notebooks are executed when the site is built (:mod:`docs_notebooks`), shown with their
  outputs and offered for download as committed;
- the gallery (:mod:`docs_gallery`): the figures the commands draw, drawn by them at build time;
  the Getting started page's first result, from ``optsched demo --quick``;
- one API reference page per subpackage, with *Examples using this* under each entry
  (:mod:`docs_examples`); the CLI page from every ``--help`` (:mod:`docs_pages`);
- the simulator's diagrams, written as SVG (:mod:`docs_diagrams`);
- MathJax 3 from the installed ``django-static-mathjax`` wheel, served from the site itself;
- every measured figure a page names (``[[fig:compare/cases/all-10k/total_seconds]]``,
  ``[[when:...]]``) read from ``benchmarks/results/`` with its date and load (:mod:`docs_figures`);
  a time or ratio typed on a page (under docs/ or formulations/, in README.md or a notebook's
  markdown) outside :data:`TYPED_KNOWN`, and not marked as no measurement or as the paper's,
  fails the build;
- checks mkdocs does not make (:mod:`docs_checks`): control characters in the sources, test
  paths, private names and internal paper numbers on user pages, links and anchors of the built
  site, public names without documentation, notebooks without outputs.
  Each problem is logged as a warning that names the file and line, so the strict build
  (``make docs``) fails on it.

The commands and notebooks run in other processes, two at a time, and are cached under
``.cache/optsched-docs/`` by a hash of the code (:mod:`docs_jobs`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

import docs_checks
import docs_diagrams
import docs_examples
import docs_figures
import docs_gallery
import docs_notebooks
import docs_pages
from docs_jobs import Outcome, Runner
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger("mkdocs.hooks.optsched_docs")

#: MathJax's TeX input with SVG output in one file: the glyphs are paths, no web fonts to serve.
MATHJAX_FILES = ("tex-svg-full.js",)
#: The instance whose demo rows Getting started shows (the one its Python example solves).
DEMO_INSTANCE = "rigid-2x2-five"
#: Markers in written pages that the build replaces with generated text.
MARKERS = {
    "getting-started.md": "<!-- optsched:demo -->",
    "cite.md": "<!-- optsched:bibtex -->",
}
#: Problems known when this branch was made, each fixed on the branch named (merged in parallel):
#: a problem that matches a pattern is reported as known instead of failing the build, and a
#: pattern that matches no problem fails the build until it is removed. Remove them on merge.
KNOWN_FAILURES: dict[str, str] = {}
#: Where the site's source still types measured figures (docs_figures.typed_figures): a page under
#: docs/ or formulations/, the titles of its sections not yet converted to ``[[fig:...]]`` ("*":
#: the whole page) and how many figures each still types. A section that types more fails the
#: build (a new figure), one that types fewer fails until its count is lowered, and a converted
#: section leaves this list, so the list only shrinks.
TYPED_KNOWN: dict[str, dict[str, int]] = {}

_state: dict = {}


def _runner() -> Runner:
    return _state["runner"]


def on_config(config):
    if str(ROOT) not in sys.path:  # this checkout's optsched, not an installed one
        sys.path.insert(0, str(ROOT))
    config.nav = docs_pages.expand(config.nav)
    _state.clear()
    _state["base_path"] = urlsplit(config.site_url or "/").path or "/"
    runner = Runner(ROOT, "jobs")
    _state["runner"] = runner
    gallery = [*docs_gallery.jobs(ROOT), _demo_job()]
    for job in gallery:
        runner.submit(job)
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in notebooks:
        runner.submit(docs_notebooks.job(path, ROOT))
    _state["notebooks"] = notebooks
    _state["gallery"] = [j.name for j in gallery]
    return config


def _demo_job():
    from docs_jobs import Job

    return Job(
        "gallery-demo",
        ((sys.executable, "-m", "optsched", "demo", "--quick", "--only", "rigid", "--out", "{out}/demo"),),
    )


def _mathjax_dir() -> Path:
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise PluginError(
            "MathJax is missing: install the docs extra (`pip install -e '.[docs]'`, "
            "which brings django-static-mathjax)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"


@event_priority(100)  # before mkdocs-jupyter, which turns the .ipynb files it is given into pages
def on_files(files: Files, config) -> Files:
    runner = _runner()
    for folder, patterns in (("formulations", ("*.md",)), ("notebooks", ("README.md",))):
        for pattern in patterns:
            for path in sorted((ROOT / folder).glob(pattern)):
                files.append(_repo_file(path.relative_to(ROOT).as_posix(), ROOT, config))
    files.append(File.generated(config, "changelog.md", abs_src_path=str(ROOT / "CHANGELOG.md")))
    # the notebooks, as executed by the jobs (the committed file when execution failed: the build
    # then fails, but renders every other page first)
    for path in _state["notebooks"]:
        outcome = runner.result(f"notebook:{path.stem}")
        uri = f"notebooks/{path.name}"
        if outcome.out is not None and (outcome.out / uri).is_file():
            files.append(_repo_file(uri, outcome.out, config))
        else:
            files.append(_repo_file(uri, ROOT, config))
    for uri, text in docs_pages.reference_pages().items():
        files.append(File.generated(config, uri, content=text))
    files.append(File.generated(config, "cli.md", content=docs_pages.cli_markdown()))
    files.append(File.generated(config, "images/job-phases.svg", content=docs_diagrams.phases_svg()))
    files.append(File.generated(config, "images/decision-round.svg", content=docs_diagrams.round_svg()))
    # the gallery: its page and every file its commands wrote
    outcomes = {name: runner.result(name) for name in _state["gallery"]}
    _state["outcomes"] = outcomes
    for uri, path in docs_gallery.site_files(list(outcomes.values())).items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    descriptions = {r.name: r.description for r in docs_gallery.reproductions()}
    files.append(File.generated(config, "gallery.md", content=docs_gallery.markdown(outcomes, descriptions)))
    es5 = _mathjax_dir()
    for name in MATHJAX_FILES:
        files.append(File.generated(config, f"javascripts/mathjax/{name}", abs_src_path=str(es5 / name)))
    _state["examples"] = _examples_index()
    return files


def _repo_file(uri: str, src_dir: Path, config) -> File:
    # a plain File rooted where the file is (not File.generated): mkdocs-jupyter's NotebookFile
    # finds the source through src_dir
    return File(uri, str(src_dir), config.site_dir, config.use_directory_urls)


def _examples_index() -> dict[str, list[str]]:
    """API identifier -> the source uris (``notebooks/00-intro.ipynb``, ``papers/rigid.md``) whose
    code uses it."""
    names = docs_pages.public_names()
    _state["public_names"] = names
    documented = {ident: obj for entries in names.values() for ident, _, obj in entries}
    sources = sorted((ROOT / "notebooks").glob("*.ipynb"))
    sources += [p for p in (ROOT / "docs").rglob("*.md") if "_hooks" not in p.parts]
    sources += sorted((ROOT / "formulations").glob("*.md"))
    found = docs_examples.usages(sources, documented)
    out = {}
    for ident, paths in found.items():
        uris = []
        for p in paths:
            rel = p.relative_to(ROOT).as_posix()
            uris.append(rel.removeprefix("docs/"))
        out[ident] = uris
    return out


def on_page_markdown(markdown: str, page, config, files) -> str:
    src = page.file.src_uri
    if src in MARKERS:
        markdown = _fill_marker(src, markdown)
    # pages outside docs/ link docs/x.md as the repository has it (so the links work on GitHub too)
    if src == "changelog.md":
        markdown = markdown.replace("](docs/", "](")
    elif src.startswith(("formulations/", "notebooks/")):
        markdown = markdown.replace("](../docs/", "](../")
    markdown, problems, _ = docs_figures.substitute(markdown, ROOT / "benchmarks" / "results", _source_name(src))
    _state.setdefault("figure_problems", []).extend(problems)
    return docs_pages.github_markdown(markdown)


def _source_name(src: str) -> str:
    return _source_path(src).relative_to(ROOT).as_posix() if _source_path(src).is_relative_to(ROOT) else src


def _fill_marker(src: str, markdown: str) -> str:
    marker = MARKERS[src]
    if marker not in markdown:
        raise PluginError(f"docs/{src}: the marker {marker} the build fills is missing")
    if src == "cite.md":
        return markdown.replace(marker, docs_pages.bibtex(ROOT / "CITATION.cff"))
    outcome: Outcome = _state["outcomes"]["gallery-demo"]
    if outcome.out is None:
        raise PluginError(f"docs/{src}: `optsched demo --quick` failed: {outcome.error}")
    return markdown.replace(marker, docs_pages.demo_table(outcome.out / "demo" / "demo.csv", DEMO_INSTANCE))


_HREF = re.compile(r'href="(?![a-z]+:|#|/)([^"#]+\.(?:md|ipynb))(#[^"]*)?"')


def on_page_content(html: str, page, config, files):
    src = page.file.src_uri
    _state.setdefault("sources", {})[page.file.dest_uri] = _source_path(src)
    html = _code_references(html, page, files)
    if src.endswith(".ipynb"):
        html = docs_notebooks.align_toc(_notebook_links(html, page, files), page.toc)
        return docs_notebooks.download_html(Path(src).name) + html
    if src.startswith("reference/"):
        return _examples_links(html, page, files)
    return html


_TAG_OR_TEXT = re.compile(r"(<[^>]+>)")
_PAGE_PATH = re.compile(r"(?<![\w/.-])((?:\.\./)*(?:docs/|formulations/|notebooks/)?[\w.-]+\.(?:md|ipynb))(#[\w-]+)?")
_CODE_ONLY_PATH = re.compile(r"^((?:\.\./)*[\w./-]+\.(?:md|ipynb))(#[\w-]+)?$")


def _code_references(html: str, page, files) -> str:
    """A page of the site named as a path (``formulations/rigid.md#jct-bound``, as a GitHub reader
    or ``help()`` sees it), in a code span or in plain text, becomes a link to that page on the
    site. Paths inside a link, a code block or a longer piece of code are left alone, and so is
    a path that names no page of the site."""
    here = os.path.dirname(page.file.src_uri)

    def link(path: str, anchor: str | None) -> str | None:
        for cand in (
            path.removeprefix("docs/"),
            os.path.normpath(os.path.join(here, path)).replace(os.sep, "/").removeprefix("docs/"),
        ):
            target = files.get_file_from_path(cand)
            if target is not None and target.is_documentation_page():
                return target.url_relative_to(page.file) + (anchor or "")
        return None

    out = []
    depth = {"a": 0, "pre": 0, "code": 0}
    parts = _TAG_OR_TEXT.split(html)
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.startswith("<"):
            m = re.match(r"<(/?)(a|pre|code)\b", part)
            if m:
                depth[m.group(2)] += -1 if m.group(1) else 1
            # <code>path</code> on its own (not in a link or a code block): link the code span
            if part == "<code>" and not depth["a"] and not depth["pre"] and i + 2 < len(parts):
                whole = _CODE_ONLY_PATH.match(parts[i + 1])
                href = link(whole.group(1), whole.group(2)) if whole and parts[i + 2] == "</code>" else None
                if href:
                    out.append(f'<a href="{href}"><code>{parts[i + 1]}</code></a>')
                    depth["code"] -= 1
                    i += 3
                    continue
            out.append(part)
        elif part and not any(depth.values()):

            def repl(m: re.Match) -> str:
                href = link(m.group(1), m.group(2))
                return f'<a href="{href}">{m.group(0)}</a>' if href else m.group(0)

            out.append(_PAGE_PATH.sub(repl, part))
        else:
            out.append(part)
        i += 1
    return "".join(out)


def _source_path(src: str) -> Path:
    for base in (ROOT / "docs", ROOT):
        if (base / src).is_file():
            return base / src
    if src == "changelog.md":
        return ROOT / "CHANGELOG.md"
    return ROOT / "docs" / src


def _notebook_links(html: str, page, files) -> str:
    """A notebook's link to a repository file (``../formulations/sojourn.md``) points to its page
    on the site. mkdocs validates markdown links only; a notebook link that leads nowhere fails
    the strict build here."""

    def repl(m: re.Match) -> str:
        uri = os.path.normpath(os.path.join(os.path.dirname(page.file.src_uri), m.group(1))).replace(os.sep, "/")
        target = files.get_file_from_path(uri.removeprefix("docs/"))
        if target is None:
            raise PluginError(f"{page.file.src_uri}: the link {m.group(1)!r} leads to no page of the site")
        return f'href="{target.url_relative_to(page.file)}{m.group(2) or ""}"'

    return _HREF.sub(repl, html)


def _examples_links(html: str, page, files) -> str:
    links = {}
    for ident, uris in _state.get("examples", {}).items():
        out = []
        for uri in uris:
            target = files.get_file_from_path(uri)
            if target is None or target.page is None:
                continue
            title = target.page.title or _title_of(uri)
            out.append((title, target.url_relative_to(page.file)))
        if out:
            links[ident] = out
    return docs_examples.insert_links(html, links)


def _title_of(uri: str) -> str:
    path = ROOT / uri if (ROOT / uri).exists() else ROOT / "docs" / uri
    if path.suffix == ".ipynb":
        return docs_notebooks.title(path) or path.stem
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    return first.lstrip("# ").replace("`", "") or uri


def on_post_build(config) -> None:
    site = Path(config.site_dir)
    runner = _runner()
    problems: list[str] = []
    # the committed notebooks beside their pages, for the download links
    for path in _state["notebooks"]:
        dest = site / "notebooks" / path.stem
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest / path.name)
        outcome = runner.result(f"notebook:{path.stem}")
        rel = path.relative_to(ROOT).as_posix()
        if outcome.out is None:
            problems.append(outcome.error)
        else:
            problems += docs_notebooks.output_problems(outcome.out / "notebooks" / path.name, path, rel)
    problems += docs_gallery.problems(list(_state["outcomes"].values()))
    problems += docs_diagrams.mismatches()
    sources = [p for p in (ROOT / "docs").rglob("*.md") if "_hooks" not in p.parts]
    sources += [*(ROOT / "formulations").glob("*.md"), *(ROOT / "notebooks").glob("*.ipynb")]
    sources += [ROOT / "notebooks" / "README.md", ROOT / "CHANGELOG.md"]
    problems += docs_checks.control_characters(sources, ROOT)
    problems += docs_checks.leaks([p for p in sources if p.is_relative_to(ROOT / "docs")], ROOT)
    problems += _state.get("figure_problems", [])
    # the pages (docs/ and formulations/, whose [[fig:...]] on_page_markdown writes in), the
    # README and the notebooks' markdown cells (these two are read where no substitution
    # reaches, on GitHub and in Jupyter: they state no measured figure, or mark it)
    typed = [p for p in sources if p.is_relative_to(ROOT / "docs") or p.parent == ROOT / "formulations"]
    typed += [p for p in sources if p.suffix == ".ipynb"]
    problems += docs_figures.typed_problems([*typed, ROOT / "README.md"], ROOT, TYPED_KNOWN)
    problems += docs_checks.broken_links(site, _state["base_path"], _state.get("sources", {}))
    expected = {
        page: [(ident, where, _key(obj)) for ident, where, obj in entries]
        for page, entries in _state["public_names"].items()
    }
    problems += docs_checks.undocumented(site, expected)
    _report(problems)
    runner.evict_unused()
    runner.shutdown()


def on_build_error(error) -> None:
    """A failed build starts no queued job (the running ones end on their own)."""
    runner = _state.get("runner")
    if runner is not None:
        runner.shutdown(wait=False)


def _key(obj) -> int | None:
    """An object's identity, or None for a plain value (two equal strings may be one object)."""
    return None if obj is None or isinstance(obj, (str, int, float, tuple, bool, frozenset)) else id(obj)


def _report(problems: list[str]) -> None:
    """Each problem as a warning (the strict build then fails), except the known ones."""
    hit = dict.fromkeys(KNOWN_FAILURES, 0)
    for p in problems:
        key = next((k for k in KNOWN_FAILURES if re.match(k, p)), None)
        if key is None:
            log.warning(p)
        else:
            hit[key] += 1
    for key, n in hit.items():
        if n:
            log.info(f"known ({KNOWN_FAILURES[key]}): {n} problem(s)")
        else:
            log.warning(f"no problem matches {key!r} ({KNOWN_FAILURES[key]}): remove it from KNOWN_FAILURES")
