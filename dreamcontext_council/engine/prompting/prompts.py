"""Prompts for every call of a run, rendered from templates/prompts/."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from dreamcontext_council import resources
from dreamcontext_council.engine.providers.base import Prompt
from dreamcontext_council.engine.providers.tools import ToolBox

PHASE_TITLES = {
    "opening": "blind opening",
    "cross-exam": "cross-examination",
    "rebuttal": "rebuttal",
}
PERSONA_MAX_TOKENS = 4096
CHECK_MAX_TOKENS = 16
SYNTHESIS_MAX_TOKENS = 8192
BASELINE_PERSONA = "(baseline)"
"""The name a solo answer goes by in prompts and usage.jsonl: no persona slug has parentheses."""


@dataclass
class CheckMaterial:
    """What the check model reads after round N: arguments, never stances or convictions."""

    perspectives: list[dict[str, Any]]
    """Every persona's round-1 perspective: slug, person, summary."""
    exchanges: list[dict[str, Any]]
    """Each round-2 exchange: critic, target, score ("6/10" or "no score"), points."""
    positions: list[dict[str, Any]]
    """Where each persona stands after round N, in its own words: slug, person, summary."""
    unanswered: list[dict[str, Any]] = field(default_factory=list)
    """Critiques their target has not answered in a later round: round, critic, target."""
    open_questions: list[dict[str, Any]] = field(default_factory=list)
    """The open questions of each round-N answer: slug, points."""


def phase_of(number: int) -> str:
    """opening for round 1, cross-exam for round 2, rebuttal after."""
    return "opening" if number == 1 else "cross-exam" if number == 2 else "rebuttal"


@dataclass
class RoundMaterial:
    """What a persona sees in one round."""

    debate_id: str
    topic: str
    question: str
    round: int
    rounds_planned: int
    facts: list[str]
    options: list[dict[str, str]]
    personas: list[str]
    attachments: list[dict[str, Any]] = field(default_factory=list)
    panel: str = ""
    """Round 2: the others' round-1 summaries."""
    peer: dict[str, Any] | None = None
    """Round 2: the peer to cross-examine and its whole round-1 answer (slug, text)."""
    own_previous: dict[str, Any] | None = None
    """From round 2: the persona's own answer of the round before, whole (round, text)."""
    directives: list[str] = field(default_factory=list)
    transcript_rounds: list[dict[str, Any]] = field(default_factory=list)
    """From round 3: the peers' answers this round adds, those not read whole before, one
    block per earlier round: round, title, answers (slug, text, compressed)."""
    cross_examinations: list[dict[str, Any]] = field(default_factory=list)
    """Who cross-examined whom, with the score (no text: it is in the answers)."""
    critiques: list[dict[str, Any]] = field(default_factory=list)
    """The critiques aimed at the persona from the latest cross-examination, whole, each with
    the turns of its exchange (engine.prompting.exchanges)."""
    answers_to_critiques: list[dict[str, Any]] = field(default_factory=list)
    """From round 4: the persona's own critiques with its target's answers, to press or drop."""
    earlier: list[RoundMaterial] = field(default_factory=list)
    """The persona's earlier rounds, each as it stood when that round began: their parts
    open this round's message, byte for byte (engine/protocol/material.py)."""
    transcript_log: str | None = None
    """The round-log bullet when the message was compressed to fit its budget."""


def debate_brief(material: RoundMaterial) -> str:
    """What every persona of the debate reads first, in every round: the question, facts,
    options and attachments. It opens each persona's system prompt and the baseline's, the
    same text for all of them, so a provider's prompt cache serves it to every call; it
    ends with a blank line, where the part of the prompt that follows begins."""
    brief = resources.render(
        "prompts/debate-brief.md.j2",
        question=material.question,
        facts=material.facts,
        options=material.options,
        attachments=material.attachments,
    )
    return brief.rstrip("\n") + "\n\n"


def round_parts(material: RoundMaterial) -> list[str]:
    """The persona's message, one part per round it took part in: round N's message is
    round N-1's with round N's part appended, so each part is rendered from that round's
    own material, never from a later one."""
    title = PHASE_TITLES[phase_of(material.round)]
    parts = [
        _round_message(turn, phase_title=PHASE_TITLES[phase_of(turn.round)])
        for turn in material.earlier
    ]
    parts.append(_round_message(material, phase_title=title))
    parts[0] = parts[0].lstrip("\n")
    return parts


