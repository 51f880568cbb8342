"""The simulator's diagrams (``docs/_hooks/docs_diagrams.py``): every text readable at the page's
width, no label over a box or another label, and the lists they are drawn from match the code."""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from optsched.plot.style import MIN_SHOWN_PT, PAGE_WIDTH_PX

HOOKS = Path(__file__).resolve().parents[1] / "docs" / "_hooks"
SVG = "{http://www.w3.org/2000/svg}"
#: The width of a character of the diagrams' sans-serif font, per unit of font size (a generous
#: estimate: DejaVu Sans and Segoe UI average about 0.5).
CHAR_WIDTH = 0.6


def _diagrams():
    if str(HOOKS) not in sys.path:
        sys.path.insert(0, str(HOOKS))
    spec = importlib.util.spec_from_file_location("docs_diagrams", HOOKS / "docs_diagrams.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


DIAGRAMS = _diagrams()
DRAWINGS = {"phases": DIAGRAMS.phases_svg, "round": DIAGRAMS.round_svg}


def _texts(root):
    """(font size, [lines]) of every <text> of the drawing."""
    for t in root.iter(f"{SVG}text"):
        yield t, float(t.get("font-size")), [t.text or ""] + [s.text or "" for s in t.iter(f"{SVG}tspan")]


def _box(t, size, lines):
    """The estimated extent (x0, y0, x1, y1) of a text, from its anchor, size and longest line."""
    x, y = float(t.get("x")), float(t.get("y"))
    w = CHAR_WIDTH * size * max(len(s) for s in lines)
    x0 = {"start": x, "middle": x - w / 2, "end": x - w}[t.get("text-anchor", "start")]
    return x0, y - 0.8 * size, x0 + w, y + 0.25 * size + 1.2 * size * (len(lines) - 1)


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a, b) -> bool:
    return b[0] <= a[0] and a[2] <= b[2] and b[1] <= a[1] and a[3] <= b[3]


@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_every_text_shows_at_9_points_or_more_at_the_pages_width(name):
    """A drawing wider than the column is shrunk to it: font size x min(1, column / width) is the
    size shown in CSS px (9 pt = 12 px)."""
    root = ET.fromstring(DRAWINGS[name]())
    width = float(root.get("viewBox").split()[2])
    scale = min(1.0, PAGE_WIDTH_PX / width)
    shown = {" / ".join(lines): size * scale * 0.75 for _, size, lines in _texts(root)}
    assert len(shown) >= 6
    small = {text: round(pt, 2) for text, pt in shown.items() if pt < MIN_SHOWN_PT}
    assert small == {}, f"{name}: texts shown below {MIN_SHOWN_PT} pt in a {PAGE_WIDTH_PX}-px column"


@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_no_text_leaves_the_drawing_or_lies_over_a_box_or_another_text(name):
    """A text lies wholly inside a box (its name) or clear of it, inside the drawing, and clear of
    every other text (extents estimated from the font size; rotated texts left out)."""
    root = ET.fromstring(DRAWINGS[name]())
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    rects = [
        (
            float(r.get("x")),
            float(r.get("y")),
            float(r.get("x")) + float(r.get("width")),
            float(r.get("y")) + float(r.get("height")),
        )
        for r in root.iter(f"{SVG}rect")
    ]
    boxes = [(" / ".join(lines), _box(t, size, lines)) for t, size, lines in _texts(root) if not t.get("transform")]
    problems = []
    for i, (text, box) in enumerate(boxes):
        if not _inside(box, (0, 0, width, height)):
            problems.append(f"{text!r} leaves the drawing")
        problems += [f"{text!r} lies over the edge of a box" for r in rects if _overlap(box, r) and not _inside(box, r)]
        problems += [f"{text!r} and {other!r} overlap" for other, b in boxes[i + 1 :] if _overlap(box, b)]
    assert problems == []


def test_the_phases_drawing_has_every_phase_and_edge_with_its_meaning():
    root = ET.fromstring(DIAGRAMS.phases_svg())
    texts = {" ".join(lines) for _, _, lines in _texts(root)}
    assert set(DIAGRAMS.PHASE_BOXES) <= texts
    assert {label.replace("\n", " ") for *_, label, _, _, _, _, _, _ in DIAGRAMS.PHASE_EDGES} <= texts
    assert {"holds its GPUs", "a policy's decision", "the engine, when its time comes"} <= texts
    paths = [p for p in root.iter(f"{SVG}path") if p.get("marker-end")]
    assert len(paths) == len(DIAGRAMS.PHASE_EDGES)
    for p, (_, _, _, who, *_rest) in zip(paths, DIAGRAMS.PHASE_EDGES, strict=True):
        assert p.get("marker-end") == f"url(#arrow-{who})"
        assert (p.get("stroke-dasharray") is not None) == (who == "engine")


def test_the_drawn_phases_and_hooks_are_the_codes():
    assert DIAGRAMS.mismatches() == []
