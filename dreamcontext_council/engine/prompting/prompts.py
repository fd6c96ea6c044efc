"""Prompts for every call of a run, rendered from templates/prompts/."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    peer: dict[str, str] | None = None
    own_previous: dict[str, Any] | None = None
    """Round 2: the persona's own round-1 answer, whole."""
    directives: list[str] = field(default_factory=list)
    # Round 3 and later: the transcript so far (engine.prompting.transcript).
    transcript_rounds: list[dict[str, Any]] = field(default_factory=list)
    """Each earlier round: round, title, answers (slug, text, latest, compressed) of the peers."""
    cross_examinations: list[dict[str, Any]] = field(default_factory=list)
    """Who cross-examined whom, with the score (no text: it is in the answers)."""
    own_answers: list[dict[str, Any]] = field(default_factory=list)
    critiques: list[dict[str, Any]] = field(default_factory=list)
    """The critiques aimed at the persona from the latest cross-examination, whole, each with
    the turns of its exchange (engine.prompting.exchanges)."""
    answers_to_critiques: list[dict[str, Any]] = field(default_factory=list)
    """From round 4: the persona's own critiques with its target's answers, to press or drop."""
    transcript_log: str | None = None
    """The round-log bullet when the transcript was compressed to fit its budget."""


def persona_prompt(
    slug: str,
    persona_text: str,
    aspects: list[str],
    material: RoundMaterial,
    tools: ToolBox | None = None,
) -> Prompt:
    """The system prompt (who the persona is, on which council, and the contract) and the
    round's user message. `Prompt.task` describes the call for the accounting; it is never
    sent: the prompt's text says everything a model needs.

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
    system = resources.render(
        "prompts/persona-system.md.j2",
        persona_text=persona_text,
        slug=slug,
        debate_id=material.debate_id,
        personas=material.personas,
        aspects=aspects,
        council_size=len(material.personas),
        options=material.options,
        cross_examination=material.peer is not None,
        round=material.round,
        research={"persona": slug, "max_calls": tools.max_calls} if tools else None,
    )
    user = resources.render(
        "prompts/persona-round.md.j2",
        round=material.round,
        rounds_planned=material.rounds_planned,
        phase_title=PHASE_TITLES[phase],
        question=material.question,
        facts=material.facts,
        options=material.options,
        attachments=material.attachments,
        panel=material.panel,
        peer=material.peer,
        own_previous=material.own_previous,
        critiques=material.critiques,
        answers_to_critiques=material.answers_to_critiques,
        transcript_rounds=material.transcript_rounds,
        cross_examinations=material.cross_examinations,
        own_answers=material.own_answers,
        directives=material.directives,
    )
    return Prompt(system, user, PERSONA_MAX_TOKENS, task, tools)


def baseline_prompt(material: RoundMaterial) -> Prompt:
    """The solo answer: the round-1 question, options and attachments, the persona answer
    contract, and no persona."""
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
    system = resources.render(
        "prompts/baseline-system.md.j2", options=material.options, debate_id=material.debate_id
    )
    user = resources.render(
        "prompts/persona-round.md.j2",
        round=1,
        rounds_planned=1,
        phase_title="solo answer",
        question=material.question,
        facts=material.facts,
        options=material.options,
        attachments=material.attachments,
        panel="",
        peer=None,
        own_previous=None,
        critiques=[],
        answers_to_critiques=[],
        transcript_rounds=[],
        cross_examinations=[],
        own_answers=[],
        directives=[],
    )
    return Prompt(system, user, PERSONA_MAX_TOKENS, task)


def repair_prompt(original: Prompt, previous: str, problem: str) -> Prompt:
    """One repair request quoting what was wrong."""
    task = dict(original.task) | {"repair": True}
    user = resources.render("prompts/repair.md.j2", problem=problem, previous=previous)
    return Prompt(original.system, original.user + "\n\n" + user, original.max_tokens, task)


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
