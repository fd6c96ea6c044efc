"""The decision each complete debate on the list page reached, read from its final report.

The list shows a page of rows at a time and is drawn again on every change under the root,
so each report is read once and kept while its file (mtime, size) stands still.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.names import check_debate_id
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import read_text
from dreamcontext_council.rules.final_report import VerdictStatement, verdict_statement

# The most characters of a decision a row shows; the report page has it whole.
SHOWN = 160


def verdict_line(statement: VerdictStatement) -> str:
    """`Migrate now (A) · medium`: the decision without its closing stop or emphasis, then
    the confidence when the report states one."""
    sentence = " ".join(statement.sentence.split()).strip("*_ ").rstrip(".").strip("*_ ")
    if len(sentence) > SHOWN:
        sentence = sentence[: SHOWN - 1].rstrip() + "…"
    return f"{sentence} · {statement.confidence}" if statement.confidence else sentence


class ListVerdicts:
    """`verdicts(entry)`: the decision of the index entry's debate, or empty when its report
    is missing, unreadable or states none."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[tuple[int, int], str]] = {}

    def __call__(self, entry: dict[str, Any]) -> str:
        debate_id = str(entry.get("id"))
        try:
            check_debate_id(debate_id)
        except CouncilError:
            return ""
        folder = self.root.council / debate_id
        path = folder / "final-report.md"
        try:
            info = os.stat(path)
        except OSError:
            return ""
        stamp = (info.st_mtime_ns, info.st_size)
        with self._lock:
            kept = self._kept.get(debate_id)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        try:
            statement = verdict_statement(read_text(path, within=folder))
        except (CouncilError, OSError):
            return ""
        line = verdict_line(statement) if statement is not None else ""
        with self._lock:
            self._kept[debate_id] = (stamp, line)
        return line
