"""What a persona received in a round of `council run`: the critiques aimed at it, recorded
in its context-and-persona.md, and the exact prompt of each model call, kept beside it in
`<slug>/prompts/round-N.json` so `council prompt` can print it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dreamcontext_council import resources
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.errors import FormatError, NotFoundError, UsageError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.safe_read import inside
from dreamcontext_council.folder.storage import atomic_write_text
from dreamcontext_council.rules.debate import MAX_ROUNDS


@dataclass(frozen=True)
class SentPrompt:
    """One model call's prompt as it was sent: the system prompt and the user message."""

    phase: str
    system: str
    user: str


def record_critiques(
    files: DebateFiles, slug: str, number: int, critiques: list[dict[str, Any]]
) -> bool:
    """Append `## Round N — Critiques received` to the persona's context (once per round), as
    the cross-context panels are: what the persona was asked to answer. False when there is
    nothing to record or the round's section is already there."""
    if not critiques:
        return False
    with files.lock():
        context = files.context(slug)
        if number in context.critique_rounds():
            return False
        text = resources.render("files/critiques-received.md.j2", critiques=critiques)
        context.append_section(f"Round {number} — Critiques received", text)
        files.save_context(slug, context)
    return True


def record_prompt(
    files: DebateFiles, slug: str, number: int, sent: SentPrompt, *, first: bool
) -> None:
    """Keep the prompt of a call before it is made: `first` starts the round's record afresh
    (a rerun asks again), a repair is added after the call it repairs. Only what the model
    reads is kept, never a key or a provider setting."""
    path = files.persona_paths(slug).sent_prompt(number)
    with files.lock():
        inside(path, files.paths.folder)  # a `prompts` link out of the debate is not written
        kept = [] if first else _read_calls(files, slug, number)
        calls = [_as_record(c) for c in [*kept, sent]]
        record = {"persona": slug, "round": number, "calls": calls}
        # A record of what was sent, kept for `council prompt`: atomic, not fsynced (a power
        # cut may lose it; the answer it led to is what the debate needs kept).
        atomic_write_text(
            path,
            json.dumps(record, ensure_ascii=False, indent=2) + "\n",
            within=files.root.path,
            durable=False,
        )


def sent_prompts(root: Root, debate_id: str, slug: str, number: int) -> list[SentPrompt]:
    """The prompts the persona's model was sent in round N, the round's call first."""
    if not 1 <= number <= MAX_ROUNDS:
        raise UsageError(f"Round {number} is not a round; a debate has rounds 1 to {MAX_ROUNDS}.")
    files = DebateFiles(root, debate_id)
    files.require_persona(files.debate(), slug)
    calls = _read_calls(files, slug, number)
    if not calls:
        raise NotFoundError(
            f"No prompt is recorded for {slug} in round {number} of {debate_id}: only "
            "`dreamcontext council run` sends prompts; run it, or read the round with "
            f"`dreamcontext council round-context {debate_id} {slug}`."
        )
    return calls


def _as_record(call: SentPrompt) -> dict[str, str]:
    return {"phase": call.phase, "system": call.system, "user": call.user}


def _read_calls(files: DebateFiles, slug: str, number: int) -> list[SentPrompt]:
    path = files.persona_paths(slug).sent_prompt(number)
    if not path.exists():
        return []
    where = f"{slug}/prompts/{path.name}"
    try:
        data = json.loads(files.read(path))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise FormatError(f"{where} is not JSON; delete it, a rerun writes it again.") from None
    calls = data.get("calls") if isinstance(data, dict) else None
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and all(isinstance(c.get(k), str) for k in ("phase", "system", "user"))
        for c in calls
    ):
        raise FormatError(
            f"{where} does not hold a list of calls with phase, system and user; delete it, "
            "a rerun writes it again."
        )
    return [SentPrompt(c["phase"], c["system"], c["user"]) for c in calls]
