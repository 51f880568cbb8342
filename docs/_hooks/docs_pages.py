"""Pages the site build writes or reads differently (``optsched_docs.py``).

- one API reference page per subpackage of ``optsched`` (``reference/<name>.md``, rendered by
  mkdocstrings from the docstrings), and the public names each one must show;
- ``cli.md``: the ``--help`` of ``optsched`` and of every subcommand, at the page's width;
- the ``auto:`` entries of ``nav`` in ``mkdocs.yml`` expanded (globs and generated lists), each
  page titled by its paper's name;
- markdown written for GitHub read as GitHub reads it (a list right after a paragraph line),
  without changing the files.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import inspect
import io
import os
import pkgutil
import re
from pathlib import Path

import docs_notebooks

ROOT = Path(__file__).resolve().parents[2]

#: Shared layers first, in the order of the dependency direction; paper packages follow.
SHARED_ORDER = ("core", "solvers", "verify", "sim", "traces", "plot", "experiments")
#: Not an API page: the CLI has its own page (``cli.md``).
NOT_REFERENCE = {"commands"}
#: Public modules of ``optsched.experiments`` rendered on its page, one by one (the package
#: presents no face of its own: its ``__init__`` is empty).
EXPERIMENT_MODULES = ("registry", "sweep", "compare", "demo")
#: Each paper (and the foundation problem) by name: the titles of its formulation in the
#: navigation. The key is the package, the formulation's file name and the instance folder.
PAPER_TITLES = {
    "rigid": "Rigid GPU jobs (the foundation)",
    "asrpt": "A-SRPT: mixed-parallelism jobs",
    "elastic": "Elastic ML jobs: A_online",
    "rarddls": "Ring-all-reduce jobs: SJF-BCO",
    "sojourn": "Sojourn time of successful jobs",
    "lazer": "Lazer: futile preemptions",
}
#: The width of the CLI page's help text: what fits the page's code blocks without scrolling.
CLI_COLUMNS = 80


def subpackages() -> list[str]:
    """Every subpackage of ``optsched`` in this checkout: shared layers, then papers (sorted)."""
    names = [m.name for m in pkgutil.iter_modules([str(ROOT / "optsched")]) if m.ispkg and not m.name.startswith("_")]
    names = [n for n in names if n not in NOT_REFERENCE]
    shared = [n for n in SHARED_ORDER if n in names]
    return shared + sorted(n for n in names if n not in SHARED_ORDER)


def reference_pages() -> dict[str, str]:
    """``reference/<name>.md`` -> its markdown (one mkdocstrings block per page)."""
    pages = {
        "reference/index.md": _reference_index(),
        "reference/optsched.md": "# `optsched`\n\n::: optsched\n    options:\n      show_root_heading: false\n",
        "reference/exceptions.md": "# `optsched.exceptions`\n\n::: optsched.exceptions\n"
        "    options:\n      show_root_heading: false\n",
    }
    for name in subpackages():
        if name == "experiments":
            body = "".join(f"::: optsched.experiments.{m}\n\n" for m in EXPERIMENT_MODULES)
            pages["reference/experiments.md"] = f"# `optsched.experiments`\n\n{body}"
        else:
            pages[f"reference/{name}.md"] = (
                f"# `optsched.{name}`\n\n::: optsched.{name}\n    options:\n      show_root_heading: false\n"
            )
    return pages


def _reference_index() -> str:
    rows = "\n".join(f"| [`optsched.{n}`]({n}.md) | {_first_line(n)} |" for n in subpackages())
    return (
        "# API reference\n\nGenerated from the docstrings (numpydoc) of the public names of each package "
        "(the `__all__` of its `__init__`). The same docstrings answer `help(...)` in Python; their Examples run as "
        "doctests. Under an entry, *Examples using this* lists the notebooks and pages whose code "
        "uses it.\n\n"
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


def public_names() -> dict[str, list[tuple[str, str, object]]]:
    """API page (``reference/<name>/index.html``) -> ``(identifier, file:line, object)`` of every
    public name it must show: a package's ``__all__``; for ``optsched.exceptions`` and the modules
    of ``optsched.experiments``, the names each defines (:func:`module_public_names`)."""
    out: dict[str, list[tuple[str, str, object]]] = {}
    modules = {"optsched": "optsched", "exceptions": "optsched.exceptions"}
    for name in subpackages():
        if name == "experiments":
            for m in EXPERIMENT_MODULES:
                modules[f"experiments:{m}"] = f"optsched.experiments.{m}"
        else:
            modules[name] = f"optsched.{name}"
    for page, modname in modules.items():
        mod = importlib.import_module(modname)
        names = module_public_names(mod)
        init = Path(inspect.getsourcefile(mod) or "")
        rel_init = _rel(init)
        lines = init.read_text(encoding="utf-8").split("\n") if init.is_file() else []
        key = f"reference/{page.split(':')[0]}/index.html"
        for n in names:
            obj = getattr(mod, n, None)
            if inspect.ismodule(obj):  # a module has a page of its own
                continue
            where = _where(obj, rel_init, lines, n)
            out.setdefault(key, []).append((f"{modname}.{n}", where, obj))
    return out


def module_public_names(mod: object) -> list[str]:
    """The public names of a module, as the API generator (griffe) reads them: the ``__all__`` of a
    package's ``__init__`` (its face); else, in source order, every name the module itself defines
    (``def``, ``class`` or an assignment, at the top level or under a top-level ``if``/``try``)
    that does not start with ``_``. A name it imports is not public there (it is public where it
    is defined)."""
    if hasattr(mod, "__all__"):
        return list(mod.__all__)
    source = Path(inspect.getsourcefile(mod) or "").read_text(encoding="utf-8")
    return [n for n in dict.fromkeys(_defined(ast.parse(source).body)) if not n.startswith("_")]


def _defined(body: list[ast.stmt]):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            yield from (t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.If):
            yield from _defined(node.body)
            yield from _defined(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _defined(part)


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def _where(obj: object, rel_init: str, lines: list[str], name: str) -> str:
    """Where a reader documents ``name``: its definition (a function or class by inspection, a
    constant by its top-level assignment in the package's files), else its line in the
    package's ``__init__``."""
    if inspect.isfunction(obj) or inspect.isclass(obj):
        try:
            return f"{_rel(Path(inspect.getsourcefile(obj)))}:{inspect.getsourcelines(obj)[1]}"
        except (OSError, TypeError):
            pass
    assign = re.compile(rf"^{re.escape(name)}\s*(?::[^=\n]*)?=", re.M)
    init = ROOT / rel_init
    for path in sorted(init.parent.glob("*.py"), key=lambda p: p.name == "__init__.py"):
        text = path.read_text(encoding="utf-8")
        m = assign.search(text)
        if m:
            return f"{_rel(path)}:{text.count(chr(10), 0, m.start()) + 1}"
    for i, line in enumerate(lines, 1):
        if re.search(rf"['\"]{re.escape(name)}['\"]", line):
            return f"{rel_init}:{i}"
    return rel_init


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
    """The CLI page: the --help of ``optsched`` and of every (sub)subcommand, as printed at
    :data:`CLI_COLUMNS` columns (argparse wraps at the terminal width)."""
    from optsched.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(CLI_COLUMNS)
    try:
        root = build_parser()
        parts = [
            "# Command line\n",
            "Generated at build time from the `--help` of `optsched` and of every subcommand, so it "
            "cannot drift from the code. Exit codes: 0 ok; 1 infeasible, no solution or a failed check; "
            "2 bad input. `python -m optsched` runs the same command.\n",
            f"```text\n$ optsched --help\n{_help_text(root)}\n```\n",
        ]

        def walk(parser: argparse.ArgumentParser, prefix: str, level: int) -> None:
            for name, sub in _subparsers(parser).items():
                cmd = f"{prefix} {name}"
                parts.append(f"{'#' * level} `{cmd}`\n")
                parts.append(f"```text\n$ {cmd} --help\n{_help_text(sub)}\n```\n")
                walk(sub, cmd, min(level + 1, 4))

        walk(root, "optsched", 2)
        # argparse wraps what it formats; the descriptions and examples keep their lines, which
        # the page wraps at its width (docs/stylesheets/optsched.css): no sideways scrolling
        parts.insert(1, '<div class="optsched-cli" markdown>\n')
        parts.append("</div>\n")
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)


