"""The call a prompt describes, read from its own human-readable sections, as a model reads it.

A prompt carries no machine-readable line: the scripted stand-in and any test stub learn
which call they answer (phase, round, persona, options, the peer to cross-examine, a
repair, the verdicts a synthesis reports) from the text a model receives, the system
prompt and the user message joined in either order. What a section does not say is left
out of the task.
"""

from __future__ import annotations

import re
from typing import Any

# The titles persona-round.md.j2 gives each phase (engine/prompting/prompts.PHASE_TITLES).
_PHASES = {
    "blind opening": "opening",
    "cross-examination": "cross-exam",
    "rebuttal": "rebuttal",
    "solo answer": "baseline",
}
BASELINE_PERSONA = "(baseline)"
_ROUND = re.compile(r"^# Round (\d+) of (\d+) — (.+)$", re.M)
_DEBATE = re.compile(r"^# Debate (\S+)$", re.M)
# The debate brief that opens a persona's system prompt (prompts/debate-brief.md.j2).
_QUOTED = re.compile(r"<(peer-answer|your-answer|attachment|answer)\b[^>]*>.*?</\1>", re.S)
_BRIEF = re.compile(r"^# The question before the council$", re.M)
_CHECK = re.compile(
    r"^After (\d+) rounds of debate \(of at most \d+\), evaluate whether to continue\.$", re.M
)
_DESIGN = re.compile(r"^Design a council of (\d+) personas to debate this question:$", re.M)
_REPAIR = re.compile(r"^Your previous (?:answer|report) could not be accepted: ", re.M)
_IDENTITY = re.compile(
    r"^You are `([^`\n]+)`, one persona on a council of \d+ debating a decision in rounds "
    r"\(debate `([^`\n]+)`; the council: ([^\n]*?)\)\.",
    re.M,
)
_SOLO = re.compile(r"^You answer a decision question alone \(debate `([^`\n]+)`\)", re.M)
_ASPECTS = re.compile(r"^Your aspects, the lenses you judge every option through: (.*)\.$", re.M)
_TICKED = re.compile(r"`([^`\n]+)`")
_OPTION = re.compile(r"^- \*\*(.+?)\*\*: (.*)$")
_PEER = re.compile(r"^## Your cross-examination assignment: (\S+)$", re.M)
_SAMPLE = re.compile(r"^Sample (\d+): answer on your own\.$", re.M)
_BACKS = re.compile(r"\bbacks (.+?) \(")
_TALLY_ROUND = re.compile(r"\*\*Final tally \(round (\d+)\):\*\*")
_CELL = re.compile(r"^(.+) (\d{1,3})$")


