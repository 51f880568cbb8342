"""Build-time additions to the documentation site (an mkdocs hook, see ``mkdocs.yml``).

- ``formulations/*.md`` and ``notebooks/*.ipynb`` (and ``notebooks/README.md``) live outside
  ``docs/``: they are added to the site from where they are, not copied into ``docs/``;
- one API reference page per subpackage of ``optsched`` (``reference/<name>.md``, rendered by
  mkdocstrings from the docstrings);
- ``cli.md``: the ``--help`` of ``optsched`` and of every subcommand, as the parser prints it;
- MathJax 3 from the installed ``django-static-mathjax`` wheel, served from the site itself
  (``javascripts/mathjax/``): the site works with no network;
- the ``auto:`` entries of ``nav`` in ``mkdocs.yml`` are expanded (globs and generated lists), so
  a renamed notebook or a new paper package needs no edit of ``mkdocs.yml``;
- markdown written for GitHub is read as GitHub reads it (a list right after a paragraph line),
  without changing the files.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import pkgutil
import re
import sys
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]

#: Shared layers first, in the order of the dependency direction; paper packages follow.
SHARED_ORDER = ("core", "solvers", "verify", "sim", "traces", "plot", "experiments")
#: Not an API page: the CLI has its own page (``cli.md``).
NOT_REFERENCE = {"commands"}
#: Public modules of ``optsched.experiments`` rendered on its page (it has no ``__all__``).
EXPERIMENT_MODULES = ("registry", "sweep", "compare", "demo")
#: MathJax's TeX input with SVG output in one file: the glyphs are paths, no web fonts to serve.
MATHJAX_FILES = ("tex-svg-full.js",)


def _subpackages() -> list[str]:
    """Every subpackage of ``optsched`` in this checkout: shared layers, then papers (sorted)."""
    names = [m.name for m in pkgutil.iter_modules([str(ROOT / "optsched")]) if m.ispkg and not m.name.startswith("_")]
    names = [n for n in names if n not in NOT_REFERENCE]
    shared = [n for n in SHARED_ORDER if n in names]
    return shared + sorted(n for n in names if n not in SHARED_ORDER)


def _reference_pages() -> dict[str, str]:
    """``reference/<name>.md`` -> its markdown (one mkdocstrings block per page)."""
    pages = {
        "reference/index.md": _reference_index(),
        "reference/optsched.md": "# `optsched`\n\n::: optsched\n    options:\n      show_root_heading: false\n",
        "reference/exceptions.md": "# `optsched.exceptions`\n\n::: optsched.exceptions\n"
        "    options:\n      show_root_heading: false\n",
    }
    for name in _subpackages():
        if name == "experiments":
            body = "".join(f"::: optsched.experiments.{m}\n\n" for m in EXPERIMENT_MODULES)
            pages["reference/experiments.md"] = f"# `optsched.experiments`\n\n{body}"
        else:
            pages[f"reference/{name}.md"] = (
                f"# `optsched.{name}`\n\n::: optsched.{name}\n    options:\n      show_root_heading: false\n"
            )
    return pages


def _reference_index() -> str:
    rows = "\n".join(f"| [`optsched.{n}`]({n}.md) | {_first_line(n)} |" for n in _subpackages())
    return (
        "# API reference\n\nGenerated from the docstrings (numpydoc) of the public names of each package "
        "(its `__all__`). The same docstrings answer `help(...)` in Python; their Examples run as "
        "doctests in `tests/test_doctests.py`.\n\n"
        "| package | what |\n|---|---|\n"
        "| [`optsched`](optsched.md) | the top level: load, solve, verify |\n"
        "| [`optsched.exceptions`](exceptions.md) | the one error hierarchy |\n"
        f"{rows}\n"
    )


def _first_line(name: str) -> str:
    """The first sentence of a subpackage's docstring, read from the source (no import)."""
    text = (ROOT / "optsched" / name / "__init__.py").read_text(encoding="utf-8")
    m = re.match(r'\s*(?:#[^\n]*\n\s*)*[rub]*"""(.*?)(?:\.\s|\n\n|""")', text, re.S)
    line = " ".join(m.group(1).split()) if m else ""
    return line.replace("|", "\\|").replace("``", "`")


# -- the CLI page ---------------------------------------------------------------------------------


def _help_text(parser: argparse.ArgumentParser) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        parser.print_help()
    return buf.getvalue().rstrip()


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    # argparse has no public accessor for a parser's subcommands
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def cli_markdown() -> str:
    """The CLI page: the --help of ``optsched`` and of every (sub)subcommand, as printed."""
    from optsched.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal width: make the page reproducible
    try:
        root = build_parser()
        parts = [
            "# Command line\n",
            "Generated at build time from the `--help` of `optsched` and of every subcommand (the "
            "parser in `optsched/commands/`), so it cannot drift from the code. Exit codes: 0 ok; "
            "1 infeasible, no solution or a failed check; 2 bad input. `python -m optsched` runs the same "
            "command.\n",
            f"```text\n$ optsched --help\n{_help_text(root)}\n```\n",
        ]

        def walk(parser: argparse.ArgumentParser, prefix: str, level: int) -> None:
            for name, sub in _subparsers(parser).items():
                cmd = f"{prefix} {name}"
                parts.append(f"{'#' * level} `{cmd}`\n")
                parts.append(f"```text\n$ {cmd} --help\n{_help_text(sub)}\n```\n")
                walk(sub, cmd, min(level + 1, 4))

        walk(root, "optsched", 2)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)


