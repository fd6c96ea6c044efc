"""What a persona reads in round N: the material `run`'s prompt and `round-context` share.

Round 1 is blind; round 2 holds the persona's own round-1 answer, its assigned peer's
whole answer and the peers' summaries; from round 3 the rebuttal transcript with the
critique exchanges (engine/prompting/transcript.py), within what the rest of the prompt
leaves of the gate: the gate counts everything the call reads.
"""

from __future__ import annotations

import sys
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting import prompts, transcript
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.persona import PersonaContext
from dreamcontext_council.rules.verdicts import Verdicts


def round_material(
    files: DebateFiles,
    debate: Debate,
    slug: str,
    number: int,
    roster: list[str],
    context: PersonaContext,
    verdicts: Verdicts,
    *,
    attachments: list[dict[str, object]],
    transcript_budget: int,
    pairs: dict[str, str],
) -> prompts.RoundMaterial:
    """What the persona sees in round N, for `run`'s prompt and `round-context` alike;
    `verdicts` as they stood when the round began, `pairs` round 2's critic → peer."""
    material = prompts.RoundMaterial(
        debate_id=debate.id,
        topic=debate.topic,
        question=debate.section("Question") or debate.topic,
        round=number,
        rounds_planned=debate.rounds_planned,
        facts=debate.facts(),
        options=debate.options or verdicts.options,
        personas=roster,
        attachments=list(attachments),
        directives=context.directives(number),
    )
    if number == 1:
        return material  # blind: nothing from any peer
    if number == 2:
        # The critic reads the arguments: its own round-1 answer, then its peer's whole
        # answer, then the peers' summaries; no table of stances and convictions.
        material.panel = context.panel(number) or ""
        own = next((e for e in files.entries(slug) if e.round == 1), None)
        if own is not None:
            material.own_previous = {"round": 1, "text": own.body}
        peer = pairs.get(slug)
        entry = next((e for e in files.entries(peer) if e.round == 1), None) if peer else None
        if peer and entry:
            material.peer = {"slug": peer, "text": entry.body}
        return material
    # No count of stances: a debater reads arguments, critiques and what is unanswered.
    # The gate counts all the call reads: the transcript gets what the rest leaves.
    whole = transcript.rebuttal_transcript(files, roster, slug, number, budget=sys.maxsize)
    _show_transcript(material, whole, texts=False)
    prompt = prompts.persona_prompt(slug, context.persona_text, context.aspects, material)
    budget = max(0, transcript_budget - len(prompt.system) - len(prompt.user))
    seen = transcript.rebuttal_transcript(files, roster, slug, number, budget=budget)
    _show_transcript(material, seen)
    seen.gate = transcript_budget
    material.transcript_log = seen.log_line(slug)
    return material


def _show_transcript(
    material: prompts.RoundMaterial, seen: transcript.RebuttalTranscript, *, texts: bool = True
) -> None:
    """Put the transcript into the material; without `texts`, only its frame (to measure),
    every part tagged as compressed so the frame is never shorter than what is sent."""

    def frame(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if texts:
            return items
        framed = []
        for item in items:
            shown = {k: frame(v) if k in ("answers", "turns") else v for k, v in item.items()}
            framed.append(shown | {"text": "", "compressed": True})
        return framed

    material.transcript_rounds = frame(seen.rounds)
    material.cross_examinations = seen.cross_examinations
    material.own_answers = frame(seen.own_answers)
    material.critiques = frame(seen.critiques)
    material.answers_to_critiques = frame(seen.answers_to_critiques)
