"""round-log.md: the append-only timeline of a debate."""

from __future__ import annotations

import re

from dreamcontext_council.rules.debate import bounded_round
from dreamcontext_council.rules.markdown import headings

# The time in an entry's heading: after an em dash, a `YYYY-MM-DD` day (the Node tool's
# form) or a UTC time `YYYY-MM-DDTHH:MM:SS[.fff]Z` (a report submission's).
_LOGGED_TIME = re.compile(r" — (\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)Z?)?(?!\S)")
_STARTED = re.compile(r"round (\d+) started", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
SUMMARY_LINE_LIMIT = 240


def new_log(debate_id: str) -> str:
    """The first lines of a fresh round log."""
    return f"# Round log — {debate_id}\n"


def append_entry(log: str, heading: str, bullets: list[str]) -> str:
    """The log with one `## heading` entry and its bullets added at the end."""
    entry = "\n".join([f"## {heading}", *(f"- {b}" for b in bullets)])
    return f"{log.rstrip()}\n\n{entry}\n"


def logged_time(heading: str) -> tuple[str, str]:
    """When the entry with this heading happened, as (day, time of day): the last time
    the heading names, "" for a part it does not write (a day alone, or no time at all)."""
    found = _LOGGED_TIME.findall(heading)
    return (found[-1][0], found[-1][1]) if found else ("", "")


def has_heading(log: str, heading: str) -> bool:
    """Whether an entry with exactly this heading is already in the log."""
    return any(line == f"## {heading}" for line in log.split("\n"))


def round_participants(log: str, number: int) -> list[str] | None:
    """The personas listed when round `number` started (the latest such entry), if logged."""
    lines = log.split("\n")
    found: list[str] | None = None
    for mark in headings(lines):
        match = _STARTED.match(mark.title)
        if mark.level == 2 and match and bounded_round(match.group(1)) == number:
            for line in lines[mark.line + 1 : mark.line + 6]:
                if line.lower().startswith("- personas:"):
                    found = [p.strip() for p in line.split(":", 1)[1].split(",") if p.strip()]
                    break
    return found


_PERSONA_FAILED = re.compile(r"Persona failed — (\S+) in round (\d+)\b")


def persona_failures(log: str) -> dict[tuple[str, int], str]:
    """(persona, round) → why its answer was missing, from `## Persona failed` entries (latest wins)."""
    lines = log.split("\n")
    found: dict[tuple[str, int], str] = {}
    for mark in headings(lines):
        match = _PERSONA_FAILED.match(mark.title)
        if mark.level != 2 or not match:
            continue
        following = lines[mark.line + 1] if mark.line + 1 < len(lines) else ""
        reason = following[2:].strip() if following.startswith("- ") else ""
        found[(match.group(1), int(match.group(2)))] = reason
    return {key: reason for key, reason in found.items() if reason}


def first_sentence(text: str, limit: int = SUMMARY_LINE_LIMIT) -> str:
    """The first sentence of `text` on one line, cut at a word to at most `limit` characters."""
    flat = " ".join(text.split())
    end = _SENTENCE_END.search(flat)
    sentence = flat[: end.end()] if end else flat
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0] if " " in sentence[: limit - 1] else ""
    return (cut or sentence[: limit - 1]) + "…"


def submission_entry(
    slug: str, number: int, summary: str, at: str, *, replaced: bool = False
) -> tuple[str, list[str]]:
    """The log entry for one report submission: who, round and UTC time in the heading, the
    first sentence of its executive summary as the one bullet.

    The heading does not start with "Round", so readers that look for `## Round N started`
    and `## Round N complete` entries (ours and the Node tool's) pass over it.
    """
    event = "Report replaced" if replaced else "Report submitted"
    sentence = first_sentence(summary) or "(no executive summary)"
    return f"{event} — {slug} in round {number} — {at}", [f"Executive summary: {sentence}"]
