"""Executive summaries of one round, each with its stance, conviction and shift."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.rules import metrics


def summaries_data(snapshot: DebateSnapshot, number: int) -> list[dict[str, Any]]:
    """One item per persona of the roster for round N."""
    votes = snapshot.verdicts.round(number)
    previous = snapshot.verdicts.round(number - 1)
    items = []
    for persona in snapshot.personas:
        entry = persona.entry(number)
        verdict = votes.get(persona.slug)
        items.append(
            {
                "persona": persona.slug,
                "summary": (entry.executive_summary or "").strip() if entry else None,
                "stance": verdict.stance if verdict else None,
                "conviction": verdict.conviction if verdict else None,
                "shift": metrics.shift(previous.get(persona.slug), verdict),
            }
        )
    return items


def render_summaries(snapshot: DebateSnapshot, number: int) -> str:
    """The markdown page of round N's executive summaries."""
    lines = [f"# Round {number} executive summaries — {snapshot.debate.topic}", ""]
    for item in summaries_data(snapshot, number):
        lines += [f"## {item['persona']}", ""]
        lines += [item["summary"] or f"_No report for round {number}._", ""]
        if item["stance"] is not None:
            lines += [
                f"stance={item['stance']} conviction={item['conviction']} ({item['shift']})",
                "",
            ]
        else:
            lines += ["no verdict recorded", ""]
    return "\n".join(lines)
