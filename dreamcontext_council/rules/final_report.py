"""Reading final-report.md: one `##` section of it, and the decision its Verdict states.

The synthesizer opens the Verdict with the decision in one or two sentences, the option
key in parentheses, then `Confidence: high|medium|low.` (templates/prompts/
synthesis-system.md.j2); the engine adds its measures below that paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dreamcontext_council.errors import NotFoundError
from dreamcontext_council.rules.markdown import find_section, sections

VERDICT = "Verdict"
APPENDIX = "Appendix: per-agent per-round summaries"
REQUIRED = (VERDICT, APPENDIX)
"""The sections every final report holds, whoever wrote it: the Verdict first, the Appendix last."""
_CONFIDENCE = re.compile(r"\**\s*confidence\s*\**\s*[:：]\s*\**\s*([a-z]+)", re.IGNORECASE)
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

    def to_json(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "confidence": self.confidence}


def final_report_part(text: str, debate_id: str, section: str | None) -> tuple[str, list[str]]:
    """The whole final report or one `##` section of it, and every section title."""
    titles = [s.title for s in sections(text, 2)]
    if section is None:
        return text, titles
    found = find_section(text, 2, section)
    if found is None:
        raise NotFoundError(
            f"The final report of {debate_id} has no section '{section}'; its sections are: "
            f"{', '.join(titles) or 'none'}."
        )
    return found.body, titles


def missing_sections(text: str) -> list[str]:
    """The required `##` sections the report lacks or leaves empty, in the order they go."""
    return [t for t in REQUIRED if not ((found := find_section(text, 2, t)) and found.body.strip())]


def verdict_statement(text: str) -> VerdictStatement | None:
    """The decision the report's Verdict states: its first paragraph, with the confidence
    taken out of it; None when the report has no Verdict or it is empty."""
    found = find_section(text, 2, VERDICT)
    if found is None:
        return None
    paragraph = _first_paragraph(found.body)
    if not paragraph:
        return None
    match = _CONFIDENCE.search(paragraph)
    level = match.group(1).lower() if match else None
    if match is None or level not in _LEVELS:
        return VerdictStatement(paragraph, None)
    # The decision is what comes before the confidence; what follows it is a note.
    sentence = paragraph[: match.start()].rstrip(" *_") or paragraph
    return VerdictStatement(sentence, level)


def _first_paragraph(body: str) -> str:
    lines: list[str] = []
    for line in body.strip().split("\n"):
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line.strip())
    return " ".join(lines)
