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

from html import escape

#: phase -> (x, y) of its box centre; phases holding GPUs are shaded.
PHASE_BOXES = {
    "pending": (70, 100),
    "waiting": (230, 100),
    "loading": (420, 100),
    "training": (620, 100),
    "done": (860, 60),
    "failed": (860, 160),
    "saving": (520, 270),
}
HOLDS_GPUS = {"loading", "training", "saving"}
#: (from, to, label, who acts, SVG path, label x, label y, label anchor): a policy's decisions are
#: drawn in blue, what the engine does when its time comes in grey (dashed).
PHASE_EDGES = [
    ("pending", "waiting", "arrives", "engine", "M126,100 L172,100", 150, 90, "middle"),
    ("waiting", "loading", "Start", "policy", "M286,100 L362,100", 325, 90, "middle"),
    ("loading", "training", "load ends", "engine", "M476,100 L562,100", 520, 90, "middle"),
    ("training", "done", "all its stages done", "engine", "M676,95 L802,66", 860, 30, "middle"),
    ("training", "failed", "stopped early at a checkpoint", "engine", "M676,106 L802,156", 860, 198, "middle"),
    ("training", "training", "checkpoint (a stage ends)", "engine", "M600,80 C590,35 650,35 640,78", 620, 32, "middle"),
    ("loading", "saving", "Preempt", "policy", "M445,120 L503,248", 482, 185, "start"),
    ("training", "saving", "Preempt, Migrate", "policy", "M605,120 L547,248", 585, 185, "start"),
    ("saving", "loading", "Migrate: loads on its new GPUs", "engine", "M482,250 L407,122", 432, 200, "end"),
    (
        "saving",
        "waiting",
        "save ends: its GPUs are free",
        "engine",
        "M464,278 H262 Q230,278 230,246 V122",
        350,
        296,
        "middle",
    ),
]
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
    weight = ' font-weight="600"' if bold else ""
    return (
        f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" text-anchor="{anchor}" fill="{color}"{weight}>'
        f"{escape(s)}</text>"
    )


_W, _H = 112, 40


def phases_svg() -> str:
    """A job's phases and what moves it between them."""
    body = []
    for _src, _dst, label, who, path, lx, ly, anchor in PHASE_EDGES:
        color = _BLUE if who == "policy" else _GREY
        dash = "" if who == "policy" else ' stroke-dasharray="5 3"'
        body.append(
            f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.6"{dash} marker-end="url(#arrow-{who})"/>'
        )
        body.append(_text(lx, ly, label, size=12, color=color, anchor=anchor))
    for name, (x, y) in PHASE_BOXES.items():
        fill = _SHADE if name in HOLDS_GPUS else "#ffffff"
        body.append(
            f'<rect x="{x - _W / 2}" y="{y - _H / 2}" width="{_W}" height="{_H}" rx="8" fill="{fill}" '
            f'stroke="{_LINE}" stroke-width="1.2"/>'
        )
        body.append(_text(x, y + 5, name, size=14, bold=True))
    lx, ly = 700, 236
    body.append(f'<rect x="{lx}" y="{ly}" width="18" height="14" rx="3" fill="{_SHADE}" stroke="{_LINE}"/>')
    body.append(_text(lx + 26, ly + 12, "holds its GPUs", size=12, anchor="start"))
    body.append(f'<line x1="{lx}" y1="{ly + 32}" x2="{lx + 18}" y2="{ly + 32}" stroke="{_BLUE}" stroke-width="1.6"/>')
    body.append(_text(lx + 26, ly + 36, "a policy's decision", size=12, anchor="start", color=_BLUE))
    body.append(
        f'<line x1="{lx}" y1="{ly + 54}" x2="{lx + 18}" y2="{ly + 54}" stroke="{_GREY}" stroke-width="1.6" '
        'stroke-dasharray="5 3"/>'
    )
    body.append(_text(lx + 26, ly + 58, "the engine, when its time comes", size=12, anchor="start", color=_GREY))
    return _svg(990, 310, body, "The phases of a job in optsched.sim")


def round_svg() -> str:
    """One decision round: from the next event time to the decisions applied."""
    body = []
    x0, w, h, gap = 40, 560, 46, 18
    for i, (head, detail) in enumerate(ROUND_STEPS):
        y = 20 + i * (h + gap)
        policy = head.startswith(("policy", "One hook"))
        fill = _SHADE if policy else "#ffffff"
        body.append(
            f'<rect x="{x0}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" stroke="{_LINE}" '
            'stroke-width="1.2"/>'
        )
        body.append(_text(x0 + 14, y + 19, f"{i + 1}. {head}", size=14, anchor="start", bold=True))
        body.append(_text(x0 + 14, y + 37, detail, size=12, anchor="start", color="#424242"))
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
        f'<text x="{right + 52}" y="{(first + last) / 2:.0f}" font-size="12" fill="{_GREY}" '
        f'transform="rotate(90 {right + 52} {(first + last) / 2:.0f})" text-anchor="middle">'
        "until every job is done or failed</text>"
    )
    body.append(
        f'<rect x="{x0}" y="{20 + len(ROUND_STEPS) * (h + gap) - 6}" width="18" height="14" rx="3" fill="{_SHADE}" '
        f'stroke="{_LINE}"/>'
    )
    body.append(
        _text(x0 + 26, 20 + len(ROUND_STEPS) * (h + gap) + 6, "the policy's code runs here", size=12, anchor="start")
    )
    return _svg(680, 20 + len(ROUND_STEPS) * (h + gap) + 20, body, "One decision round of optsched.sim")
