"""Lines under the board: usage totals and flags."""

from __future__ import annotations

import textwrap
from typing import Any

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.rules.conformity import DebateMeasures
from dreamcontext_council.rules.diversity import diversity
from dreamcontext_council.rules.usage import usage_totals

RUN_LINE_WIDTH = 80  # the board's 90 cells, less the 9 of the label


def board_extra_data(snapshot: DebateSnapshot) -> dict[str, Any]:
    totals = usage_totals(snapshot.usage_records())
    persona_models = snapshot.persona_models()
    run = snapshot.run_state()
    return {
        "run": run.to_json() if run else None,
        "models": diversity(persona_models.values()).to_json() | {"personas": persona_models},
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
        # Wrapped, never cut: the resume command is at the end of the line.
        lines += _wrapped("RUN", run.line())
    if snapshot.personas:
        lines.append(f"MODELS   {diversity(snapshot.persona_models().values()).line()}")
    if totals.calls:
        lines.append(f"USAGE    {totals.line()}")
    lines += [f"FLAG     {flag}" for flag in snapshot.debate.flags]
    if snapshot.ledger_problem is not None:
        lines += _wrapped("CLAIMS", snapshot.ledger_problem)
    lines += measure_lines(snapshot.measures())
    solo = snapshot.solo_comparison()
    if solo:
        lines.append(f"SOLO     {solo.line()}")
    return lines


def _wrapped(label: str, text: str) -> list[str]:
    """A labelled row wrapped, never cut (a command or a file name may end it)."""
    wrapped = textwrap.wrap(text, RUN_LINE_WIDTH, break_on_hyphens=False)
    return [f"{label if i == 0 else '':<8} {part}" for i, part in enumerate(wrapped)]


def measure_lines(measures: DebateMeasures) -> list[str]:
    """FLIPS, NEW and ANCHOR rows, once a round has verdicts."""
    if measures.anchored is None:
        return []
    flips = f"{len(measures.flips)} · conformity {len(measures.conformity_flips)}"
    if measures.flippers:
        flips += " · " + ", ".join(measures.flippers)
    novelty = " · ".join(f"r{n.round} {round(100 * n.share)}%" for n in measures.novelty)
    if measures.diminishing_rounds:
        novelty += " · diminishing returns"
    anchor = (
        f"verdict {measures.final_stance} = round-1 majority"
        if measures.anchored
        else f"verdict {measures.final_stance} ≠ round-1 majority {measures.round1_majority}"
    )
    return [f"FLIPS    {flips}", f"NEW      {novelty}", f"ANCHOR   {anchor}"]
