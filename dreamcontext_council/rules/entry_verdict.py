"""What a round entry itself says of its verdict, for `doctor` to restore a lost verdict.

A persona's verdict lives in verdicts.json; its round entry in report.md says the same in
words. Its `### Position` names the option it backs ("Option A: Migrate now, with
conviction 70."), and its Executive Summary is the headline. A hand-resolved merge that
kept one side's verdicts.json loses the other side's verdicts, not their entries; what the
entries state without doubt is read back here, and nothing is guessed: two options named,
or no conviction given, is no answer.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from dreamcontext_council.rules import limits
from dreamcontext_council.rules.markdown import normalize_title, sections
from dreamcontext_council.rules.report import OPTIONAL_SECTIONS, REQUIRED_SECTIONS, RoundEntry
from dreamcontext_council.rules.roundlog import first_sentence

_OPTION = re.compile(r"\b(?:option|stance)\s*:?\s*\**([A-Za-z0-9][A-Za-z0-9_-]*)\b", re.IGNORECASE)
_CONVICTION = re.compile(
    r"\bconviction\s*(?:of|is|at|:|=)?\s*\**(\d{1,3})\b(?!\s*/\s*(?!100)\d)", re.IGNORECASE
)
_KNOWN_SECTIONS = {normalize_title(t) for t in (*REQUIRED_SECTIONS, *OPTIONAL_SECTIONS)}


class EntryVerdict(NamedTuple):
    """The verdict an entry states; a field is None where the entry does not say it once."""

    stance: str | None
    conviction: int | None
    headline: str

    @property
    def whole(self) -> bool:
        return self.stance is not None and self.conviction is not None and bool(self.headline)


def entry_verdict(entry: RoundEntry, option_keys: list[str]) -> EntryVerdict:
    """The option key, conviction and headline `entry` states in its Position and Summary.

    The stance is the one option key the Position names ("Option A", "stance: B"); the
    conviction the one number from 0 to 100 given as "conviction N". Anything else: None.
    """
    position = entry.section("Position") or ""
    keys = {key.casefold(): key for key in option_keys}
    named = {keys[m.casefold()] for m in _OPTION.findall(position) if m.casefold() in keys}
    levels = {int(m) for m in _CONVICTION.findall(position) if int(m) <= 100}
    summary = entry.executive_summary or ""
    headline = first_sentence(summary, limits.MAX_HEADLINE_CHARS)
    return EntryVerdict(
        next(iter(named)) if len(named) == 1 else None,
        next(iter(levels)) if len(levels) == 1 else None,
        headline,
    )


def doubled_sections(entry: RoundEntry) -> list[str]:
    """The answer's sections an entry holds more than once: two versions run together."""
    seen: dict[str, int] = {}
    titles: dict[str, str] = {}
    for found in sections(entry.body, 3):
        key = normalize_title(found.title)
        if key in _KNOWN_SECTIONS:
            seen[key] = seen.get(key, 0) + 1
            titles.setdefault(key, found.title.strip())
    return [titles[key] for key, count in seen.items() if count > 1]
