"""A round entry's markdown, checked and sealed so it can sit among others in report.md.

Two readers see an entry: the fast line scanner of rules/markdown.py (report.md's structure,
the sections) and CommonMark (the pages). The entry is stored so both agree: no level-1 or
level-2 heading as the markdown parser sees it (setext and indented ones included), every
fenced code block closed by the end of the entry, and no line that reads as an entry heading
of report.md, even inside code, since report.md readers treat that line as a hard boundary.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from dreamcontext_council.rules.markdown import ENTRY_HEADING, open_fence

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

# The patterns below only check and write a submitted entry: each is compiled where it is
# used (re keeps it), so reading report.md compiles none of them.
_ATX_MARK = r"#{1,2}(?=[ \t]|$)"
_SETEXT_MARK = r"[=-]"


class ParsedHeading(NamedTuple):
    """A heading as CommonMark sees it, with the lines it spans."""

    start: int  # index of its first line
    end: int  # one past its last line (a setext heading spans its text and its underline)
    level: int
    title: str
    nested: bool  # inside a block quote or a list item
    setext: bool


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # only submissions pay for the import

    # The block rules views/safe_markdown.py renders with: CommonMark, tables, no raw HTML.
    # Headings need the block structure only: an inline token's `content` is its raw text,
    # so the inline pass (emphasis, links) is skipped; it was half of the parse.
    return MarkdownIt("commonmark", {"html": False}).enable("table").disable("inline")


def normalize_newlines(text: str) -> str:
    """CR LF and lone CR as LF: the parser counts a lone CR as a line break, str.split does not."""
    return re.sub(r"\r\n?", "\n", text)


def parsed_headings(text: str) -> list[ParsedHeading]:
    """Every heading of `text` as the markdown parser sees it, in order."""
    plain = plain_headings(text)
    if plain is not None:
        return plain
    return _parsed_by_markdown_it(text)


# -- the plain case, without the parser ---------------------------------------------------
#
# An answer is mostly `### Section` lines, paragraphs, bullets and a code block fenced at
# column 0. In such text CommonMark's headings are exactly the `#` lines at column 0 outside
# the fences: an ATX heading interrupts a paragraph, a list item or a table, and nothing
# else can hold a line that starts at column 0. `plain_headings` reads only text where that
# holds and returns None for anything that could make it wrong (a possible setext underline,
# a `#` after indentation or a list or quote marker, a fence opened off column 0, a block
# quote, a link reference definition, a tab, a CR, a NUL); the parser reads those. A property
# test compares the two.

_PLAIN_ATX = r"(#{1,6})(?: (.*))?"
_FENCE_AT_0 = r"(`{3,}|~{3,})(.*)"
_FENCE_CLOSE = r" {0,3}(`{3,}|~{3,}) *"
_SETEXT_LIKE = r" {0,3}(?:=+|-+) *"
_HASH_AFTER_MARKERS = r"[ >*+\-0-9.)]*#"
_UNSURE_START = r" {0,3}[>\[]| {1,3}(?:`{3,}|~{3,})"


def plain_headings(text: str) -> list[ParsedHeading] | None:
    """The headings of `text` when it is in the plain case above, else None."""
    if "\t" in text or "\x00" in text or "\r" in text:
        return None
    plain_atx, fence_at_0, fence_close = (
        re.compile(_PLAIN_ATX),
        re.compile(_FENCE_AT_0),
        re.compile(_FENCE_CLOSE),
    )
    setext_like, hash_after_markers, unsure_start = (
        re.compile(_SETEXT_LIKE),
        re.compile(_HASH_AFTER_MARKERS),
        re.compile(_UNSURE_START),
    )
    found: list[ParsedHeading] = []
    fence: str | None = None
    for number, line in enumerate(text.split("\n")):
        if fence is not None:
            closing = fence_close.fullmatch(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
                fence = None
            continue
        if line.startswith("#"):
            atx = plain_atx.fullmatch(line)
            if atx is not None:
                title = _atx_title(atx.group(2) or "")
                found.append(
                    ParsedHeading(number, number + 1, len(atx.group(1)), title, False, False)
                )
            elif hash_after_markers.match(line[1:]) or line.startswith("#######"):
                return (
                    None  # `#x`, `#\t`, seven marks: text, but leave the edge cases to the parser
                )
            continue
        opened = fence_at_0.fullmatch(line)
        if opened is not None:
            if opened.group(1)[0] == "`" and "`" in opened.group(2):
                return None  # not a fence: inline code (the parser knows)
            fence = opened.group(1)
            continue
        if (
            setext_like.fullmatch(line)
            or hash_after_markers.match(line)
            or unsure_start.match(line)
        ):
            return None
    return found


def _atx_title(rest: str) -> str:
    """An ATX heading's text: without its closing run of `#` (after a space) and spaces."""
    rest = rest.rstrip(" ")
    trimmed = rest.rstrip("#")
    if trimmed != rest and (trimmed == "" or trimmed.endswith(" ")):
        rest = trimmed
    return " ".join(rest.split())


def _parsed_by_markdown_it(text: str) -> list[ParsedHeading]:
    tokens = _parser().parse(text)
    found = []
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        title = " ".join(tokens[i + 1].content.split())
        start, end = token.map
        level = int(token.tag[1])
        found.append(
            ParsedHeading(start, end, level, title, token.level > 0, token.markup in ("=", "-"))
        )
    return found


def is_scanned_form(lines: list[str], heading: ParsedHeading) -> bool:
    """Whether the fast scanner reads this heading as it is written: one `#` line at column 0."""
    return heading.end - heading.start == 1 and lines[heading.start].startswith("#")


def rewrite_heading(lines: list[str], heading: ParsedHeading, level: int) -> range:
    """Write `heading` at `level`: one `#` line at column 0, or in place when nested.

    Returns the lines to drop once every heading is written (a setext heading's underline):
    the list keeps its length meanwhile, so each heading is written in constant time, never
    by shifting the lines below it."""
    if not heading.nested:
        lines[heading.start] = f"{'#' * level} {heading.title}".rstrip()
        return range(heading.start + 1, heading.end)
    if heading.setext:
        # A block quote or list item keeps its prefix: the underline becomes literal text.
        last = heading.end - 1
        lines[last] = re.sub(_SETEXT_MARK, lambda m: "\\" + m.group(0), lines[last], count=1)
    else:
        lines[heading.start] = re.sub(_ATX_MARK, "#" * level, lines[heading.start], count=1)
    return range(0)


def seal_entry_body(body: str) -> tuple[str, list[str]]:
    """A cleaned entry (no level-1 or level-2 heading left) made safe to store among others:
    a fence left open at the end is closed, and a line inside code that reads as an entry
    heading is indented by one space. Returns the body and one note per change."""
    lines = body.split("\n")
    notes = []
    heading = re.compile(ENTRY_HEADING)
    quoted = [i for i, line in enumerate(lines) if heading.match(line)]
    for i in quoted:
        lines[i] = " " + lines[i]
    if quoted:
        notes.append(
            f"{len(quoted)} line(s) inside code that read as an entry heading (## Round N) "
            "were indented by one space"
        )
    fence = open_fence(lines)
    if fence is not None:
        lines.append(fence)
        notes.append(f"an unclosed {fence} code fence was closed at the end of the entry")
    return "\n".join(lines), notes
