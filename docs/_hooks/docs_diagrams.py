"""Diagrams of the simulator, written as SVG by the site build (no drawing tool, nothing fetched).

- :func:`phases_svg`: the phases of a job (``optsched.sim.Phase``) and what moves it from one to
  the next;
- :func:`round_svg`: one decision round of the engine, from the next event time to the policy's
  decisions.

Both are drawn from the lists below, which name the phases and the policy hooks of the code: the
build checks them against ``optsched.sim`` (:func:`mismatches`), so a phase or hook added,
renamed or removed fails the build until the diagram says the same.
"""

from __future__ import annotations

import textwrap
from html import escape

#: phase -> (x, y) of its box centre; phases holding GPUs are shaded. The main path runs down the
#: left, saving sits on the right, done and failed at the bottom: drawn 640 wide with texts of
#: 13 or more, shown unscaled in the site's column, so every text shows at 9.75 pt or more.
PHASE_BOXES = {
    "pending": (230, 40),
    "waiting": (230, 140),
    "loading": (230, 250),
    "training": (230, 370),
    "done": (150, 490),
    "failed": (400, 490),
    "saving": (540, 250),
}
HOLDS_GPUS = {"loading", "training", "saving"}
#: (from, to, label, who acts, SVG path, label x, label y, label anchor): a policy's decisions are
#: drawn in blue, what the engine does when its time comes in grey (dashed). A label of two lines
#: has them separated by a newline.
PHASE_EDGES = [
    ("pending", "waiting", "arrives", "engine", "M230,60 V118", 240, 94, "start"),
    ("waiting", "loading", "Start", "policy", "M230,160 V228", 240, 199, "start"),
    ("loading", "training", "load ends", "engine", "M230,270 V348", 240, 314, "start"),
    ("training", "done", "all its stages done", "engine", "M205,390 L160,468", 150, 532, "middle"),
    ("training", "failed", "stopped early at a checkpoint", "engine", "M255,390 L380,468", 400, 532, "middle"),
    (
        "training",
        "training",
        "checkpoint\n(a stage ends)",
        "engine",
        "M170,360 C135,350 135,392 168,381",
        128,
        366,
        "end",
    ),
    ("loading", "saving", "Preempt", "policy", "M290,242 H478", 384, 234, "middle"),
    ("saving", "loading", "Migrate: loads on its new GPUs", "engine", "M480,260 H292", 388, 284, "middle"),
    ("training", "saving", "Preempt, Migrate", "policy", "M290,362 H508 Q520,362 520,350 V272", 400, 354, "middle"),
    (
        "saving",
        "waiting",
        "save ends: its GPUs are free",
        "engine",
        "M560,230 V152 Q560,140 548,140 H292",
        425,
        132,
        "middle",
    ),
]
#: The legend's top left corner, below the drawing, and the drawing's size.
PHASE_LEGEND = (20, 568)
PHASE_SIZE = (640, 600)
#: The hooks the engine calls in a round, in its order of events at one time.
ROUND_HOOKS = ("on_completion", "on_checkpoint", "on_preempted", "on_loaded", "on_arrival", "on_timer")
ROUND_STEPS = [
    ("The next time t", "the earliest of: the event heap, the next arrival, the next slot boundary (slotted mode)"),
    (
        "Every event at t, in order",
        "stage ends (completion, checkpoint, early stop), save ends, load ends, arrivals, timers",
    ),
    ("One hook per event", "on_completion, on_checkpoint, on_preempted, on_loaded, on_arrival, on_timer"),
    ("policy.schedule(sim), once", "after every hook of time t (slotted: only at a slot boundary or a timer)"),
    ("The engine checks and applies", "Start, Preempt, Migrate, timers; an illegal one raises SimulationError"),
    ("Rates updated", "jobs whose placement or co-runners changed; their stage ends are re-timed"),
]

_BLUE, _GREY, _SHADE, _LINE = "#3f51b5", "#616161", "#e8eaf6", "#9e9e9e"
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"


def mismatches() -> list[str]:
    """Where these lists and ``optsched.sim`` disagree (phases, hooks)."""
    from optsched.sim import Phase, Policy

    out = []
    code = {p.value for p in Phase}
    drawn = set(PHASE_BOXES)
    for name in sorted(code - drawn):
        out.append(f"docs/_hooks/docs_diagrams.py: the phase {name!r} of optsched.sim.Phase is not drawn")
    for name in sorted(drawn - code):
        out.append(f"docs/_hooks/docs_diagrams.py: the drawn phase {name!r} is not in optsched.sim.Phase")
    for hook in ROUND_HOOKS:
        if not callable(getattr(Policy, hook, None)):
            out.append(f"docs/_hooks/docs_diagrams.py: optsched.sim.Policy has no hook {hook!r}")
    return out


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(title)}" style="{_FONT};max-width:100%;height:auto">\n'
        f"<title>{escape(title)}</title>\n"
        "<defs>"
        + "".join(
            f'<marker id="arrow-{n}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>'
            for n, c in (("policy", _BLUE), ("engine", _GREY))
        )
        + "</defs>\n"
        + "\n".join(body)
        + "\n</svg>\n"
    )


