"""report.md: round entries, newest on top, each with the required `###` sections."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.debate import MAX_ROUNDS, bounded_round, parse_round
from dreamcontext_council.rules.markdown import (
    ENTRY_HEADING,
    fenced,
    headings,
    normalize_title,
    sections,
)

if TYPE_CHECKING:
    # Checking and sealing an entry (rules/entry_markup.py) is imported by the functions
    # here that write one: reading report.md needs only ENTRY_HEADING.
    from dreamcontext_council.rules.entry_markup import ParsedHeading

REQUIRED_SECTIONS = (
    "Executive Summary",
    "Position",
    "Reasoning",
    "Reactions to peers",
    "Open questions",
)
OPTIONAL_SECTIONS = ("Cross-examination",)
_ROUND_TITLE = re.compile(r"round\s+(\d+)\b(?:\s*[—–-]+\s*(.*))?", re.IGNORECASE)
_KNOWN = {normalize_title(t): t for t in (*REQUIRED_SECTIONS, *OPTIONAL_SECTIONS)}


class RoundEntry(NamedTuple):
    """One persona's answer for one round."""

    round: int
    date: str
    body: str

    def section(self, title: str) -> str | None:
        """The text of a `###` section, matched loosely; None when absent."""
        wanted = normalize_title(title)
        for found in sections(self.body, 3):
            if normalize_title(found.title) == wanted:
                return found.body
        return None

    @property
    def executive_summary(self) -> str | None:
        return self.section("Executive Summary")

    def render(self) -> str:
        return f"## Round {self.round} — {self.date}\n\n{self.body.strip(chr(10))}\n"


def parse_report(text: str, where: str = "report.md") -> list[RoundEntry]:
    """Round entries in file order (newest first); headings inside code are content.

    A line written exactly as this tool writes entry headings, after a blank line, starts an
    entry even inside an open fence: a fence left unclosed by a hand edit ends there.
    """
    _, body = frontmatter_io.parse(text, where)
    lines = body.split("\n")
    marks = [
        (h.line, _ROUND_TITLE.fullmatch(h.title))
        for h in headings(lines, boundary=ENTRY_HEADING)
        if h.level == 2 and _ROUND_TITLE.fullmatch(h.title)
    ]
    entries = []
    for i, (line, match) in enumerate(marks):
        assert match is not None
        number = parse_round(match.group(1), where, "the entry heading's round")
        end = marks[i + 1][0] if i + 1 < len(marks) else len(lines)
        entry_body = "\n".join(lines[line + 1 : end]).strip("\n")
        entries.append(RoundEntry(number, (match.group(2) or "").strip(), entry_body))
    return entries


def render_report(persona: str, entries: list[RoundEntry]) -> str:
    """report.md text: frontmatter, then entries newest round first; a persona with no
    entry yet has the frontmatter alone (`rounds_completed: 0`), as the Node tool seats one."""
    ordered = sorted(entries, key=lambda e: -e.round)
    meta = {"persona": persona, "rounds_completed": len({e.round for e in ordered})}
    if not ordered:
        return f"---\n{frontmatter_io.dump_meta(meta)}---\n"
    return frontmatter_io.render(meta, "\n".join(e.render() for e in ordered))


def with_entry(entries: list[RoundEntry], entry: RoundEntry) -> list[RoundEntry]:
    """The entries with `entry` added; a later entry for the same round replaces the earlier."""
    return [entry, *(e for e in entries if e.round != entry.round)]


