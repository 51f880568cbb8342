"""Checks of the documentation site that mkdocs does not make (run by ``optsched_docs.py``).

Each check returns a list of problems, one line each, that start with the file and line a reader
fixes (``formulations/asrpt.md:526:``); the hook logs each as a warning, which fails the strict
build (``make docs``). The same functions back ``tests/test_docs_site.py``.

- :func:`control_characters`: a source page holds a control character (a TeX escape such as
  ``\\t`` or ``\\a`` turned into TAB or BEL by a script that read it as a string escape);
- :func:`broken_links`: over the *built* HTML, every relative ``href``/``src`` leads to a file of
  the site and every ``#anchor`` to an element of that page, including the links mkdocs does not
  validate (notebook pages, the API pages, the table of contents, the 404 page, which is served
  at any depth under the site's path);
- :func:`issue_mentions`: a built page mentions "issue N" (a working note, not user text);
- :func:`leaks`: a user page (not the contributor pages of :data:`CONTRIBUTOR_PAGES`) cites a
  test file, shows a private name, or numbers the papers as the project does internally;
- :func:`undocumented`: a public name (in a package's ``__all__``, or defined by a module its page
  renders, ``docs_pages.public_names``) that its API page does not show with a docstring.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: Every C0 control character but the line feed, and DEL: TAB and CR included (no page needs one).
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
#: "issue 16", "Issue 24's", "issues 12 and 13", "issue #5".
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.I)

#: What a user page does not show: a test file, a private name (``optsched.x._y``, ``_REPRO``),
#: the papers' internal numbers ("paper 004", "000/004", "Lazer (004)"). A reader cannot use any of them.
LEAKS = {
    "a test path": re.compile(r"\btests/[\w./-]*|\btest_\w+\.py\b"),
    "a private name": re.compile(r"\boptsched(?:\.\w+)*\._[a-z]\w*|(?<![\w.])_[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b"),
    "the papers' internal numbering": re.compile(r"\bpapers? 00\d\b|\b00\d/00\d\b|\(00\d\)"),
}
#: Pages for contributors, where tests and internals are the subject (checked for nothing of LEAKS).
CONTRIBUTOR_PAGES = ("adding-a-paper.md", "conventions.md", "help.md")

_TAG = re.compile(r"<(a|img|link|script|source|iframe|area)\b([^>]*)>", re.I)
_ATTR = re.compile(r'\b(href|src)\s*=\s*"([^"]*)"', re.I)
_ID = re.compile(r'\s(?:id|name)\s*=\s*"([^"]+)"')
_SKIP_SCHEMES = ("http:", "https:", "mailto:", "data:", "javascript:", "tel:", "ftp:")


# -- control characters ---------------------------------------------------------------------------


def _char_name(ch: str) -> str:
    return {"\t": "TAB", "\r": "CR", "\x07": "BEL", "\x08": "BS", "\x0c": "FF", "\x0b": "VT"}.get(
        ch, unicodedata.name(ch, f"U+{ord(ch):04X}")
    )


def control_characters(paths: Iterable[Path], root: Path) -> list[str]:
    """Every control character (but the line feed) in ``paths``, as ``file:line:col: ...``.

    A notebook is checked in its markdown cells (code may hold a TAB in a string), by the line of
    the ``.ipynb`` file where the cell's text is."""
    problems = []
    for path in sorted(paths):
        rel = path.relative_to(root).as_posix()
        text = path.read_bytes().decode("utf-8")  # as stored: reading text would turn a CR into a newline
        if path.suffix == ".ipynb":
            problems += _notebook_control_characters(text, rel)
            continue
        for lineno, line in enumerate(text.split("\n"), 1):
            for m in CONTROL.finditer(line):
                problems.append(_control_message(rel, lineno, m.start() + 1, line, m.group()))
    return problems


