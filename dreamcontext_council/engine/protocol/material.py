"""What a persona reads in round N: the material `run`'s prompt and `round-context` share.

A persona's message is a conversation that grows by appending: round N's starts with
round N-1's, byte for byte, so a provider's prefix cache serves it. Each round adds the
persona's own answer of the round before, what is new, then the round's own part:

- round 1 is blind: its title, its directives and the contract;
- round 2 adds the persona's round-1 answer, its assigned peer's whole answer and the
  others' summaries, then the cross-examination assignment;
- round 3 adds its round-2 answer, the round-1 answers of the peers it has not read whole
  and every peer's round-2 answer, then the critiques aimed at it; from round 4 each round
  adds its last answer, the peers' answers of the round before, the critiques and its
  target's answers to its own critique.

Every earlier round is rebuilt from the folder as it stood when that round began (answers
of the rounds before it, its directives and panel, the exchanges followed up to it), so it
reads as it was sent. From round 3 the whole is fitted to what the rest of the prompt
leaves of the gate (engine/prompting/transcript.py); a compressed message gives up the
shared prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.rounds import participants
from dreamcontext_council.engine.prompting import prompts, transcript
from dreamcontext_council.engine.prompting.exchanges import exchanges_before
from dreamcontext_council.engine.prompting.transcript import Part
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.persona import PersonaContext
from dreamcontext_council.rules.report import RoundEntry
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
    `verdicts` as they stood when the round began, `pairs` round 2's critic → peer (needed
    from round 2 on: round 2's part is in every later message)."""

    def base(k: int) -> prompts.RoundMaterial:
        return prompts.RoundMaterial(
            debate_id=debate.id,
            topic=debate.topic,
            question=debate.section("Question") or debate.topic,
            round=k,
            rounds_planned=debate.rounds_planned,
            facts=debate.facts(),
            options=debate.options or verdicts.options,
            personas=roster,
            attachments=list(attachments),
            directives=context.directives(k),
        )

    seated = {k: participants(files, debate, k) for k in range(1, number)} | {number: roster}
    # The conversation starts at the first round the persona took part in.
    first = next((k for k in range(1, number + 1) if slug in seated[k]), number)
    reading = _Reading(files, slug, number, pairs)
    turns = []
    for k in range(first, number + 1):
        turn = base(k)
        reading.add(turn, context, seated[k])
        turns.append(turn)
    material = turns[-1]
    material.earlier = turns[:-1]
    if number >= 3:
        # No count of stances: a debater reads arguments, critiques and what is unanswered.
        # The gate counts all the call reads: the answers and exchanges get what the rest
        # leaves, measured with every part empty.
        transcript.framed(reading.parts)
        prompt = prompts.persona_prompt(slug, context.persona_text, context.aspects, material)
        budget = max(0, transcript_budget - len(prompt.system) - len(prompt.user))
        fitted = transcript.fit(reading.parts, budget)
        fitted.gate = transcript_budget
        material.transcript_log = fitted.log_line(slug)
    return material


@dataclass
class _Reading:
    """What a persona has read so far, round by round, and the parts compression may cut."""

    files: DebateFiles
    slug: str
    number: int
    """The round being asked: the tiers are counted from it."""
    pairs: dict[str, str]
    parts: list[Part] = field(default_factory=list)
    read: set[tuple[str, int]] = field(default_factory=set)
    """(persona, round) of every answer already shown whole."""
    _entries: dict[str, list[RoundEntry]] = field(default_factory=dict)

    def entries(self, persona: str) -> list[RoundEntry]:
        if persona not in self._entries:
            self._entries[persona] = self.files.entries(persona)
        return self._entries[persona]

    def entry(self, persona: str, k: int) -> RoundEntry | None:
        return next((e for e in self.entries(persona) if e.round == k), None)

    def latest(self, persona: str) -> int:
        return max((e.round for e in self.entries(persona) if e.round < self.number), default=0)

    def answer(self, persona: str, k: int) -> dict[str, Any] | None:
        """An answer shown whole for the first time, as a part compression may cut."""
        entry = self.entry(persona, k)
        if entry is None or (persona, k) in self.read:
            return None
        self.read.add((persona, k))
        mine, latest = persona == self.slug, k == self.latest(persona)
        if mine:
            tier = transcript.OWN_LATEST if latest else transcript.OWN_OLDER
        else:
            tier = transcript.PEER_LATEST if latest else transcript.PEER_OLDER
        shown: dict[str, Any] = {"slug": persona, "round": k, "yours": mine}
        self.parts.append(Part(f"{persona} R{k}", entry.body, shown, tier, k))
        return shown

    def add(self, turn: prompts.RoundMaterial, context: PersonaContext, seated: list[str]) -> None:
        """Fill round `turn.round`'s part from what stood when it began."""
        k = turn.round
        if k >= 2:
            turn.own_previous = self.answer(self.slug, k - 1)
        if k == 2:
            # The critic reads the arguments: its own round-1 answer, then its peer's whole
            # answer, then the others' summaries; no table of stances and convictions.
            turn.panel = context.panel(k) or ""
            peer = self.pairs.get(self.slug)
            turn.peer = self.answer(peer, 1) if peer else None
            return
        if k < 3:
            return
        # The answers of earlier rounds not read whole yet, round by round, in roster order.
        for r in range(1, k):
            answers = [
                shown
                for persona in seated
                if persona != self.slug and (shown := self.answer(persona, r)) is not None
            ]
            if answers:
                turn.transcript_rounds.append(
                    {"round": r, "title": transcript.phase_title(r), "answers": answers}
                )
        exchanges = exchanges_before(self.files, k, self._entries)
        turn.cross_examinations = transcript.cross_examination_index(
            self.files, self.slug, k, exchanges
        )
        tier = transcript.EXCHANGE if k == self.number else transcript.OWN_OLDER
        for exchange in exchanges:
            thread = exchange.shown(self.slug)
            if exchange.target == self.slug:
                turn.critiques.append(thread)
                label = f"{exchange.critic} R{exchange.round} cross-examination of {self.slug}"
            elif exchange.critic == self.slug and exchange.answered_in() is not None:
                turn.answers_to_critiques.append(thread)
                label = f"{exchange.target}'s answers to {self.slug}'s R{exchange.round} cross-examination"
            else:
                continue
            if k < self.number:
                label += f", as round {k} showed it"
            self.parts.append(Part(label, exchange.critique, thread, tier, exchange.round))
            for turn_shown in thread["turns"]:
                turn_label = f"{turn_shown['by']} R{turn_shown['round']} in that exchange"
                if k < self.number:
                    turn_label += f", as round {k} showed it"
                self.parts.append(
                    Part(turn_label, str(turn_shown["text"]), turn_shown, tier, turn_shown["round"])
                )