def persona_prompt(
    slug: str,
    persona_text: str,
    aspects: list[str],
    material: RoundMaterial,
    tools: ToolBox | None = None,
) -> Prompt:
    """The system prompt (the debate brief, then who the persona is, on which council, and
    the answer contract) and the round's user message: the debate so far, round by round,
    then what is new this round. `Prompt.task` describes the call for the accounting; it
    is never sent: the prompt's text says everything a model needs.

    The prompt grows by appending: the system prompt is the same in every round, and the
    user message starts with the previous round's, byte for byte (`round_parts`). The
    marks say where the shared prefixes end: after the brief (every persona's), after the
    system prompt (this persona's, when a later round reads it), where the previous
    round's message ended and where this one's ends (`_worth_caching`).

    With `tools`, the persona is told how many research calls it may make and how to
    cite the notes they leave, and the prompt carries the toolbox to the provider.
    """
    phase = phase_of(material.round)
    task: dict[str, Any] = {
        "phase": phase,
        "debate": material.debate_id,
        "topic": material.topic,
        "persona": slug,
        "round": material.round,
        "options": material.options,
        "personas": material.personas,
        "aspects": aspects,
    }
    if material.peer:
        task["peer"] = material.peer["slug"]
    brief = debate_brief(material)
    system = brief + resources.render(
        "prompts/persona-system.md.j2",
        persona_text=persona_text,
        slug=slug,
        debate_id=material.debate_id,
        personas=material.personas,
        aspects=aspects,
        council_size=len(material.personas),
        options=material.options,
        research={"persona": slug, "max_calls": tools.max_calls} if tools else None,
    )
    parts = round_parts(material)
    user = "".join(parts)
    return Prompt(
        system,
        user,
        PERSONA_MAX_TOKENS,
        task,
        tools,
        system_marks=(len(brief), len(system)) if material.rounds_planned > 1 else (len(brief),),
        user_marks=_worth_caching(
            len(user) - len(parts[-1]), len(user), material.round, material.rounds_planned
        ),
        user_breaks=tuple(itertools.accumulate(len(part) for part in parts[:-1])),
    )


def _worth_caching(previous: int, end: int, number: int, planned: int) -> tuple[int, ...]:
    """The marks a cache should keep in round `number`: where the previous round's message
    ends (that round wrote the prefix; this one reads it), and where this one's ends (the
    next round reads it), unless this is the last round planned: a prefix no later call
    reads is not worth a cache write."""
    marks = [previous] if previous > 0 else []
    if number < planned:
        marks.append(end)
    return tuple(marks)


def _round_message(
    material: RoundMaterial,
    *,
    phase_title: str,
    rounds_planned: int | None = None,
    solo: bool = False,
) -> str:
    """One round's part of the message: the persona's answer of the round before and what
    it reads new, then the round's title, the persona's assignment and exchanges, the
    directives, and what this round's answer adds to the contract."""
    return resources.render(
        "prompts/persona-round.md.j2",
        round=material.round,
        transcript_rounds=material.transcript_rounds,
        rounds_planned=rounds_planned or material.rounds_planned,
        phase_title=phase_title,
        solo=solo,
        panel=material.panel,
        peer=material.peer,
        own_previous=material.own_previous,
        critiques=material.critiques,
        answers_to_critiques=material.answers_to_critiques,
        cross_examinations=material.cross_examinations,
        directives=material.directives,
    )


def baseline_prompt(material: RoundMaterial) -> Prompt:
    """The solo answer: the debate brief (question, options, attachments), the persona
    answer contract, and no persona."""
    task: dict[str, Any] = {
        "phase": "baseline",
        "debate": material.debate_id,
        "topic": material.topic,
        "persona": BASELINE_PERSONA,
        "round": 1,
        "options": material.options,
        "personas": [BASELINE_PERSONA],
        "aspects": [],
    }
    brief = debate_brief(material)
    system = brief + resources.render(
        "prompts/baseline-system.md.j2", options=material.options, debate_id=material.debate_id
    )
    solo = RoundMaterial(
        debate_id=material.debate_id,
        topic=material.topic,
        question=material.question,
        round=1,
        rounds_planned=1,
        facts=[],
        options=[],
        personas=[],
    )
    user = _round_message(solo, phase_title="solo answer", solo=True)
    return Prompt(system, user, PERSONA_MAX_TOKENS, task, system_marks=(len(brief),))


def repair_prompt(original: Prompt, previous: str, problem: str) -> Prompt:
    """One repair request quoting what was wrong."""
    task = dict(original.task) | {"repair": True}
    user = resources.render("prompts/repair.md.j2", problem=problem, previous=previous)
    # The original prompt comes first, whole: the repair reads its cached prefixes.
    return replace(original, user=original.user + "\n\n" + user, task=task)


def check_prompt(
    question: str, number: int, rounds_planned: int, material: CheckMaterial
) -> Prompt:
    """The one-word check: round-1 perspectives, round-2 exchanges, round N, what is unanswered.

    No convergence figure, stance or conviction reaches the prompt: the check reads arguments."""
    task = {"phase": "check", "round": number}
    user = resources.render(
        "prompts/check.md.j2",
        question=question,
        round=number,
        rounds_planned=rounds_planned,
        perspectives=material.perspectives,
        exchanges=material.exchanges,
        positions=material.positions,
        unanswered=material.unanswered,
        open_questions=material.open_questions,
    )
    return Prompt(resources.render("prompts/check-system.md.j2"), user, CHECK_MAX_TOKENS, task)


def synthesis_prompt(values: dict[str, Any], task: dict[str, Any]) -> Prompt:
    """The clean synthesizer call."""
    user = resources.render("prompts/synthesis.md.j2", **values)
    return Prompt(
        resources.render("prompts/synthesis-system.md.j2"), user, SYNTHESIS_MAX_TOKENS, task
    )


def personas_prompt(question: str, options: list[dict[str, str]], count: int) -> Prompt:
    """Ask the orchestrator model for topic-specific personas (`--personas auto`)."""
    task = {"phase": "persona-generation", "topic": question, "count": count}
    user = resources.render(
        "prompts/personas-auto.md.j2",
        question=question,
        options=options,
        count=count,
    )
    return Prompt("You design councils of expert personas.", user, 4096, task)
