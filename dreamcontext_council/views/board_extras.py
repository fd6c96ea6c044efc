"""Lines under the board: usage totals and flags."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.rules.conformity import DebateMeasures
from dreamcontext_council.rules.diversity import diversity
from dreamcontext_council.rules.usage import usage_totals


def board_extra_data(snapshot: DebateSnapshot) -> dict[str, Any]:
    totals = usage_totals(snapshot.usage_records())
    persona_models = snapshot.persona_models()
    run = snapshot.run_state()
    return {
        "run": run.to_json() if run else None,
        "models": diversity(persona_models.values()).to_json()
        | {"personas": persona_models, "people": snapshot.people()},
        "usage": totals.to_json(),
        "flags": snapshot.debate.flags,
        "measures": snapshot.measures().to_json(),
        "baseline": solo.to_json() if (solo := snapshot.solo_comparison()) else None,
        **({"claims_problem": problem} if (problem := snapshot.ledger_problem) else {}),
    }


def board_extra_lines(snapshot: DebateSnapshot) -> list[str]:
    totals = usage_totals(snapshot.usage_records())
    lines = []
    run = snapshot.run_state()
    if run:
        # The board wraps it to its width, never cuts it: the resume command ends the line.
        lines.append(_labelled("RUN", run.line()))
    if snapshot.personas:
        lines.append(f"MODELS   {diversity(snapshot.persona_models().values()).line()}")
    if totals.calls:
        lines.append(f"USAGE    {totals.line()}")
    lines += [f"FLAG     {flag}" for flag in snapshot.debate.flags]
    if snapshot.ledger_problem is not None:
        lines.append(_labelled("CLAIMS", snapshot.ledger_problem))
    lines += measure_lines(snapshot.measures())
    solo = snapshot.solo_comparison()
    if solo:
        lines.append(f"SOLO     {solo.line()}")
    return lines


def _labelled(label: str, text: str) -> str:
    """A labelled row, its text in the board's second column (the board wraps it there)."""
    return f"{label:<8} {' '.join(text.split())}"


def measure_lines(measures: DebateMeasures) -> list[str]:
    """FLIPS and NEW rows once a round has answers or verdicts, ANCHOR once there is a verdict."""
    if not measures.novelty:
        return []
    flips = f"{len(measures.flips)} · conformity {len(measures.conformity_flips)}"
    if measures.flippers:
        flips += " · " + ", ".join(measures.flippers)
    novelty = " · ".join(f"r{n.round} {round(100 * n.share)}%" for n in measures.novelty)
    if measures.diminishing_rounds:
        novelty += " · diminishing returns"
    rows = [f"FLIPS    {flips}", f"NEW      {novelty}"]
    if measures.anchored is None:
        return rows
    anchor = (
        f"verdict {measures.final_stance} = round-1 majority"
        if measures.anchored
        else f"verdict {measures.final_stance} ≠ round-1 majority {measures.round1_majority}"
    )
    return [*rows, f"ANCHOR   {anchor}"]
