"""Attachments in prompts: every file within a size budget, compressed by the synthesis rules.

Each persona prompt and the synthesizer's prompt carry the debate's attachments in
the order they were attached. When together they are longer than the budget, each
one is compressed with `compress_answer`, the rule synthesis uses for long answers:
first and last lines kept, a marker naming the key points in between, and fenced
code never cut (every block comes back byte for byte). The rule counts lines, so a
file of a few very long lines (a paragraph per line) is first wrapped: prose lines
are broken at word boundaries, while code, indented lines and tables stay as they are.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting.compression import (
    compress_answer,
    extract_code_blocks,
    find_fenced_blocks,
    restore_code_blocks,
)
from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder.safe_read import inside, read_bytes

PROMPT_BUDGET_CHARS = 40_000
WRAP_CHARS = 200


def attachment_paths(files: DebateFiles) -> list[Path]:
    """The attached files: those debate.md records, in order, then any other file in the folder.

    FormatError when one is a link out of the debate folder: its target never reaches a prompt.
    """
    folder = files.paths.attachments
    if not folder.is_dir():
        return []
    present = {p.name: p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")}
    for path in present.values():
        inside(path, files.paths.folder)
    recorded = files.debate().meta.get("attachments") or []
    names = [str(item.get("name")) for item in recorded if isinstance(item, dict)]
    ordered = [present.pop(name) for name in names if name in present]
    return ordered + [present[name] for name in sorted(present)]


def wrap_prose(text: str, width: int = WRAP_CHARS) -> str:
    """Break prose lines longer than `width` at word boundaries; fenced code, indented
    lines (indented code, nested lists) and table rows are left exactly as they are."""
    view, blocks = extract_code_blocks(text)
    lines: list[str] = []
    for line in view.split("\n"):
        if len(line) <= width or line.startswith((" ", "\t", "|", "```", "~~~")):
            lines.append(line)
            continue
        ending = "\r" if line.endswith("\r") else ""
        parts: list[str] = []
        for part in textwrap.wrap(
            line.removesuffix("\r"), width, break_long_words=False, break_on_hyphens=False
        ):
            if parts and part.startswith(("```", "~~~")):
                parts[-1] += " " + part  # a wrapped line must not open a code fence
            else:
                parts.append(part)
        lines += [part + ending for part in parts]
    wrapped = restore_code_blocks("\n".join(lines), blocks)
    # Wrapping must leave every code block where it was; if it would not, keep the text.
    if _code(wrapped) != _code(text):
        return text
    return wrapped


def _code(text: str) -> list[str]:
    return [text[b.start : b.end] for b in find_fenced_blocks(text)]


def compress_attachment(text: str, *, wrap: bool = False) -> str:
    """One attachment cut down by the synthesis rule (`wrap`: prose wrapped first); code kept whole."""
    source = wrap_prose(text) if wrap else text
    view = compress_answer(source)
    # Wrapping can add more than compressing then takes away: keep the shorter.
    return view if len(view) < len(text) else text


def _read(path: Path, within: Path) -> str:
    # Decoded as stored, without newline translation, so code reaches the prompt unchanged.
    try:
        return read_bytes(path, within=within).decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(
            f"{path} is not UTF-8 text; remove it from the attachments folder or convert it."
        ) from None


def attachments_for_prompt(
    files: DebateFiles, budget: int = PROMPT_BUDGET_CHARS
) -> list[dict[str, Any]]:
    """Attachments as prompt items; over the budget each is compressed (code never cut)."""
    texts = {path.name: _read(path, files.paths.folder) for path in attachment_paths(files)}
    views = dict(texts)
    for wrap in (False, True):
        if sum(len(t) for t in views.values()) <= budget:
            break
        views = {name: compress_attachment(text, wrap=wrap) for name, text in texts.items()}
    items: list[dict[str, Any]] = []
    for name, text in texts.items():
        view = views[name]
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
