"""A griffe extension (see ``mkdocs.yml``): Sphinx roles in docstrings become links on the site.

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
    """Rewrite the Sphinx roles of every docstring once the package is loaded."""

    def on_package(self, *, pkg: Object, **kwargs: Any) -> None:
        self._walk(pkg, set())

    def _walk(self, obj: Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = convert(obj.docstring.value, obj)
        for member in obj.members.values():
            if not member.is_alias:
                self._walk(member, seen)
