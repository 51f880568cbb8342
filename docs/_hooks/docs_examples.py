"""*Examples using this*: under each API entry, the notebooks and pages whose code uses it.

The code of every notebook and the ``python`` blocks of every page are read with :mod:`ast`
(never run here): ``import optsched``, ``from optsched.x import y as z`` and the attribute
chains on them (``optsched.rigid.solve_exact``) name objects, which are looked up and matched by
identity with the public names of the API pages, so a function used under another path
(``from optsched.sim.engine import Simulator``) is found under the name it is documented by
(``optsched.sim.Simulator``).
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from collections.abc import Iterable, Mapping
from html import escape
from pathlib import Path

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_MAGIC = re.compile(r"^\s*[%!].*$", re.M)


def code_of(path: Path) -> str:
    """The Python code of a notebook (its code cells) or a page (its ``python`` blocks)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = json.loads(text).get("cells", [])
        chunks = ["".join(c.get("source", [])) for c in cells if c.get("cell_type") == "code"]
    else:
        chunks = _BLOCK.findall(text)
    return "\n".join(_MAGIC.sub("", c) for c in chunks)


def used_paths(code: str) -> set[str]:
    """Dotted paths of the optsched objects ``code`` names (imports and attribute chains)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    alias: dict[str, str] = {}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "optsched" or a.name.startswith("optsched."):
                    alias[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "optsched":
            for a in node.names:
                if a.name != "*":
                    alias[a.asname or a.name] = f"{node.module}.{a.name}"
                    found.add(f"{node.module}.{a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = []
            cur: ast.AST = node
            while isinstance(cur, ast.Attribute):
                chain.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in alias:
                found.add(".".join([alias[cur.id], *reversed(chain)]))
        elif isinstance(node, ast.Name) and node.id in alias:
            found.add(alias[node.id])
    return found


def _resolve(path: str) -> object | None:
    """The object a dotted path names, or None (a module attribute chain, imported as needed)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def usages(sources: Iterable[Path], documented: Mapping[str, object]) -> dict[str, list[Path]]:
    """Documented identifier -> the sources whose code uses it. ``documented`` maps each
    documented identifier (``optsched.rigid.solve_exact``) to its object."""
    by_id: dict[int, list[str]] = {}
    for ident, obj in documented.items():
        if obj is not None and not isinstance(obj, (str, int, float, tuple, bool)):
            by_id.setdefault(id(obj), []).append(ident)
    out: dict[str, list[Path]] = {}
    for src in sorted(sources):
        hits: set[str] = set()
        for path in used_paths(code_of(src)):
            if path in documented:
                hits.add(path)
                continue
            obj = _resolve(path)
            if obj is not None:
                hits.update(by_id.get(id(obj), []))
        for ident in hits:
            out.setdefault(ident, []).append(src)
    return out


_HEADING = re.compile(r'<h(\d) id="(optsched\.[\w.]+)" class="doc doc-heading">')


def insert_links(page_html: str, links: Mapping[str, list[tuple[str, str]]]) -> str:
    """Put, after each documented object's own docstring (before its members or the next object),
    the list of ``(title, url)`` that use it."""
    spots = []
    for m in _HEADING.finditer(page_html):
        ident = m.group(2)
        if ident not in links:
            continue
        nxt = [
            i
            for i in (
                page_html.find('<div class="doc doc-object', m.end()),
                page_html.find('<div class="doc doc-children', m.end()),
                page_html.find("</article>", m.end()),
            )
            if i > 0
        ]
        if nxt:
            spots.append((min(nxt), ident))
    for pos, ident in sorted(spots, reverse=True):
        items = " · ".join(f'<a href="{escape(url)}">{escape(title)}</a>' for title, url in links[ident])
        block = (
            '<div class="admonition example optsched-examples"><p class="admonition-title">Examples using this</p>'
            f"<p>{items}</p></div>\n"
        )
        page_html = page_html[:pos] + block + page_html[pos:]
    return page_html
