"""An eval's results.md and its accuracy-vs-cost plot (SVG, written by hand)."""

from __future__ import annotations

import math
from html import escape
from typing import Any

METHOD_TITLES = {
    "council": "Full council",
    "solo": "Solo baseline",
    "vote": "Round-1 majority vote",
    "weighted": "Last-round weighted vote",
    "self-consistency": "Self-consistency",
}
COLOURS = {
    "council": "#1f6feb",
    "solo": "#d29922",
    "vote": "#2da44e",
    "weighted": "#bf3989",
    "self-consistency": "#8250df",
}


def stand_in_line(scripted: int, calls: int) -> str:
    """What results.md and the eval page say when the scripted stand-in gave answers; ''
    when it gave none."""
    if not scripted:
        return ""
    if scripted >= calls:
        return (
            "Every answer came from the scripted stand-in, not a model: these figures show "
            "the eval's flow, not any model's accuracy. Name a model with --model."
        )
    return (
        f"{scripted} of {calls} calls were answered by the scripted stand-in, not a model: "
        "their answers say nothing about a model's accuracy."
    )


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def results_markdown(
    eval_id: str,
    summary: dict[str, dict[str, Any]],
    rows: list[dict[str, Any]],
    answer_type: str,
    stand_in: str = "",
    evidence: str = "",
) -> str:
    """The human-readable results: one line per method, `evidence` (the sections of
    views/eval_evidence.py), then one line per question; `stand_in` (see `stand_in_line`)
    leads when the scripted stand-in gave answers."""
    lines = [
        f"# Eval {eval_id}",
        "",
        *([f"**{stand_in}**", ""] if stand_in else []),
        f"{len(rows)} questions · answers compared as `{answer_type}`. Accuracy with its 95% "
        "Wilson interval; the majority vote reuses the council's round-1 answers (no call of "
        "its own: its calls and cost are those round-1 calls); the weighted vote reads the "
        "last round (the council's calls less the synthesis).",
        "",
        "| Method | Right | Accuracy | 95% interval | Calls | Tokens | Cost | Tokens/question "
        "| Cost/question | Right per $ | Wall |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for method, s in summary.items():
        low, high = s["interval_95"]
        per_dollar = s.get("accuracy_per_dollar")
        lines.append(
            f"| {METHOD_TITLES.get(method, method)} | {s['right']}/{s['questions']} "
            f"| {s['accuracy']:.0%} | {low:.0%}–{high:.0%} | {s['calls']} | {s['tokens']:,} "
            f"| ${s['cost_usd']:.4f} | {s.get('tokens_per_question', 0):,.0f} "
            f"| ${s.get('cost_per_question', 0):.4f} "
            f"| {'—' if per_dollar is None else f'{per_dollar:,.1f}'} | {s['wall_s']:.1f}s |"
        )
    methods = list(summary)
    if evidence:
        lines += ["", evidence.rstrip("\n")]
    lines += [
        "",
        "## Questions",
        "",
        "| Question | Answer | "
        + " | ".join(METHOD_TITLES.get(m, m) for m in methods)
        + " | Debate |",
        "| --- | --- | " + " | ".join("---" for _ in methods) + " | --- |",
    ]
    for row in rows:
        cells = []
        for method in methods:
            given = row["answers"].get(method)
            mark = "✓" if row["right"].get(method) else "✗"
            cells.append(f"{mark} {_cell(given) if given is not None else '—'}")
        lines.append(
            f"| {_cell(row['id'])} | {_cell(row['answer'])} | "
            + " | ".join(cells)
            + f" | {row['debate'] or '—'} |"
        )
    return "\n".join(lines) + "\n"


def accuracy_cost_svg(summary: dict[str, dict[str, Any]]) -> str:
    """Accuracy (with its interval) against cost per question, one point per method.

    Cost is in dollars per question; with no cost at all (scripted, command programs
    without prices) the x axis is calls per question instead.
    """
    width, height, left, right, top, bottom = 640, 400, 70, 170, 30, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    costs = {m: s["cost_usd"] / max(1, s["questions"]) for m, s in summary.items()}
    by_cost = any(c > 0 for c in costs.values())
    xs = costs if by_cost else {m: s["calls"] / max(1, s["questions"]) for m, s in summary.items()}
    if by_cost:
        x_max = max(xs.values(), default=0.0) * 1.1 or 1.0
    else:
        # Calls come whole: four equal steps of a whole number of calls each.
        x_max = 4.0 * max(1, math.ceil(max(xs.values(), default=0.0) * 1.1 / 4))
    label = "cost per question ($)" if by_cost else "calls per question"

    def x(value: float) -> float:
        return left + plot_w * value / x_max

    def y(value: float) -> float:
        return top + plot_h * (1 - value)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="18" font-size="14">Accuracy vs {escape(label)}</text>',
    ]
    for tick in range(0, 11, 2):
        ty = y(tick / 10)
        parts.append(
            f'<line x1="{left}" y1="{ty:.1f}" x2="{left + plot_w}" y2="{ty:.1f}" stroke="#eee"/>'
            f'<text x="{left - 8}" y="{ty + 4:.1f}" text-anchor="end">{tick * 10}%</text>'
        )
    for step in range(0, 5):
        value = x_max * step / 4
        tx = x(value)
        shown = f"{value:.4f}" if by_cost else f"{value:.0f}"
        parts.append(
            f'<text x="{tx:.1f}" y="{top + plot_h + 18}" text-anchor="middle">{shown}</text>'
        )
    parts += [
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#333"/>',
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 20}" text-anchor="middle">{escape(label)}</text>',
    ]
    for number, (method, s) in enumerate(summary.items()):
        colour = COLOURS.get(method, "#333")
        px, low, high = x(xs[method]), s["interval_95"][0], s["interval_95"][1]
        parts += [
            f'<line x1="{px:.1f}" y1="{y(low):.1f}" x2="{px:.1f}" y2="{y(high):.1f}" '
            f'stroke="{colour}" stroke-width="2"/>',
            f'<circle cx="{px:.1f}" cy="{y(s["accuracy"]):.1f}" r="5" fill="{colour}">'
            f"<title>{escape(METHOD_TITLES.get(method, method))}: {s['accuracy']:.0%}</title></circle>",
            f'<rect x="{left + plot_w + 16}" y="{top + 20 * number}" width="10" height="10" '
            f'fill="{colour}"/>',
            f'<text x="{left + plot_w + 32}" y="{top + 20 * number + 10}">'
            f"{escape(METHOD_TITLES.get(method, method))}</text>",
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