def _control_message(rel: str, line: int, col: int, text: str, ch: str) -> str:
    around = text[max(0, col - 30) : col + 30].replace(ch, "\N{REPLACEMENT CHARACTER}")
    return (
        f"{rel}:{line}:{col}: a control character ({_char_name(ch)}, U+{ord(ch):04X}) in {around!r}: "
        f"a TeX escape read as a string escape? (\\t -> TAB in \\tilde, \\a -> BEL in \\alpha, "
        f"\\r -> CR in \\rceil); write the backslash back"
    )


def _notebook_control_characters(text: str, rel: str) -> list[str]:
    problems = []
    lines = text.split("\n")
    cells = json.loads(text).get("cells", [])
    starts = [i for i, line in enumerate(lines, 1) if '"cell_type":' in line]
    for k, cell in enumerate(cells):
        if cell.get("cell_type") != "markdown":
            continue
        src = "".join(cell.get("source", []))
        for m in CONTROL.finditer(src):
            line = starts[k] if k < len(starts) else 1
            problems.append(_control_message(rel, line, m.start() + 1, src, m.group()) + f" (markdown cell {k + 1})")
    return problems


# -- links and anchors of the built site ----------------------------------------------------------


def _pages(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in sorted(site.rglob("*.html"))}


def page_ids(text: str) -> set[str]:
    """The ids (and ``name`` anchors) of one HTML page."""
    return {html.unescape(m) for m in _ID.findall(text)}


def page_links(text: str) -> list[tuple[int, str]]:
    """``(line, url)`` of every ``href`` and ``src`` of one HTML page."""
    out = []
    for m in _TAG.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        for _, url in _ATTR.findall(m.group(2)):
            out.append((line, html.unescape(url)))
    return out


def broken_links(site: Path, base_path: str = "/", sources: Mapping[str, Path] | None = None) -> list[str]:
    """Every link of the built site that leads nowhere, as ``source:line: page links to url: why``.

    ``base_path`` is the path the site is served under (``site_url``'s path, e.g. ``/optsched/``):
    an absolute link must start with it (the 404 page's links are absolute, so it works at any
    depth). ``sources`` maps a built page (``papers/lazer/index.html``) to its source file, so a
    problem names the line of the source where the link is written, when it is found there."""
    pages = _pages(site)
    ids = {}
    problems = []
    for rel, text in pages.items():
        for line, url in page_links(text):
            if not url or url.startswith(_SKIP_SCHEMES) or url.startswith("//"):
                continue
            parts = urlsplit(url)
            path, frag = unquote(parts.path), unquote(parts.fragment)
            if path.startswith("/"):
                if not path.startswith(base_path):
                    problems.append(_where(rel, line, url, sources, f"an absolute link outside {base_path}"))
                    continue
                target = path[len(base_path) :]
            elif path:
                target = str(Path(rel).parent / path)
            else:
                target = rel
            is_dir = path.endswith("/")
            target = _normalise(target)
            if target is not None and is_dir:
                target = f"{target}/index.html".lstrip("/")
            if target is None:
                problems.append(_where(rel, line, url, sources, "leads outside the site"))
                continue
            file = site / target
            if file.is_dir():
                target = f"{target.rstrip('/')}/index.html".lstrip("/")
                file = site / target
            if not file.is_file():
                problems.append(_where(rel, line, url, sources, f"no file {target} in the site"))
                continue
            if frag and target.endswith(".html"):
                if target not in ids:
                    ids[target] = page_ids(pages.get(target) or file.read_text(encoding="utf-8"))
                if frag not in ids[target]:
                    problems.append(_where(rel, line, url, sources, f"{target} has no anchor #{frag}"))
    return problems