# -- the navigation -------------------------------------------------------------------------------


def expand(entry):
    """One nav entry with its ``auto:`` placeholders expanded."""
    if isinstance(entry, dict):
        return {k: expand(v) for k, v in entry.items()}
    if isinstance(entry, list):
        return [expand(v) for v in entry]
    if not (isinstance(entry, str) and entry.startswith("auto:")):
        return entry
    what = entry.removeprefix("auto:")
    if what == "reference":
        return list(reference_pages())
    folder, pattern = what.split("/", 1)
    order = list(PAPER_TITLES)  # formulations in the order of the Papers tab, the others after
    found = sorted(
        (p.relative_to(ROOT).as_posix() for p in (ROOT / folder).glob(pattern)),
        key=lambda uri: (order.index(Path(uri).stem) if Path(uri).stem in order else len(order), uri),
    )
    if not found:
        raise ValueError(f"nav entry {entry!r} in mkdocs.yml matches no file under {ROOT}")
    index = ROOT / folder / "README.md"
    return ([f"{folder}/README.md"] if index.exists() else []) + [titled(uri) for uri in found]


def titled(uri: str):
    """A nav entry titled by its paper's name (formulations) or its first heading (notebooks)."""
    path = ROOT / uri
    if uri.startswith("formulations/") and path.stem in PAPER_TITLES:
        return {PAPER_TITLES[path.stem]: uri}
    if uri.endswith(".ipynb"):
        title = docs_notebooks.title(path)
        return {title: uri} if title else uri
    return uri


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


