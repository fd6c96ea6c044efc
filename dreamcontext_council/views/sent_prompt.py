"""`council prompt`: the prompts a persona's model was sent in one round, as text or data."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.actions.received import SentPrompt


def sent_prompt_data(
    debate_id: str, slug: str, number: int, calls: list[SentPrompt]
) -> dict[str, Any]:
    """The JSON form: every call of the round, each with its system prompt and user message."""
    return {
        "debate_id": debate_id,
        "persona": slug,
        "round": number,
        "calls": [{"phase": c.phase, "system": c.system, "user": c.user} for c in calls],
    }


def render_sent_prompt(slug: str, number: int, calls: list[SentPrompt]) -> str:
    """Each call's system prompt then its user message, under a rule naming what follows."""
    parts = []
    for call in calls:
        for part, text in (("system", call.system), ("user", call.user)):
            parts.append(f"===== {slug} · round {number} · {call.phase} · {part} =====\n{text}")
    return "\n\n".join(parts) + "\n"
