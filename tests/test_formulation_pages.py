"""The pages of ``formulations/`` speak to users and their mathematics renders on the site.

The site reads the formulas with pymdownx.arithmatex (generic mode) and MathJax: a display formula
``$$ ... $$`` is a block of its own (inside a paragraph it stays raw text), an inline formula
``$...$`` neither starts nor ends with a space (``$W / $`` is not read as math), a ``|`` inside a
formula splits a table cell, and a formula in a heading shows as raw TeX in the table of contents
unless the heading has a plain ``data-toc-label``. What the text must not carry: issue numbers,
the papers' file numbers, closing notes (history belongs in git and in the changelog).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "formulations").glob("*.md"))

#: Working notes that do not belong on a user page, with what to write instead.
NOT_FOR_USERS = (
    (re.compile(r"\bissues?\s*#?\d+", re.I), "an issue number: say what the reading is and why"),
    (re.compile(r"\(paper \d{3}\)", re.I), "a paper's file number: name the paper"),
    (re.compile(r"\bclosing note\b", re.I), "a closing note: measured figures, without the history"),
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_HEADING = re.compile(r"^#{1,6}\s")


def text_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    out, fence = [], False
    for number, line in enumerate(text.split("\n"), 1):
        if _FENCE.match(line):
            fence = not fence
        elif not fence:
            out.append((number, line))
    return out


def problems(text: str) -> list[str]:
    """What keeps the formulas of one page from rendering, and the working notes on it, each as
    ``line N: what``."""
    found: list[str] = []
    lines = text_lines(text)
    by_number = dict(lines)
    blocks: list[tuple[int, list[str]]] = []  # paragraphs and table rows outside display formulas
    display_from = None
    for number, line in lines:
        stripped = line.strip()
        prose = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        for rx, what in NOT_FOR_USERS:
            if rx.search(prose):
                found.append(f"line {number}: {what} ({rx.search(prose).group(0)!r})")
        if display_from is None and stripped.startswith("$$"):
            if by_number.get(number - 1, "").strip():
                found.append(f"line {number}: a display formula must follow a blank line")
            if len(stripped) > 2 and stripped.endswith("$$") and stripped != "$$$":
                if by_number.get(number + 1, "").strip():
                    found.append(f"line {number}: a display formula must be followed by a blank line")
            else:
                display_from = number
            continue
        if display_from is not None:
            if stripped.endswith("$$"):
                if by_number.get(number + 1, "").strip():
                    found.append(f"line {number}: a display formula must be followed by a blank line")
                display_from = None
            continue
        if _HEADING.match(line) and "$" in prose and "data-toc-label" not in line:
            found.append(f"line {number}: a formula in a heading needs a plain data-toc-label")
        if not stripped:
            continue
        if blocks and blocks[-1][0] + len(blocks[-1][1]) == number:
            blocks[-1][1].append(line)
        else:
            blocks.append((number, [line]))
    if display_from is not None:
        found.append(f"line {display_from}: a display formula is not closed")
    for first, block in blocks:
        for number, formula, in_table in inline_formulas(first, block):
            if formula is None:
                found.append(f"line {number}: a '$' without its pair")
            elif not formula.strip("$") or formula[1].isspace() or formula[-2].isspace():
                found.append(f"line {number}: {formula!r} starts or ends with a space (not read as math)")
            elif in_table and "|" in formula.replace("\\|", ""):
                found.append(f"line {number}: {formula!r} has a '|' that splits the table cell (write \\vert)")
    return found


def inline_formulas(first: int, block: list[str]):
    """(line number, ``$...$`` or None for an unpaired ``$``, in a table row) of one block."""
    rows = [line.lstrip().startswith("|") for line in block]
    text = "\n".join(block)
    masked = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text).replace("\\$", "  ")
    where = [m.start() for m in re.finditer(r"\$", masked)]
    for a, b in zip(where[::2], where[1::2], strict=False):
        number = masked.count("\n", 0, a)
        yield first + number, masked[a : b + 1], rows[number]
    if len(where) % 2:
        yield first + masked.count("\n", 0, where[-1]), None, False


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_formulation_page_renders_and_speaks_to_users(page):
    found = problems(page.read_text(encoding="utf-8"))
    assert not found, f"formulations/{page.name}:\n" + "\n".join(found)


def test_every_kind_of_problem_is_found():
    """The checker itself, on a page with one of each problem (a checker that finds nothing on the
    real pages must not be one that finds nothing at all)."""
    page = "\n".join(
        [
            "# `x`: a page (paper 002)",  # 1
            "",
            "Fixed in issue 12, see the closing note.",  # 3
            "Text right before",
            "$$a = b$$",  # 5: no blank line before
            "",
            "| a | $x \\mid y$ | $|x|$ |",  # 7: a pipe in a table cell
            "",
            "Width $W / $ and one $ alone.",  # 9: a space before the closing $, an unpaired $
            "",
            "## Bounds on $\\alpha$",  # 11: math in a heading
            "",
            "$$\\begin{aligned} a &= b",  # 13: not closed
        ]
    )
    found = "\n".join(problems(page))
    for expected in (
        "line 1: a paper's file number",
        "line 3: an issue number",
        "line 3: a closing note",
        "line 5: a display formula must follow a blank line",
        "line 7: '$|x|$' has a '|'",
        "line 9: '$W / $' starts or ends with a space",
        "line 11: a formula in a heading",
        "line 13: a display formula is not closed",
    ):
        assert expected in found, f"{expected!r} not in:\n{found}"
    assert "x \\mid y" not in found  # \mid is fine
    ok = "\n".join(
        [
            '## Bounds on $\\alpha$ { #b data-toc-label="Bounds" }',
            "",
            "Cost `$HOME` and $\\tilde n_i$; a price of 5 \\$.",
            "",
            "$$x = y \\tag{1}$$",
            "",
            "```text",
            "issue 12 in a code block is an example, not a note $",
            "```",
        ]
    )
    assert problems(ok) == []
