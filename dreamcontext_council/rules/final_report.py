"""Reading final-report.md: one `##` section of it, and the decision its Verdict states.

The synthesizer opens the Verdict with the decision in one or two sentences, the option
key in parentheses, then `Confidence: high|medium|low.` (templates/prompts/
synthesis-system.md.j2); the engine adds its measures below that paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dreamcontext_council.errors import FormatError, NotFoundError
from dreamcontext_council.rules.limits import MAX_REPORT_SECTIONS
from dreamcontext_council.rules.markdown import (
    Section,
    TooManySections,
    first_section,
    normalize_title,
    sections,
)

VERDICT = "Verdict"
APPENDIX = "Appendix: per-agent per-round summaries"
REQUIRED = (VERDICT, APPENDIX)
"""The sections every final report holds, whoever wrote it: the Verdict first, the Appendix last."""
# `**Confidence:** high`: the word, then what may stand between it and the level. Each run
# is matched possessively, found after the word rather than searched for with the stars
# before it (a search with them backtracked over a run of stars or spaces at every start,
# quadratic in the paragraph's length); the stars and spaces before the word are stepped
# over backwards (`_confidence`).
_CONFIDENCE_WORD = re.compile(r"confidence", re.IGNORECASE)
_CONFIDENCE_LEVEL = re.compile(r"\s*+\**+\s*+[:：]\s*+\**+\s*+([a-z]+)", re.IGNORECASE)
_LEVELS = ("high", "medium", "low")


@dataclass(frozen=True)
class VerdictStatement:
    """The Verdict's decision sentence and its confidence (None when it states none)."""

    sentence: str
    confidence: str | None

    def line(self) -> str:
        """`Migrate now (A). Confidence: medium.`, on one line."""
        if self.confidence is None:
            return self.sentence
        return f"{self.sentence} Confidence: {self.confidence}."

    def short(self) -> str:
        """`Migrate now (A) · medium`: the decision without its closing stop, and the
        confidence after a dot, as the list of debates shows it."""
        sentence = " ".join(self.sentence.split()).rstrip(".")
        return f"{sentence} · {self.confidence}" if self.confidence else sentence

    def to_json(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "confidence": self.confidence}


def report_sections(text: str) -> list[Section]:
    """The `##` sections of a final report; TooManySections past MAX_REPORT_SECTIONS (its
    `read` holds the first ones), raised at the heading that would start one more."""
    return sections(text, 2, most=MAX_REPORT_SECTIONS)


def _sections_read(text: str) -> list[Section]:
    """The report's `##` sections, or the first MAX_REPORT_SECTIONS of a longer one."""
    try:
        return report_sections(text)
    except TooManySections as stopped:
        return list(stopped.read)


def too_many_sections(debate_id: str) -> str:
    """The line a reader says for a final report past MAX_REPORT_SECTIONS."""
    return (
        f"The final report of {debate_id} has more than {MAX_REPORT_SECTIONS:,} `##` sections; "
        f"a report is read up to {MAX_REPORT_SECTIONS:,} (a synthesis writes about ten). Open "
        f"final-report.md in its folder, or write it again with `dreamcontext council run "
        f"{debate_id} --resynthesize`."
    )


def final_report_part(text: str, debate_id: str, section: str | None) -> tuple[str, list[str]]:
    """The whole final report or one `##` section of it, and every section title.

    FormatError, in one line, for a report of more than MAX_REPORT_SECTIONS sections."""
    try:
        found_all = report_sections(text)
    except TooManySections:
        raise FormatError(too_many_sections(debate_id)) from None
    titles = [s.title for s in found_all]
    if section is None:
        return text, titles
    wanted = normalize_title(section)
    found = next((s for s in found_all if normalize_title(s.title) == wanted), None)
    if found is None:
        raise NotFoundError(
            f"The final report of {debate_id} has no section '{section}'; its sections are: "
            f"{', '.join(titles) or 'none'}."
        )
    return found.body, titles


def without_frontmatter(text: str) -> str:
    """The report as a reader wants it: without the YAML block between `---` lines at its
    top (the debate's id, topic, personas), which the file keeps for tools."""
    from dreamcontext_council.folder.frontmatter_io import parse

    try:
        return parse(text, "final-report.md")[1] + "\n"
    except FormatError:
        return text  # a block that does not parse is shown as written


def missing_sections(text: str) -> list[str]:
    """The required `##` sections the report lacks or leaves empty, in the order they go
    (of a report past MAX_REPORT_SECTIONS, among the sections read)."""
    bodies = {normalize_title(s.title): s.body for s in _sections_read(text)}
    return [t for t in REQUIRED if not bodies.get(normalize_title(t), "").strip()]


def verdict_statement(text: str) -> VerdictStatement | None:
    """The decision the report's Verdict states: its first paragraph, with the confidence
    taken out of it; None when the report has no Verdict or it is empty. Of a report past
    MAX_REPORT_SECTIONS, the Verdict among the sections read."""
    found = first_section(text, 2, VERDICT, most=MAX_REPORT_SECTIONS)
    if found is None:
        return None
    paragraph = _first_paragraph(found.body)
    if not paragraph:
        return None
    found_at = _confidence(paragraph)
    level = found_at[1].lower() if found_at else None
    if found_at is None or level not in _LEVELS:
        return VerdictStatement(paragraph, None)
    # The decision is what comes before the confidence; what follows it is a note.
    sentence = paragraph[: found_at[0]].rstrip(" *_") or paragraph
    return VerdictStatement(sentence, level)


def _confidence(paragraph: str) -> tuple[int, str] | None:
    """Where the first `**Confidence:** level` starts (its stars and spaces before the word
    included) and the level's word; None without one. Linear in the paragraph."""
    for word in _CONFIDENCE_WORD.finditer(paragraph):
        level = _CONFIDENCE_LEVEL.match(paragraph, word.end())
        if level is None:
            continue
        start = word.start()
        while start > 0 and paragraph[start - 1].isspace():
            start -= 1
        while start > 0 and paragraph[start - 1] == "*":
            start -= 1
        return start, level.group(1)
    return None


def _first_paragraph(body: str) -> str:
    lines: list[str] = []
    for line in body.strip().split("\n"):
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line.strip())
    return " ".join(lines)