# -- GitHub markdown read as GitHub reads it ------------------------------------------------------

_INLINE_ID = re.compile(r" ?\{#([A-Za-z][\w-]*)\}")
# a list that may interrupt a paragraph in CommonMark (GitHub): a bullet, or an ordered list from 1
_LIST_START = re.compile(r"^\s{0,3}(?:[-*+]|1[.)])\s+\S")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+\S")
_FENCE = re.compile(r"^\s*(```|~~~)")


def github_markdown(markdown: str) -> str:
    """Read markdown written for GitHub as GitHub reads it, for Python-Markdown:

    - insert the blank line that Python-Markdown needs before a list which, as GitHub allows,
      follows a paragraph line directly;
    - an anchor ``{#id}`` inside a paragraph or list item (GitHub shows it as text; attr_list
      reads it only at the end of a heading or block) becomes an empty ``<span id="id">``, so
      links to ``#id`` land there.

    Headings, code fences and indented code are left alone."""
    out: list[str] = []
    in_fence = False
    prev = ""
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif (
            not in_fence
            and _LIST_START.match(line)
            and prev.strip()
            and not _LIST_ITEM.match(prev)
            and not prev.startswith((" ", "\t", "|", "#"))  # code, a list item's next line, table, heading
            and not prev.lstrip().startswith(("- ", "* ", "+ "))
        ):
            out.append("")
        if not in_fence and not line.startswith(("#", "    ", "\t")) and "{#" in line:
            line = _INLINE_ID.sub(lambda m: f'<span id="{m.group(1)}"></span>', line)
        out.append(line)
        prev = line if not in_fence else ""
    return "\n".join(out)


# -- mkdocs events --------------------------------------------------------------------------------


def _expand(entry):
    """One nav entry with its ``auto:`` placeholders expanded."""
    if isinstance(entry, dict):
        return {k: _expand(v) for k, v in entry.items()}
    if isinstance(entry, list):
        return [_expand(v) for v in entry]
    if not (isinstance(entry, str) and entry.startswith("auto:")):
        return entry
    what = entry.removeprefix("auto:")
    if what == "reference":
        return list(_reference_pages())
    folder, pattern = what.split("/", 1)
    found = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / folder).glob(pattern))
    if not found:
        raise ValueError(f"nav entry {entry!r} in mkdocs.yml matches no file under {ROOT}")
    index = ROOT / folder / "README.md"
    return ([f"{folder}/README.md"] if index.exists() else []) + [_titled(uri) for uri in found]


def _titled(uri: str):
    """A notebook's nav entry titled by its first heading, as written (mkdocs-jupyter's own title
    drops code spans: "... (`rarddls`)" would read "... ()")."""
    if not uri.endswith(".ipynb"):
        return uri
    nb = json.loads((ROOT / uri).read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            first = "".join(cell.get("source", [])).strip().splitlines()[:1]
            if first and first[0].startswith("# "):
                return {first[0][2:].replace("`", "").replace("*", "").strip(): uri}
            break
    return uri


def on_config(config):
    if str(ROOT) not in sys.path:  # this checkout's optsched, not an installed one
        sys.path.insert(0, str(ROOT))
    config.nav = _expand(config.nav)
    return config


def _mathjax_dir() -> Path:
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "MathJax is missing: install the docs extra (`pip install -e '.[docs]'`, "
            "which brings django-static-mathjax)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"


@event_priority(100)  # before mkdocs-jupyter, which turns the .ipynb files it is given into pages
def on_files(files: Files, config) -> Files:
    for folder, patterns in (("formulations", ("*.md",)), ("notebooks", ("*.ipynb", "README.md"))):
        for pattern in patterns:
            for path in sorted((ROOT / folder).glob(pattern)):
                # a plain File rooted at the repository (not File.generated): mkdocs-jupyter's
                # NotebookFile finds the source through src_dir
                uri = path.relative_to(ROOT).as_posix()
                files.append(File(uri, str(ROOT), config.site_dir, config.use_directory_urls))
    for uri, text in _reference_pages().items():
        files.append(File.generated(config, uri, content=text))
    files.append(File.generated(config, "cli.md", content=cli_markdown()))
    es5 = _mathjax_dir()
    for name in MATHJAX_FILES:
        files.append(File.generated(config, f"javascripts/mathjax/{name}", abs_src_path=str(es5 / name)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    return github_markdown(markdown)


_HREF = re.compile(r'href="(?![a-z]+:|#|/)([^"#]+\.(?:md|ipynb))(#[^"]*)?"')


def on_page_content(html: str, page, config, files):
    """Notebook pages: a link to a repository file (``../formulations/sojourn.md``) points to its
    page on the site. mkdocs validates markdown links only; a notebook link that leads nowhere
    fails the strict build here."""
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    from mkdocs.exceptions import PluginError

    def repl(m: re.Match) -> str:
        uri = os.path.normpath(os.path.join(os.path.dirname(page.file.src_uri), m.group(1))).replace(os.sep, "/")
        target = files.get_file_from_path(uri)
        if target is None:
            raise PluginError(f"{page.file.src_uri}: the link {m.group(1)!r} leads to no page of the site")
        return f'href="{target.url_relative_to(page.file)}{m.group(2) or ""}"'

    return _HREF.sub(repl, html)
