"""report.md: round entries, newest on top, each with the required `###` sections."""

from __future__ import annotations

import re
from typing import NamedTuple

from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.markdown import headings, normalize_title, sections

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
    """Round entries in file order (newest first); headings inside code are content."""
    _, body = frontmatter_io.parse(text, where)
    lines = body.split("\n")
    marks = [
        (h.line, _ROUND_TITLE.fullmatch(h.title))
        for h in headings(lines)
        if h.level == 2 and _ROUND_TITLE.fullmatch(h.title)
    ]
    entries = []
    for i, (line, match) in enumerate(marks):
        assert match is not None
        end = marks[i + 1][0] if i + 1 < len(marks) else len(lines)
        entry_body = "\n".join(lines[line + 1 : end]).strip("\n")
        entries.append(RoundEntry(int(match.group(1)), (match.group(2) or "").strip(), entry_body))
    return entries


def render_report(persona: str, entries: list[RoundEntry]) -> str:
    """report.md text: frontmatter, then entries newest round first."""
    ordered = sorted(entries, key=lambda e: -e.round)
    meta = {"persona": persona, "rounds_completed": len({e.round for e in ordered})}
    return frontmatter_io.render(meta, "\n".join(e.render() for e in ordered))


def with_entry(entries: list[RoundEntry], entry: RoundEntry) -> list[RoundEntry]:
    """The entries with `entry` added; a later entry for the same round replaces the earlier."""
    return [entry, *(e for e in entries if e.round != entry.round)]


def clean_entry_body(body: str) -> tuple[str, int | None]:
    """Normalise a submitted entry: drop a leading `## Round N` heading, make known sections `###`.

    Returns the body and the round number its heading named, if any.
    """
    lines = body.replace("\r\n", "\n").strip("\n").split("\n")
    named: int | None = None
    marks = headings(lines)
    if marks and marks[0].line == 0 and marks[0].level <= 2:
        match = _ROUND_TITLE.fullmatch(marks[0].title)
        if match:
            named = int(match.group(1))
            lines = lines[1:]
            marks = headings(lines)
    for mark in marks:
        canonical = _KNOWN.get(normalize_title(mark.title))
        if canonical and mark.level != 3:
            lines[mark.line] = f"### {mark.title}"
        elif mark.level <= 2:
            raise UsageError(
                f"The report has a level-{mark.level} heading '{mark.title}'; round entries use "
                "### sections (Executive Summary, Position, Reasoning, Reactions to peers, "
                "Open questions)."
            )
    return "\n".join(lines).strip("\n"), named


def missing_sections(body: str) -> list[str]:
    """Required sections that are absent or empty."""
    present = {normalize_title(s.title): s.body.strip() for s in sections(body, 3)}
    return [t for t in REQUIRED_SECTIONS if not present.get(normalize_title(t))]


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