def _text(x: float, y: float, s: str, *, size: int = 13, anchor: str = "middle", color: str = "#212121", bold=False):
    """A text at ``(x, y)`` (its first line's baseline); each newline of ``s`` starts a line below."""
    weight = ' font-weight="600"' if bold else ""
    first, *more = s.split("\n")
    lines = "".join(f'<tspan x="{x:.0f}" dy="1.2em">{escape(line)}</tspan>' for line in more)
    return (
        f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" text-anchor="{anchor}" fill="{color}"{weight}>'
        f"{escape(first)}{lines}</text>"
    )


_W, _H = 120, 40


def phases_svg() -> str:
    """A job's phases and what moves it between them."""
    body = []
    for _src, _dst, label, who, path, lx, ly, anchor in PHASE_EDGES:
        color = _BLUE if who == "policy" else _GREY
        dash = "" if who == "policy" else ' stroke-dasharray="5 3"'
        body.append(
            f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.6"{dash} marker-end="url(#arrow-{who})"/>'
        )
        body.append(_text(lx, ly, label, size=13, color=color, anchor=anchor))
    for name, (x, y) in PHASE_BOXES.items():
        fill = _SHADE if name in HOLDS_GPUS else "#ffffff"
        body.append(
            f'<rect x="{x - _W / 2}" y="{y - _H / 2}" width="{_W}" height="{_H}" rx="8" fill="{fill}" '
            f'stroke="{_LINE}" stroke-width="1.2"/>'
        )
        body.append(_text(x, y + 5, name, size=14, bold=True))
    lx, ly = PHASE_LEGEND
    body.append(f'<rect x="{lx}" y="{ly}" width="18" height="14" rx="3" fill="{_SHADE}" stroke="{_LINE}"/>')
    body.append(_text(lx + 26, ly + 12, "holds its GPUs", size=13, anchor="start"))
    lx += 150
    body.append(f'<line x1="{lx}" y1="{ly + 7}" x2="{lx + 18}" y2="{ly + 7}" stroke="{_BLUE}" stroke-width="1.6"/>')
    body.append(_text(lx + 26, ly + 12, "a policy's decision", size=13, anchor="start", color=_BLUE))
    lx += 180
    body.append(
        f'<line x1="{lx}" y1="{ly + 7}" x2="{lx + 18}" y2="{ly + 7}" stroke="{_GREY}" stroke-width="1.6" '
        'stroke-dasharray="5 3"/>'
    )
    body.append(_text(lx + 26, ly + 12, "the engine, when its time comes", size=13, anchor="start", color=_GREY))
    return _svg(*PHASE_SIZE, body, "The phases of a job in optsched.sim")


def round_svg() -> str:
    """One decision round: from the next event time to the decisions applied."""
    body = []
    x0, w, h, gap = 40, 560, 64, 18
    for i, (head, detail) in enumerate(ROUND_STEPS):
        y = 20 + i * (h + gap)
        policy = head.startswith(("policy", "One hook"))
        fill = _SHADE if policy else "#ffffff"
        body.append(
            f'<rect x="{x0}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" stroke="{_LINE}" '
            'stroke-width="1.2"/>'
        )
        body.append(_text(x0 + 14, y + 20, f"{i + 1}. {head}", size=14, anchor="start", bold=True))
        detail = textwrap.fill(detail, 66)  # two lines of 13-unit text fit the box
        body.append(_text(x0 + 14, y + 38, detail, size=13, anchor="start", color="#424242"))
        if i:
            body.append(
                f'<line x1="{x0 + w / 2}" y1="{y - gap}" x2="{x0 + w / 2}" y2="{y - 1}" stroke="{_GREY}" '
                'stroke-width="1.6" marker-end="url(#arrow-engine)"/>'
            )
    last = 20 + (len(ROUND_STEPS) - 1) * (h + gap) + h / 2
    first = 20 + h / 2
    right = x0 + w
    body.append(
        f'<path d="M{right},{last} H{right + 40} V{first} H{right + 2}" fill="none" stroke="{_GREY}" '
        'stroke-width="1.6" stroke-dasharray="5 3" marker-end="url(#arrow-engine)"/>'
    )
    body.append(
        f'<text x="{right + 52}" y="{(first + last) / 2:.0f}" font-size="13" fill="{_GREY}" '
        f'transform="rotate(90 {right + 52} {(first + last) / 2:.0f})" text-anchor="middle">'
        "until every job is done or failed</text>"
    )
    body.append(
        f'<rect x="{x0}" y="{20 + len(ROUND_STEPS) * (h + gap) - 6}" width="18" height="14" rx="3" fill="{_SHADE}" '
        f'stroke="{_LINE}"/>'
    )
    body.append(
        _text(x0 + 26, 20 + len(ROUND_STEPS) * (h + gap) + 6, "the policy's code runs here", size=13, anchor="start")
    )
    return _svg(680, 20 + len(ROUND_STEPS) * (h + gap) + 20, body, "One decision round of optsched.sim")