def _first(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    return pattern.search(text)


def _section(text: str, title: str, start: int = 0) -> str | None:
    """The body of the first `## title` section at or after `start`, up to the next `## `."""
    found = re.compile(rf"^## {re.escape(title)}$", re.M).search(text, start)
    if found is None:
        return None
    end = re.compile(r"^## ", re.M).search(text, found.end())
    return text[found.end() : end.start() if end else len(text)].strip("\n")


def _options(text: str, start: int) -> list[dict[str, str]]:
    body = _section(text, "Options", start) or ""
    options = []
    for line in body.split("\n"):
        found = _OPTION.match(line)
        if found:
            options.append({"key": found.group(1), "label": found.group(2)})
        elif options:
            break
    return options


def _council(text: str) -> dict[str, Any]:
    """Who the persona is, its debate, roster and aspects, from its system prompt."""
    task: dict[str, Any] = {}
    identity = _first(_IDENTITY, text)
    if identity:
        task["persona"] = identity.group(1)
        task["debate"] = identity.group(2)
        task["personas"] = _TICKED.findall(identity.group(3))
    aspects = _first(_ASPECTS, text)
    task["aspects"] = [a.strip() for a in aspects.group(1).split(", ")] if aspects else []
    return task


def _persona_call(text: str, title: re.Match[str]) -> dict[str, Any]:
    brief = _first(_BRIEF, text)
    start = brief.start() if brief else title.start()
    task: dict[str, Any] = {
        "phase": _PHASES.get(title.group(3).strip(), "rebuttal"),
        "round": int(title.group(1)),
        "topic": _section(text, "Question", start) or "",
        "options": _options(text, start),
    }
    if task["phase"] == "baseline":
        solo = _first(_SOLO, text)
        if solo:
            task["debate"] = solo.group(1)
        task |= {"persona": BASELINE_PERSONA, "personas": [BASELINE_PERSONA], "aspects": []}
    else:
        task |= _council(text)
    peer = _PEER.search(text, title.start())
    if peer:
        task["peer"] = peer.group(1)
    sample = _first(_SAMPLE, text)
    if sample:
        task["sample"] = int(sample.group(1))
    return task


def _blocks(body: str) -> dict[str, str]:
    """The `### slug` blocks of a check section: slug → its text."""
    found: dict[str, str] = {}
    parts = re.split(r"^### (.+)$", body, flags=re.M)
    for heading, text in zip(parts[1::2], parts[2::2], strict=True):
        slug = heading.split()[0] if heading.split() else heading
        found[slug] = text.strip("\n")
    return found


def _check_call(text: str, found: re.Match[str]) -> dict[str, Any]:
    """The check reads where each persona stands as prose; the stance its summary says it backs."""
    number = int(found.group(1))
    body = _section(text, f"Where each persona stands after round {number}", found.start()) or ""
    stances = {}
    for slug, summary in _blocks(body).items():
        backs = _BACKS.search(summary)
        stances[slug] = backs.group(1) if backs else summary
    return {"phase": "check", "round": number, "stances": stances}


def _verdict_record(text: str) -> tuple[list[str], int, dict[str, dict[str, Any]]]:
    """From the synthesis prompt's last section: the personas, the final round, its verdicts."""
    at = text.rfind("\n## Verdict record\n")
    record = text[at:] if at >= 0 else ""
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in record.split("\n")
        if line.startswith("| ")
    ]
    header = next((r for r in rows if r and r[0] == "Persona"), [])
    numbers = [int(c[1:]) for c in header[1:] if c[1:].isdigit()]
    tally = _TALLY_ROUND.search(record)
    number = int(tally.group(1)) if tally else (numbers[-1] if numbers else 1)
    column = numbers.index(number) + 1 if number in numbers else None
    personas: list[str] = []
    verdicts: dict[str, dict[str, Any]] = {}
    for row in rows:
        if not row or row[0] in ("Persona", "_convergence_") or set(row[0]) <= {"-"}:
            continue
        personas.append(row[0])
        cell = _CELL.match(row[column]) if column is not None and column < len(row) else None
        if cell:
            verdicts[row[0]] = {"stance": cell.group(1), "conviction": int(cell.group(2))}
    return personas, number, verdicts


def _synthesis_call(text: str, found: re.Match[str]) -> dict[str, Any]:
    personas, number, verdicts = _verdict_record(text)
    return {
        "phase": "synthesis",
        "debate": found.group(1),
        "topic": _section(text, "Question", found.start()) or "",
        "round": number,
        "personas": personas,
        "options": _options(text, found.start()),
        "verdicts": verdicts,
    }


def _design_call(text: str, found: re.Match[str]) -> dict[str, Any]:
    rest = text[found.end() :].lstrip("\n")
    topic = re.split(r"\n\n(?:Options: |Choose personas whose)", rest, maxsplit=1)[0]
    return {"phase": "persona-generation", "topic": topic.strip(), "count": int(found.group(1))}


def task_from_text(text: str) -> dict[str, Any]:
    """The call a prompt describes, from its own sections; {} for text that is no council call.

    The kind of call is the one whose opening line comes first in the text: a persona's
    round title, the synthesis's `# Debate <id>`, the check's question, or the request for
    a roster; a repair request after it makes the call a repair. A persona's message holds
    the title of every round it took part in: the last one is the round asked."""
    # What a prompt quotes (attachments, answers) may hold any line: never a call's opening.
    masked = _QUOTED.sub(lambda quoted: re.sub(r"[^\n]", " ", quoted.group(0)), text)
    kinds = [
        (found.start(), reader, found)
        for pattern, reader in (
            (_ROUND, _persona_call),
            (_DEBATE, _synthesis_call),
            (_CHECK, _check_call),
            (_DESIGN, _design_call),
        )
        if (found := pattern.search(masked)) is not None
    ]
    if not kinds:
        return {}
    _, reader, found = min(kinds, key=lambda kind: kind[0])
    if reader is _persona_call:
        # A persona's message holds every round it took part in: the last title is asked.
        *_, found = _ROUND.finditer(masked)
    task = reader(masked, found)
    if _REPAIR.search(text, found.end()):
        task["repair"] = True
    return task
