"""The built-in offline provider: a deterministic scripted stand-in, not a model.

It follows the whole persona and synthesizer contract (verdict blocks, critiques,
scores, claims), learning each call from the prompt's own text as a model would
(engine/providers/scripted_task.py), so every code path of a debate runs with no network
and no key, and the offline demo shows that the prompts say enough.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import time
from typing import Any

from dreamcontext_council.engine.providers.base import Completion, Prompt, Usage, tools_refused
from dreamcontext_council.engine.providers.scripted_task import task_from_text as task_from_text

NOTICE = "scripted stand-in, not a model"
DELAY_ENV = "DREAMCONTEXT_SCRIPTED_DELAY"
_FREE_STANCES = ("Proceed now", "Hold off")


def _number(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    return int(digest[:8], 16)


def _stance_keys(task: dict[str, Any]) -> list[str]:
    keys = [str(o["key"]) for o in task.get("options") or []]
    return keys or list(_FREE_STANCES)


def _stance(task: dict[str, Any], persona: str, number: int) -> tuple[str, int]:
    """Every third persona dissents; the dissent weakens each round and concedes below 40."""
    keys = _stance_keys(task)
    topic = task.get("topic", "")
    roster = list(task.get("personas") or [persona])
    index = roster.index(persona) if persona in roster else _number(topic, persona) % 3
    dissents = len(keys) > 1 and index % 3 == 2
    conviction = 55 + _number(topic, persona, "conviction") % 21
    if not dissents:
        return keys[0], min(95, conviction + 6 * (number - 1))
    conviction = conviction + 5 - 8 * (number - 1)
    if conviction < 40:
        return keys[0], 50  # conceded: the stance shift shows on the board
    return keys[1 + _number(topic, persona) % (len(keys) - 1)], conviction


def _label(task: dict[str, Any], key: str) -> str:
    return next((str(o["label"]) for o in task.get("options") or [] if o["key"] == key), key)


def persona_answer(task: dict[str, Any]) -> str:
    """A round entry with every required section and a closing verdict block."""
    persona = str(task.get("persona", "persona"))
    number = int(task.get("round", 1))
    stance, conviction = _stance(task, persona, number)
    aspects = task.get("aspects") or ["the evidence"]
    lens = aspects[_number(persona, number) % len(aspects)]
    label = _label(task, stance)
    peers = [p for p in task.get("personas") or [] if p != persona]
    peer = task.get("peer")
    lines = [
        "### Executive Summary",
        f"{persona} backs {stance} ({label}) in round {number}, judged through {lens}. "
        f"This answer is a {NOTICE}: it shows the shape of a debate, not a real argument.",
        "",
        "### Position",
        f"Option {stance}: {label}, with conviction {conviction}.",
        "",
        "### Reasoning",
        f"- **{str(lens).capitalize()}** is the deciding lens for {persona}.",
        f"- The question was: {task.get('topic', '')}",
        "- A real model would weigh evidence here; the scripted provider only follows the contract.",
        "",
        "```text",
        f"scripted reasoning trace: persona={persona} round={number} stance={stance}",
        "```",
        "",
        "### Reactions to peers",
    ]
    lines += [f"**{p}**: noted; see round {max(1, number - 1)}." for p in peers[:3]] or [
        "No peers yet."
    ]
    if peer:
        score = 4 + _number(persona, peer, number) % 6
        lines += [
            "",
            "### Cross-examination",
            f"> {peer} backs its option with conviction.",
            f"- Major: **{peer}** states its position without numbers; the rollback cost is "
            "assumed, not shown.",
            f"- Minor: it leaves out how {lens} changes the outcome.",
            f"- Strongest point: {peer} names the option it backs and why.",
            f"Score: {score}/10",
        ]
    lines += [
        "",
        "### Open questions",
        f"What evidence on {lens} would move {persona} off {stance}?",
        "",
        "```verdict",
        f"stance: {stance}",
        f"conviction: {conviction}",
        f"headline: {persona} backs {stance} on {lens} (scripted)",
        f"concession: {peers[0] + ' has a point on cost' if peers else 'none'}",
        "```",
    ]
    return "\n".join(lines)


def check_answer(task: dict[str, Any]) -> str:
    """CONTINUE while the positions the check reads back different options, else CONVERGED."""
    stances = task.get("stances") or {}
    return "CONTINUE" if len(set(stances.values())) > 1 else "CONVERGED"


def synthesis_answer(task: dict[str, Any]) -> str:
    """A final report in the required section order, with a claims block."""
    verdicts: dict[str, dict[str, Any]] = task.get("verdicts") or {}
    number = int(task.get("round", 1))
    totals: dict[str, int] = {}
    for v in verdicts.values():
        totals[v["stance"]] = totals.get(v["stance"], 0) + int(v["conviction"])
    ranked = sorted(totals, key=lambda k: (-totals[k], k)) or ["A"]
    chosen = ranked[0]
    runner = ranked[1] if len(ranked) > 1 else "—"
    backers = [p for p, v in verdicts.items() if v["stance"] == chosen]
    dissent = [p for p, v in verdicts.items() if v["stance"] != chosen]
    personas = list(task.get("personas") or verdicts)
    first = backers[0] if backers else (personas[0] if personas else "council")
    claims = [
        {
            "claim": f"{_label(task, chosen)} is the better option on the evidence given.",
            "proposer": first,
            "round": 1,
            "supporters": backers[1:],
            "challengers": dissent,
            "retracted": False,
            "research": False,
        },
        {
            "claim": "The decision should be revisited if its main assumption fails.",
            "proposer": personas[-1] if personas else first,
            "round": number,
            "supporters": personas[:1],
            "challengers": [],
            "retracted": False,
            "research": False,
        },
    ]
    appendix = []
    for persona in personas:
        for r in range(1, number + 1):
            appendix += [
                f"### {persona} — Round {r}",
                f"{persona} backed its stance in round {r} (scripted).",
                "",
            ]
    return "\n".join(
        [
            "## Verdict",
            "",
            f"{_label(task, chosen)} ({chosen}). Confidence: medium. This report was written by the "
            f"{NOTICE}.",
            "",
            "## Decision card",
            "",
            "| Chosen | Runner-up | Deciding factors | Strongest dissent | Conditions to revisit |",
            "|---|---|---|---|---|",
            f"| {chosen} | {runner} | conviction on the final round | {', '.join(dissent) or 'none'} | "
            "a failed assumption |",
            "",
            "## Why",
            "",
            f"- **{chosen}** holds the most conviction in the final round. *— {first} R{number}*",
            "",
            "## Position timeline",
            "",
            "## What was debated",
            "",
            "The personas weighed the options through their aspects.",
            "",
            "## Minority view & revisit conditions",
            "",
            *(f"- **{p}** held {verdicts[p]['stance']}. *— {p} R{number}*" for p in dissent),
            *(["No persona dissented."] if not dissent else []),
            "",
            "## Open risks",
            "",
            "- The scripted provider does not reason; run with a real model for a real decision.",
            "",
            "## Appendix: per-agent per-round summaries",
            "",
            *appendix,
            "```claims",
            json.dumps(claims, indent=1),
            "```",
        ]
    )


def personas_answer(task: dict[str, Any]) -> str:
    """A JSON roster for `--personas auto`."""
    roles = [
        ("advocate", ["benefits", "momentum"], "You argue for acting: you look for what we gain."),
        (
            "skeptic",
            ["risk", "evidence"],
            "You doubt claims until they are shown and look for failure modes.",
        ),
        (
            "operator",
            ["operations", "cost"],
            "You run the system day to day and care about toil and cost.",
        ),
        ("user-voice", ["users", "latency"], "You speak for the people who use what we build."),
    ]
    count = max(2, min(len(roles), int(task.get("count", 4))))
    return json.dumps(
        [
            {"slug": slug, "aspects": aspects, "body": f"{body} ({NOTICE}.) " * 2}
            for slug, aspects, body in roles[:count]
        ]
    )


def scripted_text(task: dict[str, Any]) -> str:
    """The scripted answer for a call, by its phase."""
    phase = task.get("phase", "opening")
    if phase == "check":
        return check_answer(task)
    if phase == "synthesis":
        return synthesis_answer(task)
    if phase == "persona-generation":
        return personas_answer(task)
    return persona_answer(task)


def paragraphs(text: str) -> list[str]:
    """`text` in pieces, one paragraph each with the blank line before the next: they join
    to `text`."""
    pieces = re.split(r"(?<=\n\n)(?=[^\n])", text)
    return [piece for piece in pieces if piece]


class ScriptedProvider:
    """Offline and deterministic; an optional fixed delay simulates latency; no tools.

    A prompt's `on_text` hears the answer paragraph by paragraph, as a stream would bring it.
    """

    name = "scripted"
    supports_tools = False

    def __init__(self, delay_s: float | None = None) -> None:
        self.delay_s = float(os.environ.get(DELAY_ENV, "0") or 0) if delay_s is None else delay_s

    async def complete(self, prompt: Prompt, model: str) -> Completion:
        if prompt.tools is not None:
            raise tools_refused(self.name)
        started = time.perf_counter()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        task = task_from_text(f"{prompt.system}\n\n{prompt.user}")
        text = scripted_text(task)
        if prompt.on_text is not None:
            for piece in paragraphs(text):
                prompt.on_text(piece)
        usage = Usage(
            input_tokens=(len(prompt.system) + len(prompt.user)) // 4,
            output_tokens=len(text) // 4,
            latency_s=time.perf_counter() - started,
        )
        return Completion(text, usage, "scripted", model or "scripted", 1)