def clean_entry_body(body: str, *, demote: bool = False) -> tuple[str, int | None]:
    """Normalise a submitted entry: drop a leading `## Round N` heading, make known sections `###`.

    Headings are found by the markdown parser (setext and indented ones too). Any other
    level-1 or level-2 heading is a UsageError, or with `demote` becomes a `###` heading (in
    a block quote or list, a setext underline becomes text). Returns the body and the round
    number its heading named, if any.
    """
    if body in _STORED_FORM:
        return body, None
    from dreamcontext_council.rules.entry_markup import (
        is_scanned_form,
        normalize_newlines,
        parsed_headings,
        rewrite_heading,
    )

    text = normalize_newlines(body).strip("\n")
    found = parsed_headings(text)
    named: int | None = None
    first = found[0] if found else None
    if first and first.start == 0 and first.level <= 2 and not first.nested:
        match = _ROUND_TITLE.fullmatch(first.title)
        if match:
            named = _named_round(match.group(1))
            text = "\n".join(text.split("\n")[first.end :]).strip("\n")
            found = parsed_headings(text)
    if not demote:
        for heading in found:
            if heading.level <= 2 and (heading.nested or not _known(heading)):
                raise UsageError(_heading_refusal(heading))
    lines = text.split("\n")
    dropped: list[range] = []  # a setext heading's underline, once it is one `#` line
    for heading in found:
        if heading.level <= 2 or (_known(heading) and heading.level != 3):
            dropped.append(rewrite_heading(lines, heading, 3))
        elif not heading.nested and not is_scanned_form(lines, heading):
            dropped.append(rewrite_heading(lines, heading, heading.level))
    gone = {number for lines_gone in dropped for number in lines_gone}
    if gone:
        lines = [line for number, line in enumerate(lines) if number not in gone]
    cleaned = "\n".join(lines).strip("\n")
    # Unchanged text parses as it did (the usual answer: its ### sections as written).
    after = found if cleaned == text else parsed_headings(cleaned)
    left = next((h for h in after if h.level <= 2), None)
    if left is not None:
        raise UsageError(_heading_refusal(left))
    if cleaned == text and named is None:
        _remember_stored_form(text)
    return cleaned, named


# Bodies found already in stored form (nothing to drop or rewrite, no level-1 or level-2
# heading, so `demote` cannot matter): an answer is cleaned when it is parsed, again when
# it is recorded and again when its entry is appended; the markdown parse runs once.
_STORED_FORM: set[str] = set()
_STORED_FORM_KEPT = 1024


def _remember_stored_form(text: str) -> None:
    if len(_STORED_FORM) >= _STORED_FORM_KEPT:
        _STORED_FORM.clear()
    _STORED_FORM.add(text)


def as_stored(body: str) -> str:
    """An entry read from a file, in the form this tool stores: `###` at most, fences closed.

    For text made from a hand-edited report.md, so its entry cannot reshape what follows it.
    """
    try:
        cleaned, _ = clean_entry_body(body, demote=True)
    except UsageError:
        return fenced(body)
    from dreamcontext_council.rules.entry_markup import seal_entry_body

    return seal_entry_body(cleaned)[0]


def _known(heading: ParsedHeading) -> bool:
    return normalize_title(heading.title) in _KNOWN


def _named_round(digits: str) -> int:
    number = bounded_round(digits)
    if number is None:
        shown = digits if len(digits) <= 12 else digits[:12] + "…"
        raise UsageError(
            f"The entry is headed Round {shown}; rounds run from 1 to {MAX_ROUNDS}, fix the heading."
        )
    return number


def _heading_refusal(heading: ParsedHeading) -> str:
    how = " (a line of === or --- under text makes one; put a blank line before it)"
    return (
        f"The report has a level-{heading.level} heading '{heading.title}'"
        + (how if heading.setext else "")
        + "; round entries use ### sections (Executive Summary, Position, Reasoning, "
        "Reactions to peers, Open questions)."
    )


def missing_sections(body: str) -> list[str]:
    """Required sections that are absent or empty.

    A section written twice is there when either has text: a demoted heading and an empty
    section after it (a forged entry in a model's answer) cannot hide the one above."""
    present = {normalize_title(s.title) for s in sections(body, 3) if s.body.strip()}
    return [t for t in REQUIRED_SECTIONS if normalize_title(t) not in present]


def check_entry_body(body: str) -> None:
    """Raise UsageError naming every missing section; FormatError never (body is caller input)."""
    if not body.strip():
        raise UsageError("The report body is empty; pass --body or pipe the round entry on stdin.")
    missing = missing_sections(body)
    if missing:
        raise UsageError(
            "The report is missing required section(s): "
            + ", ".join(f"### {m}" for m in missing)
            + ". Add them and run the command again."
        )
