"""Pure markdown structure: headings outside code fences, sections, heading matching."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

# A backtick fence's info string may not hold a backtick (CommonMark): "```a`" is inline code.
_FENCE = re.compile(r"^ {0,3}(`{3,}(?!.*`)|~{3,})")
# The title is what follows the marks, less its closing run of spaces and `#` (str.rstrip):
# a lazy title before `[ \t#]*$` backtracked over that run at every character, quadratic
# in the length of one long line.
_HEADING = re.compile(r"(#{1,6})[ \t]+(.*)")
# The entry heading exactly as report.md is written (`## Round 2 — 2026-11-30`); in report.md
# such a line after a blank line starts an entry even when a fence above was left open (the
# `boundary` of `headings`), and rules/entry_markup.py keeps such lines out of an entry.
# A pattern, compiled by the first line it is matched against (re keeps it): only a fence
# left open needs it.
ENTRY_HEADING = r"## Round ([0-9]+)(?: — (?:[0-9]{4}-[0-9]{2}-[0-9]{2})?)?[ \t]*$"


class Heading(NamedTuple):
    """A heading line found outside fenced code."""

    line: int
    level: int
    title: str


def normalize_title(title: str) -> str:
    """Compare headings case- and punctuation-insensitively: `Executive summary:` == `EXECUTIVE SUMMARY`."""
    return " ".join(re.sub(r"[^\w]+", " ", title.casefold()).split())


def headings(lines: list[str], boundary: str | None = None) -> list[Heading]:
    """Every ATX heading that is not inside a fenced code block.

    A line matching the pattern `boundary` at the start of the text or after a blank line ends any open
    fence first: report.md uses it so one unclosed fence cannot swallow the entries below.
    """
    return list(iter_headings(lines, boundary))


def iter_headings(lines: list[str], boundary: str | None = None) -> Iterator[Heading]:
    """`headings`, one at a time: a reader that needs only the first few stops there."""
    fence: str | None = None
    for number, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence is not None:
            if boundary is None or not _breaks_fence(lines, number, boundary):
                if _closes(fence, line, opened):
                    fence = None
                continue
            fence = None
        if opened:
            fence = opened.group(1)
            continue
        match = _HEADING.fullmatch(line)
        if match:
            title = match.group(2).rstrip(" \t#").strip()
            yield Heading(number, len(match.group(1)), title)


def _closes(fence: str, line: str, opened: re.Match[str] | None) -> bool:
    """Whether `line` closes the code block `fence` opened."""
    return bool(
        opened
        and opened.group(1)[0] == fence[0]
        and len(opened.group(1)) >= len(fence)
        and not line.strip().lstrip(fence[0])
    )


def _breaks_fence(lines: list[str], number: int, boundary: str) -> bool:
    return (number == 0 or not lines[number - 1].strip()) and bool(
        re.match(boundary, lines[number])
    )


def open_fence(lines: list[str]) -> str | None:
    """The opening run of the fenced code block still open after the last line, if any."""
    fence: str | None = None
    for line in lines:
        opened = _FENCE.match(line)
        if fence is not None:
            if _closes(fence, line, opened):
                fence = None
        elif opened:
            fence = opened.group(1)
    return fence


def fenced(text: str, info: str = "text") -> str:
    """A code block whose fence is longer than any backtick run inside (model text may have one)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}"


class Section(NamedTuple):
    """A heading and the lines under it up to the next heading of the same or higher level."""

    title: str
    level: int
    start: int  # index of the heading line
    end: int  # index one past the last line of the section
    body: str  # text under the heading, stripped of surrounding blank lines


class TooManySections(ValueError):
    """A text has more sections at a level than its reader reads (`sections(most=...)`)."""

    def __init__(self, level: int, most: int, read: tuple[Section, ...]) -> None:
        super().__init__(f"more than {most:,} level-{level} sections")
        self.level = level
        self.most = most
        self.read = read  # the first `most` sections, read before it stopped


def sections(text: str, level: int, most: int | None = None) -> list[Section]:
    """Split `text` into the sections at `level`; nested deeper headings stay in the body.

    With `most`, the text is read only as far as the heading that would start section
    `most + 1`, and TooManySections is raised there: the caller says so."""
    return list(_sections(text, level, most))


# An answer or a context body is split again by each rule that reads it (the contract, the
# entry check, the report, the panels): the splits of the last 64 texts are kept.
@lru_cache(maxsize=64)
def _sections(text: str, level: int, most: int | None) -> tuple[Section, ...]:
    lines = text.split("\n")
    result: list[Section] = []
    # One pass: a section at `level` ends where the next heading at `level` or above starts.
    opened: Heading | None = None
    for mark in iter_headings(lines):
        if mark.level > level:
            continue
        if opened is not None:
            result.append(_section(lines, opened, mark.line))
            opened = None
        if mark.level == level:
            if most is not None and len(result) >= most:
                raise TooManySections(level, most, tuple(result))
            opened = mark
    if opened is not None:
        result.append(_section(lines, opened, len(lines)))
    return tuple(result)


def _section(lines: list[str], mark: Heading, end: int) -> Section:
    body = "\n".join(lines[mark.line + 1 : end]).strip("\n")
    return Section(mark.title, mark.level, mark.line, end, body)


def first_section(text: str, level: int, title: str, most: int | None = None) -> Section | None:
    """The first section at `level` whose title matches `title` loosely, as `sections` would
    find it (among the first `most` with `most`), reading the text only to that section's
    end: a report's Verdict comes first, and the rest of the report is not parsed for it."""
    wanted = normalize_title(title)
    lines = text.split("\n")
    opened: Heading | None = None
    seen = 0
    for mark in iter_headings(lines):
        if mark.level > level:
            continue
        if opened is not None:
            return _section(lines, opened, mark.line)
        if mark.level == level:
            seen += 1
            if most is not None and seen > most:
                return None
            if normalize_title(mark.title) == wanted:
                opened = mark
    return _section(lines, opened, len(lines)) if opened is not None else None


def find_section(text: str, level: int, title: str) -> Section | None:
    """The first section at `level` whose title matches `title` loosely."""
    wanted = normalize_title(title)
    return next((s for s in sections(text, level) if normalize_title(s.title) == wanted), None)
