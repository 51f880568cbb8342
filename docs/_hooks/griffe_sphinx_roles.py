"""A griffe extension (see ``mkdocs.yml``): docstrings written for ``help()`` read well on the site.

Doctest blocks
--------------
A doctest outside the numpydoc "Examples" section (in a module's or function's description) is
plain text to Markdown: ``>>>`` starts a triple blockquote and an output such as
``['a.png', 'b.svg']`` reads as a cross-reference. Each such block (from a ``>>>`` line to the
next blank line) is wrapped in a ``pycon`` code fence, at its own indentation. The Examples
section is left to griffe, which renders it as code already.

Sphinx roles
------------

optsched's numpydoc docstrings cross-reference with Sphinx roles (``:func:`solve_exact```,
``:class:`~optsched.core.Instance```), which ``help()`` shows as written and mkdocstrings would
show verbatim. Each role becomes an *optional* autorefs cross-reference: a link to the object's
entry in the API reference when it has one, plain code otherwise (never a broken link, so the
strict build does not depend on every name being rendered). Names are looked up as written,
then in the object's class and module, then in ``optsched``.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_FENCE = re.compile(r"^\s*(```|~~~)")


def fence_doctests(text: str) -> str:
    """Wrap every doctest block of ``text`` outside its "Examples" section in a ``pycon`` fence
    (tested in ``tests/test_docs_site.py``)."""
    out: list[str] = []
    lines = text.split("\n")
    in_fence = in_examples = False
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not in_fence and re.fullmatch(r"-{3,}", nxt.strip()) and line.strip():
            in_examples = line.strip() == "Examples"  # a numpydoc section header starts here
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not in_examples and line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            if out and out[-1].strip():  # a fence needs a blank line after a paragraph
                out.append("")
            out += [f"{indent}```pycon", *block, f"{indent}```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj|const):`(~?)([\w.]+)(?:\(\))?`")


def _candidates(name: str, obj: Object) -> list[str]:
    out = [name]
    scope: Any = obj if obj.is_class or obj.is_module else obj.parent
    while scope is not None:
        out.append(f"{scope.path}.{name}")
        scope = scope.parent
    out.append(f"optsched.{name}")
    return out


def _exists(path: str, obj: Object) -> bool:
    try:
        obj.modules_collection[path]
    except Exception:  # KeyError, or an alias that does not resolve
        return False
    return True


def convert(text: str, obj: Object) -> str:
    """Replace every Sphinx role of ``text`` by an optional autorefs cross-reference."""

    def repl(m: re.Match) -> str:
        tilde, name = m.group(1), m.group(2)
        shown = name.rsplit(".", 1)[-1] if tilde else name
        target = next((c for c in _candidates(name, obj) if _exists(c, obj)), name)
        return f"<autoref identifier={target!r} optional><code>{shown}</code></autoref>"

    return _ROLE.sub(repl, text)


class SphinxRoles(Extension):
    """Fence the doctest blocks and rewrite the Sphinx roles of every docstring once the package
    is loaded."""

    def on_package(self, *, pkg: Object, **kwargs: Any) -> None:
        self._walk(pkg, set())

    def _walk(self, obj: Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            value = obj.docstring.value
            if ">>>" in value:
                value = fence_doctests(value)
            if ":" in value:
                value = convert(value, obj)
            obj.docstring.value = value
        for member in obj.members.values():
            if not member.is_alias:
                self._walk(member, seen)
