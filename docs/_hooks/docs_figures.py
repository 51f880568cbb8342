"""Measured figures on the pages, read from ``benchmarks/results/`` when the site is built.

A page never types a time or a ratio it measured; it names the result instead, and the build
writes the value in (:func:`substitute`, called by ``optsched_docs.py`` on every page)::

    [[fig:compare/cases/all-10k/total_seconds]]          ->  136
    [[fig:compare/cases/all-10k/total_seconds as min]]   ->  2.27     (seconds shown in minutes)
    [[fig:sim/cases/kernel-compile/compile_seconds as .1f]] ->  34.4  (a format spec)
    [[when:compare/cases/all-10k]]                       ->  measured 2026-11-28, load average 2.0

**The key.** ``<file>/<path...>``: ``<file>`` is a results file ``benchmarks/results/<file>.json``
(without ``.json``), then one step per level of its JSON: a dict's key, or, in a list, the entry
whose ``case`` is the step (``all-10k``), or ``field=value`` for an entry whose ``field`` is
``value`` (``instance=n30-4x4``; several joined by ``&``: ``case=compare&signal=SIGINT``), or an
index (``0``). The same convention as ``python -m
benchmarks``'s targets. Three more steps on a list: ``all(field=value)`` (``&`` as above) keeps
every entry that matches, as a list; ``min(field)`` and ``max(field)`` are the least and greatest of
that field over the list's entries, or a dict's values (``runs/all(n=32)/min(seconds)``;
``phases.starting`` for a field of a field; ``min()`` over a list of numbers).

**Tables.** A line ``[[rows:<key>]]`` followed by a row template writes the template once per
entry of the list (or dict) at ``<key>``; ``{path}`` and ``{path as format}`` in the template name a
value of the entry, as a key's steps do. ``[[rows:<key> by f1,f2]]`` writes it once per distinct
``f1, f2`` of the entries (in their order): ``{f1}`` is the value, any other path steps into the
list of that group's entries (``{backend=highs/wall}``). A value that is ``null`` in the file is
shown as an en dash; ``{path else text}`` shows ``text`` where an entry has no such value (a
member that reported nothing). So a table of a run is one template, not a figure typed per cell.

**The format** after `` as ``: ``min`` or ``h`` (seconds shown in minutes or hours), ``ms``
(seconds shown in milliseconds), ``x`` (a ratio, two decimals below 10, else none), ``on`` (true
or false shown as on or off), ``result`` (a solve's entry: ``**opt** 94`` when its ``status`` is
``optimal``, else ``objective / bound``, or ``objective, no bound``), or a
Python format spec (``.2f``, ``,.0f``). Without one: three significant figures, thousands
separated (``136``, ``1,611``, ``0.93``).

**When and where.** ``[[when:<key>]]`` writes the date and the machine's load average of the run:
the nearest ``measured`` or ``date`` and ``load_average`` (or ``load_1min``,
``load_average_1min``) on the way from the key's entry up to the file's top. A results file, or
an entry that has no date fails the build, as an unknown key does: the message names the page,
the key and the command that measures it (:data:`COMMANDS`).

**No typed figures** (:func:`typed_figures`): outside code and ``[[...]]``, a number followed by
a time unit (``136 s``, ``40 minutes``, ``1.8 h``) or a ratio (``13.6x for``, ``3.6x the``) on a
checked page is reported, so one run cannot be stated with two values ("6 min" in one section
and "40 min" in another for one comparison). A line's figures that are no measurement of ours
carry a comment on that line, which neither the site nor GitHub shows:

- ``<!-- not measured -->`` (:data:`NOT_MEASURED`): a time limit, an input, a unit's range, the
  exact result of a worked example whose code the tests run;
- ``<!-- paper -->`` (:data:`PAPER`): quoted from a paper (its table, a theorem's constant, the
  speedup it reports), not measured here.

A figure measured once by hand, which no benchmark writes, is an entry of ``recorded.json``
(pages under docs/) or ``recorded_formulations.json`` (formulations/) naming the commit that
first stated it, until a benchmark measures it.

Pages and sections written before this check are listed in ``optsched_docs.TYPED_KNOWN`` with
the number of figures they still type: a section that types more fails (a new figure is named or
marked), one that types fewer fails until its count is lowered, so the list only shrinks.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

#: ``[[fig:key]]``, ``[[fig:key as format]]``, ``[[when:key]]`` (no ``|``: it would split a
#: table's cell). ``[[`` then a word and a colon cannot be Markdown (a link is ``[text](url)``),
#: TeX (``[[`` is no TeX command) or Jinja.
FIGURE = re.compile(r"\[\[(fig|when):([^\]\n]+?)(?: as ([^\]\s]+))?\]\]")
#: The comment that marks a line's figures as not measured (a limit, an input, a range).
NOT_MEASURED = "<!-- not measured -->"
#: The comment that marks a line's figures as the paper's own (quoted, not measured here).
PAPER = "<!-- paper -->"
#: The command that writes each results file, for the message of a missing key.
COMMANDS: dict[str, str] = {
    "compare": "python -m benchmarks.bench_compare --case CASE",
    "sim": "python -m benchmarks.bench_sim --case CASE",
    "startup": "python -m benchmarks.bench_startup",
    "solve_limit": "python -m benchmarks.bench_solve_limit",
    "signal": "python -m benchmarks.bench_signal",
    "exact_peer": "python -m benchmarks.bench_exact_peer",
    "exact_bounds": "python -m benchmarks.bench_exact_bounds",
    "exact_frontier": "python -m benchmarks.bench_exact_frontier",
    "recorded": "no command: measured once by hand (each entry names its commit); re-measure with a benchmark",
    "recorded_formulations": "no command: measured once by hand for formulations/ (each entry names its commit); "
    "re-measure with a benchmark",
    "compare_openb": "optsched compare --trace openb --policies all --seeds 3 (timed by hand; see its note)",
}
_DATE_KEYS = ("measured", "date")
_LOAD_KEYS = ("load_average", "load_1min", "load_average_1min")

#: A measured-looking figure: a number (or a range) and a time unit, or a ratio ``3.6x the``.
#: (``2h``, an equation's label, and ``(0, h)``, a pair, are not times: an hour takes a space.)
TYPED = re.compile(
    r"(?<![\w.·^-])\d(?:\d|,\d)*(?:\.\d+)?(?:\s?(?:-|to)\s?\d(?:\d|,\d)*(?:\.\d+)?)?"
    r"(?:\s?(?:s|ms|µs|us|min|minutes?|seconds?|hours?)\b(?!-)|\s(?:h)\b(?!-)"
    r"|x(?=\s+(?:the|faster|slower|for|as)\b))"
)
_CODE_SPAN = re.compile(r"`[^`]*`")
_INLINE_CODE = re.compile(r"(`+)[^`].*?\1")
_FENCE = re.compile(r"^\s*(```|~~~)")


class FigureError(LookupError):
    """A key that names no measured value (no file, no entry, no number, no date)."""


def command_for(file: str) -> str:
    return COMMANDS.get(file, f"python -m benchmarks.bench_{file}")


def _load(results: Path, file: str, cache: dict) -> object:
    if file not in cache:
        path = results / f"{file}.json"
        if not path.is_file():
            raise FigureError(f"no results file benchmarks/results/{file}.json: run `{command_for(file)}`")
        cache[file] = json.loads(path.read_text(encoding="utf-8"))
    return cache[file]


def _matches(row: object, step: str) -> bool:
    want = [tuple(part.split("=", 1)) for part in step.split("&")]
    return isinstance(row, Mapping) and all(str(row.get(f)) == v for f, v in want)


_AGGREGATE = re.compile(r"(min|max)\(([\w.-]*)\)")


def _dotted(row: object, path: str) -> object:
    if not path:  # min(), max(): over a list of numbers
        return row
    for part in path.split("."):
        row = row.get(part) if isinstance(row, Mapping) else None
    return row


def _step(node: object, step: str) -> object:
    if isinstance(node, Mapping):
        if step not in node and _AGGREGATE.fullmatch(step):  # over the entries of a dict
            return _step(list(node.values()), step)
        return node.get(step)
    if isinstance(node, list):
        if step.startswith("all(") and step.endswith(")"):  # every entry that matches
            return [r for r in node if _matches(r, step[4:-1])] or None
        if m := _AGGREGATE.fullmatch(step):
            values = [v for r in node if isinstance(v := _dotted(r, m[2]), (int, float)) and not isinstance(v, bool)]
            return (min if m[1] == "min" else max)(values) if values else None
        if "=" in step:  # field=value, or several joined by & (case=solve-cpsat&signal=SIGINT)
            return next((r for r in node if _matches(r, step)), None)
        hit = next((r for r in node if isinstance(r, Mapping) and r.get("case") == step), None)
        if hit is None and step.isdigit() and int(step) < len(node):
            return node[int(step)]
        return hit
    return None


def lookup(results: Path, key: str, cache: dict | None = None) -> tuple[object, list[object]]:
    """The value at ``key`` and the nodes on the way to it (the file's top first)."""
    cache = {} if cache is None else cache
    file, _, rest = key.partition("/")
    node = _load(results, file, cache)
    chain = [node]
    for step in filter(None, rest.split("/")):
        node = _step(node, step)
        if node is None:
            raise FigureError(
                f"benchmarks/results/{file}.json has no {step!r} on the way to {key!r}: "
                f"run `{command_for(file)}`, or name an entry it holds"
            )
        chain.append(node)
    return node, chain


def _significant(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    out = f"{round(x, decimals):,.{decimals}f}"
    return out.rstrip("0").rstrip(".") if "." in out else out


def _number(x: object) -> str:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}"
    return format_value(x, None)


def format_value(value: object, spec: str | None) -> str:
    """A measured value as a page shows it (see the module's docstring for ``spec``)."""
    if spec == "result" and isinstance(value, Mapping):
        if value.get("status") == "optimal":
            return f"**opt** {_number(value.get('objective'))}"
        bound = value.get("bound")
        return _number(value.get("objective")) + (", no bound" if bound is None else f" / {_number(bound)}")
    if spec == "on" and isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if spec:
            raise FigureError(f"the value {value!r} is not a number, so it takes no format {spec!r}")
        return str(value)
    if spec in ("min", "h"):
        return _significant(value / (60 if spec == "min" else 3600))
    if spec == "ms":
        return _significant(value * 1000)
    if spec == "x":
        return f"{value:,.2f}" if abs(value) < 10 else f"{value:,.0f}"
    if spec:
        try:
            return format(value, spec)
        except ValueError as e:
            raise FigureError(f"the format {spec!r}: {e}") from None
    return _significant(float(value)) if isinstance(value, float) else f"{value:,}"


def _load_text(load: object) -> str | None:
    if isinstance(load, (int, float)):
        return f"{load:.1f}"
    if isinstance(load, list) and load and isinstance(load[0], (int, float)):
        return f"{load[0]:.1f}"  # os.getloadavg(): the 1-minute figure
    if isinstance(load, Mapping) and {"min", "max"} <= set(load):
        lo, hi = f"{load['min']:.1f}", f"{load['max']:.1f}"
        return lo if lo == hi else f"{lo}-{hi}"
    return None


def when(chain: list[object]) -> str:
    """``measured <date>, load average <x>`` of the deepest entry of ``chain`` that says."""
    date = load = None
    for node in reversed(chain):
        if not isinstance(node, Mapping):
            continue
        date = date or next((str(node[k]) for k in _DATE_KEYS if node.get(k)), None)
        load = load or next((_load_text(node[k]) for k in _LOAD_KEYS if node.get(k) is not None), None)
    if date is None:
        raise FigureError("no date (`measured` or `date`) in the entry or above it")
    date = re.sub(r"(\d\d:\d\d):\d\d UTC$", r"\1 UTC", date)  # minutes are enough
    return f"measured {date}" + (f", load average {load}" if load else "")


ROWS = re.compile(r"^\[\[rows:([^\]\s]+)(?: by ([\w,-]+))?\]\][ \t]*\n(.*)$", re.MULTILINE)
_PLACE = re.compile(r"\{([^{}\s]+)(?: as ([^{}\s]+))?(?: else ([^{}]*))?\}")
_NULL = "\u2013"


def _entries(node: object, by: str | None) -> list[tuple[object, dict]]:
    """(what a template's paths step into, the group's own fields) per row of a table."""
    items = list(node.values()) if isinstance(node, Mapping) else list(node) if isinstance(node, list) else []
    if not by:
        return [(item, {}) for item in items]
    fields = by.split(",")
    groups: dict[tuple, list] = {}
    for item in items:
        if isinstance(item, Mapping):
            groups.setdefault(tuple(item.get(f) for f in fields), []).append(item)
    return [(members, dict(zip(fields, values, strict=True))) for values, members in groups.items()]


def _fill(template: str, node: object, own: dict) -> str:
    def one(m: re.Match) -> str:
        path, spec, otherwise = m.groups()
        if path in own:
            value = own[path]
        else:
            value, parent = node, None
            for step in path.split("/"):
                parent, value = value, _step(value, step)
                if value is None:
                    break
            if value is None:
                if otherwise is not None:
                    return otherwise
                if isinstance(parent, Mapping) and step in parent:
                    return _NULL  # null in the file: nothing measured there
                raise FigureError(f"an entry has no {path!r}")
        return _NULL if value is None else format_value(value, spec)

    return _PLACE.sub(one, template)


def rows(text: str, results: Path, page: str, cache: dict | None = None) -> tuple[str, list[str]]:
    """``text`` with every ``[[rows:...]]`` line and its template replaced by the table's rows."""
    cache = {} if cache is None else cache
    problems: list[str] = []

    code = _code_ranges(text)

    def repl(m: re.Match) -> str:
        key, by, template = m.groups()
        if _in_code(code, m.start()):
            return m.group(0)
        line = text.count("\n", 0, m.start()) + 1
        try:
            node, _ = lookup(results, key, cache)
            return "\n".join(_fill(template, item, own) for item, own in _entries(node, by))
        except FigureError as e:
            file = key.partition("/")[0]
            problems.append(f"{page}:{line}: the rows [[rows:{key}]]: {e} (measured by `{command_for(file)}`)")
            return m.group(0)

    return ROWS.sub(repl, text), problems


def _code_ranges(text: str) -> list[tuple[int, int]]:
    """Where ``text`` is code (fenced blocks, inline spans): a ``[[fig:...]]`` there is shown as
    written (a page that explains the syntax)."""
    ranges, start, pos = [], None, 0
    for line in text.split("\n"):
        if _FENCE.match(line):
            if start is None:
                start = pos
            else:
                ranges.append((start, pos + len(line)))
                start = None
        elif start is None:
            ranges += [(pos + m.start(), pos + m.end()) for m in _INLINE_CODE.finditer(line)]
        pos += len(line) + 1
    if start is not None:
        ranges.append((start, len(text)))
    return ranges


def _in_code(ranges: list[tuple[int, int]], at: int) -> bool:
    return any(a <= at < b for a, b in ranges)


def substitute(text: str, results: Path, page: str, cache: dict | None = None) -> tuple[str, list[str], dict]:
    """``text`` with every ``[[rows:...]]``, ``[[fig:...]]`` and ``[[when:...]]`` written in; the problems (one line
    each, naming the page, the key and the command that measures it); and the figures stated,
    ``{key: value as shown}``."""
    cache = {} if cache is None else cache
    text, problems = rows(text, results, page, cache)
    stated: dict[str, str] = {}

    code = _code_ranges(text)

    def repl(m: re.Match) -> str:
        kind, key, spec = m.groups()
        if _in_code(code, m.start()):
            return m.group(0)
        line = text.count("\n", 0, m.start()) + 1
        try:
            value, chain = lookup(results, key, cache)
            out = when(chain) if kind == "when" else format_value(value, spec)
        except FigureError as e:
            file = key.partition("/")[0]
            problems.append(f"{page}:{line}: the figure {m.group(0)}: {e} (measured by `{command_for(file)}`)")
            return m.group(0)
        stated[m.group(0)] = out
        return out

    return FIGURE.sub(repl, text), problems, stated


def typed_figures(text: str, page: str, known_sections: Iterable[str] = ()) -> list[str]:
    """Each number with a time unit, or ratio, typed outside code and ``[[...]]`` on ``page``, as
    ``page:line: ...``; lines marked :data:`NOT_MEASURED` or :data:`PAPER` and the sections titled
    in ``known_sections`` (``"*"``: the whole page) are left out."""
    known_sections = tuple(known_sections)
    if "*" in known_sections:
        return []
    return [p for p, section in _typed(text, page) if section not in known_sections]


def _typed(text: str, page: str) -> list[tuple[str, str]]:
    """(problem, title of its section) of each typed figure of ``text``."""
    problems = []
    fenced = False
    section = ""
    for lineno, line in enumerate(text.split("\n"), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            continue
        if line.startswith("#"):
            section = re.sub(r"\s*\{[^}]*\}\s*$", "", line.lstrip("#").strip())
            continue
        if NOT_MEASURED in line or PAPER in line:
            continue
        plain = FIGURE.sub(" ", _CODE_SPAN.sub(" ", line))
        for m in TYPED.finditer(plain):
            problems.append(
                (
                    f"{page}:{lineno}: the figure {m.group()!r} is typed: name its result "
                    f"([[fig:<file>/<path>]], read from benchmarks/results/), or mark the line "
                    f"{NOT_MEASURED} when it is not a measurement, {PAPER} when the paper states it",
                    section,
                )
            )
    return problems


def markdown_of(path: Path, rel: str) -> list[tuple[str, str]]:
    """(name, Markdown) of a page: the file itself, or each markdown cell of a notebook
    (``notebooks/x.ipynb#cell3``), which no substitution reaches: a notebook states no measured
    figure, or marks it."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return [(rel, text)]
    cells = json.loads(text).get("cells", [])
    return [
        (f"{rel}#cell{i}", "".join(c.get("source", "")) if isinstance(c.get("source"), list) else c.get("source", ""))
        for i, c in enumerate(cells)
        if c.get("cell_type") == "markdown"
    ]


def typed_problems(
    pages: list[Path], root: Path, known: Mapping[str, Mapping[str, int] | tuple[str, ...]]
) -> list[str]:
    """:func:`typed_figures` over ``pages`` (Markdown files and notebooks' markdown cells).

    ``known``: page -> the sections still left out, as in ``optsched_docs.TYPED_KNOWN``: either
    ``{title: n}``, a section that still types exactly ``n`` figures (``"*"``: the whole page),
    or a tuple of titles (any number). A section that types more than its count is reported (a
    new typed figure), and so is each entry that leaves out fewer figures than it says (lower
    it, or remove it when none is left)."""
    problems = []
    for path in sorted(pages):
        rel = path.relative_to(root).as_posix()
        if path.suffix == ".ipynb":
            for name, cell in markdown_of(path, rel):
                problems += typed_figures(cell, name)
            continue
        text = path.read_text(encoding="utf-8")
        entry = known.get(rel, ())
        counts = dict(entry) if isinstance(entry, Mapping) else dict.fromkeys(entry)
        found = _typed(text, rel)
        per_section: dict[str, list[str]] = {}
        for problem, section in found:
            per_section.setdefault("*" if "*" in counts else section, []).append(problem)
        for section, listed in per_section.items():
            if section not in counts:
                problems += listed
            elif counts[section] is not None and len(listed) > counts[section]:
                where = "the page" if section == "*" else f"the section {section!r}"
                problems.append(
                    f"{rel}: {where} types {len(listed)} figures, TYPED_KNOWN allows {counts[section]}: "
                    f"name the new one's result or mark it (the figures: {'; '.join(listed)})"
                )
        for section, count in counts.items():
            n = len(per_section.get(section, []))
            where = "the page" if section == "*" else f"the section {section!r}"
            if n == 0:
                problems.append(f"{rel}: {where} types no figure now: remove it from TYPED_KNOWN")
            elif count is not None and n < count:
                problems.append(f"{rel}: {where} types {n} figures now, not {count}: lower its count in TYPED_KNOWN")
    return problems
