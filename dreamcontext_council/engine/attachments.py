"""Attachments in prompts: each file within a size budget, compressed by the synthesis rules."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.compression import compress_answer
from dreamcontext_council.folder.storage import read_text

PROMPT_BUDGET_CHARS = 40_000


def attachments_for_prompt(
    files: DebateFiles, budget: int = PROMPT_BUDGET_CHARS
) -> list[dict[str, Any]]:
    """Attachments as prompt items; over the budget each is compressed (code never cut)."""
    folder = files.paths.attachments
    if not folder.is_dir():
        return []
    paths = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    texts = {path.name: read_text(path) for path in paths}
    over = sum(len(t) for t in texts.values()) > budget
    items: list[dict[str, Any]] = []
    for name, text in texts.items():
        view = compress_answer(text) if over else text
        items.append(
            {
                "name": name,
                "text": view,
                "chars": len(view),
                "original_chars": len(text),
                "compressed": view != text,
            }
        )
    return items
