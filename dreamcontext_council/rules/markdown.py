"""Pure markdown structure: headings outside code fences, sections, heading matching."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

# A backtick fence's info string may not hold a backtick (CommonMark): "```a`" is inline code.
_FENCE = re.compile(r"^ {0,3}(`{3,}(?!.*`)|~{3,})")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")


class Heading(NamedTuple):
    """A heading line found outside fenced code."""

    line: int
    level: int
    title: str


def normalize_title(title: str) -> str:
    """Compare headings case- and punctuation-insensitively: `Executive summary:` == `EXECUTIVE SUMMARY`."""
    return " ".join(re.sub(r"[^\w]+", " ", title.casefold()).split())


def headings(lines: list[str], boundary: re.Pattern[str] | None = None) -> list[Heading]:
    """Every ATX heading that is not inside a fenced code block.

    A line matching `boundary` at the start of the text or after a blank line ends any open
    fence first: report.md uses it so one unclosed fence cannot swallow the entries below.
    """
    found: list[Heading] = []
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
        match = _HEADING.match(line)
        if match:
            found.append(Heading(number, len(match.group(1)), match.group(2).strip()))
    return found


def _closes(fence: str, line: str, opened: re.Match[str] | None) -> bool:
    """Whether `line` closes the code block `fence` opened."""
    return bool(
        opened
        and opened.group(1)[0] == fence[0]
        and len(opened.group(1)) >= len(fence)
        and not line.strip().lstrip(fence[0])
    )


def _breaks_fence(lines: list[str], number: int, boundary: re.Pattern[str]) -> bool:
    return (number == 0 or not lines[number - 1].strip()) and bool(boundary.match(lines[number]))


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


def sections(text: str, level: int) -> list[Section]:
    """Split `text` into the sections at `level`; nested deeper headings stay in the body."""
    return list(_sections(text, level))


# An answer or a context body is split again by each rule that reads it (the contract, the
# entry check, the report, the panels): the splits of the last 64 texts are kept.
@lru_cache(maxsize=64)
def _sections(text: str, level: int) -> tuple[Section, ...]:
    lines = text.split("\n")
    marks = [h for h in headings(lines) if h.level <= level]
    result: list[Section] = []
    for i, mark in enumerate(marks):
        if mark.level != level:
            continue
        end = next((m.line for m in marks[i + 1 :]), len(lines))
        body = "\n".join(lines[mark.line + 1 : end]).strip("\n")
        result.append(Section(mark.title, level, mark.line, end, body))
    return tuple(result)


def find_section(text: str, level: int, title: str) -> Section | None:
    """The first section at `level` whose title matches `title` loosely."""
    wanted = normalize_title(title)
    return next((s for s in sections(text, level) if normalize_title(s.title) == wanted), None)