def _normalise(target: str) -> str | None:
    parts: list[str] = []
    for part in target.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def _where(rel: str, line: int, url: str, sources: Mapping[str, Path] | None, why: str) -> str:
    src = (sources or {}).get(rel)
    if src is not None and src.exists():
        needle = url.split("#", 1)[1] if "#" in url else url.rstrip("/").rsplit("/", 1)[-1]
        needle = needle or url
        for n, text in enumerate(src.read_text(encoding="utf-8").split("\n"), 1):
            if needle and needle in text:
                return f"{src.as_posix()}:{n}: the link {url!r} ({rel}): {why}"
        return f"{src.as_posix()}: the link {url!r} ({rel}, line {line} of the built page): {why}"
    return f"{rel}:{line}: the link {url!r}: {why}"


# -- working notes on user pages ------------------------------------------------------------------


def leaks(paths: Iterable[Path], root: Path) -> list[str]:
    """Each test path, private name and internal paper number on the user pages among ``paths``
    (text and code blocks alike), as ``file:line: ...``; contributor pages are left out."""
    problems = []
    for path in sorted(paths):
        if path.name in CONTRIBUTOR_PAGES:
            continue
        rel = path.relative_to(root).as_posix()
        for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            for what, pattern in LEAKS.items():
                problems += [f"{rel}:{lineno}: {what} on a user page: {m.group()!r}" for m in pattern.finditer(line)]
    return problems


_SCRIPT = re.compile(r"<(script|style)\b.*?</\1>", re.S | re.I)
_TAGS = re.compile(r"<[^>]+>")


def visible_text(page_html: str) -> str:
    """The text of an HTML page as a reader sees it (no scripts, styles or tags)."""
    return html.unescape(_TAGS.sub(" ", _SCRIPT.sub(" ", page_html)))


def issue_mentions(site: Path) -> list[str]:
    """Every built page that mentions "issue N", with the mentions (working notes belong in git
    and the changelog, not on a page a user reads)."""
    problems = []
    for rel, text in _pages(site).items():
        found = sorted({m.group() for m in ISSUE.finditer(visible_text(text))})
        if found:
            problems.append(f"{rel}: mentions {', '.join(found)}")
    return problems


# -- every public name documented -----------------------------------------------------------------


def undocumented(site: Path, expected: Mapping[str, list[tuple[str, str, int | None]]]) -> list[str]:
    """Public names missing from their API page or shown there without a docstring.

    ``expected`` maps an API page (``reference/rigid/index.html``) to ``(identifier, where, key)``
    triples: the heading id mkdocstrings gives the object (``optsched.rigid.solve_exact``), the
    ``file:line`` where it is defined (or exported), and a key of the object itself (``id()``;
    None for plain values). A name whose object is documented under another name (an alias such
    as ``build_cpsat = build_interval_cpsat``, or ``optsched.verify``, the function documented
    on the ``optsched.verify`` page) counts as documented."""
    texts = {rel: (site / rel).read_text(encoding="utf-8") if (site / rel).exists() else "" for rel in expected}
    missing = []
    documented_keys = set()
    for rel, names in expected.items():
        for ident, where, key in names:
            block = _object_block(texts[rel], ident)
            if block is None:
                missing.append((rel, ident, where, key, "not on"))
            elif not _has_text(block):
                missing.append((rel, ident, where, key, "without a docstring on"))
            elif key is not None:
                documented_keys.add(key)
    return [
        f"{where}: {ident} is public but {why} {rel}: give it a docstring"
        for rel, ident, where, key, why in missing
        if key is None or key not in documented_keys
    ]


def _object_block(text: str, ident: str) -> str | None:
    m = re.search(rf'<h\d id="{re.escape(ident)}"', text)
    if m is None:
        return None
    end = text.find('<div class="doc doc-object', m.end())
    return text[m.start() : end if end > 0 else len(text)]


def _has_text(block: str) -> bool:
    if 'class="doc doc-contents' not in block:
        return False
    body = block.split('class="doc doc-contents', 1)[1]
    body = re.sub(r'<div class="doc-signature.*?</div>', " ", body, flags=re.S)
    body = re.sub(r'<div class="language-python doc-signature.*?</div>', " ", body, flags=re.S)
    return bool(re.search(r"<p>\s*\S", body))