# -- generated blocks inside written pages --------------------------------------------------------


def bibtex(citation_cff: Path) -> str:
    """The BibTeX entry of the software, from ``CITATION.cff`` (so the two cannot disagree)."""
    import yaml

    cff = yaml.safe_load(citation_cff.read_text(encoding="utf-8"))
    authors = " and ".join(
        a.get("name") or f"{a.get('family-names', '')}, {a.get('given-names', '')}".strip(", ")
        for a in cff.get("authors", [])
    )
    year = str(cff.get("date-released", ""))[:4]
    fields = {
        "author": authors,
        "title": f"{{{cff['title']}}}: {cff.get('abstract', '').split('.')[0]}".rstrip(": "),
        "version": str(cff.get("version", "")),
        "year": year,
        "url": cff.get("repository-code") or cff.get("url", ""),
        "license": cff.get("license", ""),
    }
    body = ",\n".join(f"  {k:<8}= {{{v}}}" for k, v in fields.items() if v)
    return f"```bibtex\n@software{{optsched,\n{body}\n}}\n```\n"


def demo_table(demo_csv: Path, instance: str) -> str:
    """The rows of ``optsched demo --out`` for one instance, as a markdown table."""
    import csv

    with demo_csv.open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["instance"] == instance]
    if not rows:
        raise ValueError(f"{demo_csv} has no row for {instance!r}")
    head = "| algorithm | objective | proven optimum | ratio | status | verified |\n|---|---|---|---|---|---|\n"

    def num(v: str) -> str:
        try:
            return f"{round(float(v), 3):g}"
        except ValueError:
            return v or "-"

    lines = [
        f"| `{r['algorithm']}` | {num(r['objective'])} | {num(r['optimum'])} | {num(r['ratio'])} | "
        f"{r['status']} | {'yes' if r['verified'] == 'True' else 'no'} |"
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"
