"""Lines under the board: usage totals and flags."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.rules.diversity import diversity
from dreamcontext_council.rules.usage import usage_totals


def board_extra_data(snapshot: DebateSnapshot) -> dict[str, Any]:
    totals = usage_totals(snapshot.usage_records())
    persona_models = snapshot.persona_models()
    return {
        "models": diversity(persona_models.values()).to_json() | {"personas": persona_models},
        "usage": totals.to_json(),
        "flags": snapshot.debate.flags,
    }


def board_extra_lines(snapshot: DebateSnapshot) -> list[str]:
    totals = usage_totals(snapshot.usage_records())
    lines = []
    if snapshot.personas:
        lines.append(f"MODELS   {diversity(snapshot.persona_models().values()).line()}")
    if totals.calls:
        lines.append(f"USAGE    {totals.line()}")
    lines += [f"FLAG     {flag}" for flag in snapshot.debate.flags]
    return lines
