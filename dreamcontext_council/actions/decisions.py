"""The decision each complete debate reached, for the lists of debates (`list`, MCP).

A complete debate's verdict is the first paragraph of its final report's Verdict
(rules/final_report.py); the index does not keep it, so each listed debate's report is read.
"""

from __future__ import annotations

from typing import Any

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import read_text
from dreamcontext_council.rules.final_report import VerdictStatement, verdict_statement


def decision_of(root: Root, debate_id: str, status: str) -> VerdictStatement | None:
    """The Verdict a complete debate's final report states; None for a debate still going,
    or one whose report is missing, unreadable or states none (a list still lists it)."""
    if status != "complete":
        return None
    try:
        paths = root.debate(debate_id)
        return verdict_statement(read_text(paths.final_report, within=paths.folder))
    except (OSError, CouncilError, UnicodeDecodeError):
        return None


def with_decisions(root: Root, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Index entries, each with a `verdict` key: {sentence, confidence} for a complete
    debate whose final report states one, else None."""
    found = []
    for entry in entries:
        statement = decision_of(root, str(entry.get("id")), str(entry.get("status")))
        found.append({**entry, "verdict": statement.to_json() if statement else None})
    return found
