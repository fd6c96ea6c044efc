"""Per-round stance and conviction: a markdown table and its JSON form."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.rules import metrics


def timeline_data(snapshot: DebateSnapshot) -> dict[str, Any]:
    """`timeline --json`: options, then per round the verdicts, convergence and leading."""
    verdicts = snapshot.verdicts
    return {
        "options": verdicts.options,
        "rounds": [
            {
                "round": figures.round,
                "verdicts": {
                    slug: {"stance": v.stance, "conviction": v.conviction, "headline": v.headline}
                    for slug, v in figures.verdicts.items()
                },
                "convergence": figures.convergence,
                "leading": figures.leading,
            }
            for figures in metrics.round_figures(verdicts)
        ],
    }


def render_timeline(snapshot: DebateSnapshot) -> str:
    """The markdown table `| Persona | R1 | R2 |` with a closing convergence row."""
    rounds = metrics.round_figures(snapshot.verdicts)
    seen = list(snapshot.debate.personas)
    for figures in rounds:
        seen += [s for s in figures.verdicts if s not in seen]

    def row(cells: list[str]) -> str:
        # Joined whole, so a debate with no verdicts yet is still a well-formed table.
        return "| " + " | ".join(cells) + " |"

    lines = [row(["Persona", *(f"R{f.round}" for f in rounds)]), row(["---"] * (len(rounds) + 1))]
    for slug in seen:
        cells = [
            f"{f.verdicts[slug].stance} {f.verdicts[slug].conviction}"
            if slug in f.verdicts
            else "—"
            for f in rounds
        ]
        lines.append(row([slug, *cells]))
    tail = [f"{f.convergence}% → {f.leading}" if f.leading else "—" for f in rounds]
    lines.append(row(["_convergence_", *tail]))
    return "\n".join(lines) + "\n"
