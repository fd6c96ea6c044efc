"""round-log.md entries that record what a command wrote into another file.

`question` writes a directive into one persona's context-and-persona.md and `complete`
closes a debate on the facts it had; a hand-resolved merge that keeps one side of those
files can drop the directive, or bring in a fact the final report never weighed. The log
(merged as both sides' entries) keeps what was written, so `doctor` can check the files
against it:

- `## Directive queued — <slug> in round N — <UTC second>` then `- Directive: <text>`;
- `## Debate complete — <day>` gains `- Facts weighed: N` and, when there are any,
  `- Fact digests: <d1> <d2> …` (a short hash of each fact bullet).

The headings do not start with "Round", so readers of `## Round N started` pass over them.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from dreamcontext_council.rules.debate import bounded_round
from dreamcontext_council.rules.markdown import headings

_STARTED = re.compile(r"Round (\d+) started\b", re.IGNORECASE)
_QUEUED = re.compile(r"Directive queued — (\S+) in round (\d+)\b")
_DIRECTIVE = "- Directive: "
_COMPLETE = re.compile(r"Debate complete\b")
_WEIGHED = "- Facts weighed: "
_DIGESTS = "- Fact digests: "


class QueuedDirective(NamedTuple):
    """A directive the log says `question` queued."""

    slug: str
    round: int
    text: str


def directive_entry(slug: str, number: int, directive: str, at: str) -> tuple[str, list[str]]:
    """The log entry for a directive queued for `slug`'s round `number` at UTC time `at`."""
    return f"Directive queued — {slug} in round {number} — {at}", [f"Directive: {directive}"]


def queued_directives(log: str) -> list[QueuedDirective]:
    """Every directive the log records as queued, in log order."""
    lines = log.split("\n")
    found = []
    for mark in headings(lines):
        match = _QUEUED.match(mark.title)
        number = bounded_round(match.group(2)) if match else None
        if mark.level != 2 or match is None or number is None:
            continue
        following = lines[mark.line + 1] if mark.line + 1 < len(lines) else ""
        if following.startswith(_DIRECTIVE):
            found.append(QueuedDirective(match.group(1), number, following[len(_DIRECTIVE) :]))
    return found


def fact_digest(fact: str) -> str:
    """A short, stable name of one fact bullet (its text as `Debate.facts()` gives it)."""
    return hashlib.sha256(" ".join(fact.split()).encode("utf-8")).hexdigest()[:12]


def weighed_bullets(facts: list[str]) -> list[str]:
    """The bullets (without `- `) the completion entry gains for the facts it closed on."""
    bullets = [f"Facts weighed: {len(facts)}"]
    if facts:
        bullets.append("Fact digests: " + " ".join(fact_digest(f) for f in facts))
    return bullets


def weighed_digests(log: str) -> set[str] | None:
    """The digests of the facts the last completion closed on; None when no completion
    entry records them (a debate completed before they were logged, or not complete)."""
    lines = log.split("\n")
    found: set[str] | None = None
    for mark in headings(lines):
        if mark.level != 2 or not _COMPLETE.match(mark.title):
            continue
        digests: set[str] | None = None
        for line in lines[mark.line + 1 : mark.line + 6]:
            if line.startswith("#"):
                break
            if line.startswith(_WEIGHED):
                digests = set()
            elif line.startswith(_DIGESTS) and digests is not None:
                digests = set(line[len(_DIGESTS) :].split())
        if digests is not None:
            found = digests
    return found


def started_rounds(log: str) -> list[int]:
    """The rounds the log records as started (`## Round N started`), each once, in order."""
    found = (_STARTED.match(mark.title) for mark in headings(log.split("\n")) if mark.level == 2)
    rounds = (bounded_round(m.group(1)) for m in found if m)
    return sorted({n for n in rounds if n is not None})
