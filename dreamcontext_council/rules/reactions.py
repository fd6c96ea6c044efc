"""Reading `### Reactions to peers`: what a persona said to one peer, and how it answered.

A rebuttal takes each critique aimed at it on a line of its own,
`**critic**: accepted — <reason>`, `**critic**: partly accepted — <reason>` or
`**critic**: rejected — <reason>`; from round 4 a critic takes its target's answer the same
way, `**target**: pressed — <point>` or `**target**: dropped — <reason>`. A reaction that
names the peer without one of these words still counts as taking it up: the word is then
unknown. Pure: strings in, dataclasses out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ACCEPTED = "accepted"
PARTLY_ACCEPTED = "partly accepted"
REJECTED = "rejected"
PRESSED = "pressed"
DROPPED = "dropped"
ANSWERS = (ACCEPTED, PARTLY_ACCEPTED, REJECTED)
"""How a target answers a critique."""
REPLIES = (PRESSED, DROPPED)
"""How a critic takes its target's answer."""
REACTION_CHARS = 2_000
"""The most of one reaction shown to the peer it answers; past it, the text is cut."""

_LEAD = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])?[ \t]*\*\*([^*\n]+?)\*\*")
_WORD = re.compile(
    r"^[\s:：*_—–-]*(?:(partly|partially)\s+)?(accepted|rejected|pressed|dropped)\b", re.I
)


@dataclass(frozen=True)
class Reaction:
    """What one entry's `### Reactions to peers` says to one peer."""

    peer: str
    word: str | None
    """accepted, partly accepted, rejected, pressed or dropped; None when it says none."""
    text: str
    """The lines that name the peer, as written (cut to REACTION_CHARS)."""


def names(reactions: str, slug: str) -> bool:
    """Whether the reactions name `slug` anywhere (a slug inside a longer one does not count)."""
    return _mention(slug).search(reactions) is not None


def _mention(slug: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(slug)}(?![\w-])")


def _blocks(reactions: str) -> list[str]:
    """The reactions in blocks: a blank line or a line that opens with a bold name starts one."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in reactions.split("\n"):
        if not line.strip():
            if current:
                blocks.append(current)
            current = []
            continue
        if _LEAD.match(line) and current:
            blocks.append(current)
            current = []
        current.append(line.rstrip())
    if current:
        blocks.append(current)
    return ["\n".join(block) for block in blocks]


def _word(after_name: str) -> str | None:
    match = _WORD.match(after_name)
    if match is None:
        return None
    word = match.group(2).lower()
    if match.group(1) and word == ACCEPTED:
        return PARTLY_ACCEPTED
    return word


def reaction_to(reactions: str | None, slug: str) -> Reaction | None:
    """What `reactions` says to `slug`, or None when they do not name it.

    The text is every block that names the peer, the one that opens with `**slug**` first;
    the word is read right after that bold name."""
    if not reactions or not names(reactions, slug):
        return None
    mention = _mention(slug)
    led: list[str] = []
    others: list[str] = []
    word: str | None = None
    for block in _blocks(reactions):
        lead = _LEAD.match(block)
        if lead and lead.group(1).strip().strip(":").strip() == slug:
            if not led:
                word = _word(block[lead.end() :])
            led.append(block)
        elif mention.search(block):
            others.append(block)
    text = "\n\n".join([*led, *others]).strip()
    if len(text) > REACTION_CHARS:
        text = text[: REACTION_CHARS - 1].rstrip() + "…"
    return Reaction(slug, word, text)
