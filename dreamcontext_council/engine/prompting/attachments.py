"""Attachments in prompts: every file within a size budget, compressed by the synthesis rules.

Each persona prompt and the synthesizer's prompt carry the debate's attachments in
the order they were attached. When together they are longer than the budget, the
budget is filled, not just respected (`fit_attachments`):

- Code is never cut. A code file (`CODE_SUFFIXES`) is kept whole, and so is every
  fenced block of a text file.
- Text files are compressed with `compress_answer`, the rule synthesis uses for long
  answers: first and last lines kept, a marker naming the key points in between. The
  number of lines kept is the largest that fits the budget left after the code, first
  the same for every file, then file by file in the order attached, so the views take
  within a line or so of the whole budget. The rule counts lines, so prose is first
  wrapped: long lines are broken at word boundaries, while code, indented lines and
  tables stay as they are.
- When the code alone (with every text file at its shortest view) exceeds the budget,
  the text files keep only their marker and code, and the code files are kept whole
  in the order attached while they fit; a code file that does not fit is left out
  whole, never cut, and its tag says so. The files themselves stay in the folder.

Each prompt item says how much of its file it holds.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
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
CODE_SUFFIXES = frozenset(
    [
        ".py",
        ".pyi",
        ".js",
        ".mjs",
        ".cjs",
        ".jsx",
        ".ts",
        ".tsx",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".rb",
        ".php",
        ".swift",
        ".m",
        ".mm",
        ".lua",
        ".pl",
        ".r",
        ".sh",
        ".bash",
        ".zsh",
        ".ps1",
        ".sql",
        ".html",
        ".css",
        ".scss",
        ".vue",
        ".svelte",
        ".zig",
        ".ex",
        ".exs",
        ".erl",
        ".hs",
        ".ml",
        ".clj",
        ".dart",
        ".tf",
        ".proto",
        ".graphql",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".ini",
        ".cfg",
        ".xml",
        ".dockerfile",
        ".makefile",
    ]
)
"""Files kept whole as code: never compressed, at most left out whole."""


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


def compress_attachment(text: str, *, wrap: bool = False, head: int = 15, tail: int = 10) -> str:
    """One attachment cut down by the synthesis rule (`wrap`: prose wrapped first); code kept whole."""
    source = wrap_prose(text) if wrap else text
    view = compress_answer(source, head=head, tail=tail)
    # Wrapping can add more than compressing then takes away: keep the shorter.
    return view if len(view) < len(text) else text


def is_code_file(name: str) -> bool:
    path = Path(name)
    return path.suffix.lower() in CODE_SUFFIXES or path.name.lower() in ("dockerfile", "makefile")


def _view(text: str, wrapped: str, lines: int) -> str:
    """A text file (`wrapped`: its prose wrapped) keeping `lines` first lines and two thirds
    as many last ones; the file itself when that is not shorter."""
    view = compress_answer(wrapped, head=lines, tail=lines * 2 // 3)
    return view if len(view) < len(text) else text


def _largest(fits: Callable[[int], bool], low: int, high: int) -> int:
    """The largest n in [low, high] with fits(n), given fits(low); fits is monotone."""
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def fit_attachments(texts: dict[str, str], budget: int) -> dict[str, str | None]:
    """Each file's view within `budget` characters (None: a code file left out whole)."""
    if sum(len(t) for t in texts.values()) <= budget:
        return dict(texts)
    code = {n: t for n, t in texts.items() if is_code_file(n)}
    prose = {n: t for n, t in texts.items() if n not in code}
    wrapped = {n: wrap_prose(t) for n, t in prose.items()}

    def view(name: str, lines: int) -> str:
        return _view(prose[name], wrapped[name], lines)

    shortest = {n: view(n, 0) for n in prose}
    room = budget - sum(len(v) for v in shortest.values())
    if sum(len(t) for t in code.values()) > room:
        views: dict[str, str | None] = dict(shortest)
        for name, text in code.items():
            kept = len(text) <= room
            views[name] = text if kept else None
            room -= len(text) if kept else 0
        return {n: views[n] for n in texts}
    room = budget - sum(len(t) for t in code.values())
    most = {n: w.count("\n") + 1 for n, w in wrapped.items()}
    # The same number of lines for every file, then each file in turn takes what is left.
    common = _largest(lambda k: sum(len(view(n, k)) for n in prose) <= room, 0, max(most.values()))
    lines = dict.fromkeys(prose, common)
    sizes = {n: len(view(n, common)) for n in prose}
    for name in prose:
        others = sum(sizes.values()) - sizes[name]

        def fits(k: int, name: str = name, others: int = others) -> bool:
            return others + len(view(name, k)) <= room

        lines[name] = _largest(fits, common, max(most[name], common))
        sizes[name] = len(view(name, lines[name]))
    return {n: code[n] if n in code else view(n, lines[n]) for n in texts}


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
    """Attachments as prompt items, filling `budget` when over it (`fit_attachments`).

    Each item: name, text, chars, original_chars, compressed, omitted, and `kept`, the
    sentence its tag carries about how much of the file it holds."""
    texts = {path.name: _read(path, files.paths.folder) for path in attachment_paths(files)}
    views = fit_attachments(texts, budget)
    items: list[dict[str, Any]] = []
    for name, text in texts.items():
        view = views[name]
        omitted = view is None
        shown = "" if view is None else view
        share = math.floor(100 * len(shown) / len(text)) if text else 100
        if omitted:
            kept = (
                f"code file of {len(text)} characters left out whole: the code alone exceeds "
                f"the {budget}-character budget; it is in the debate's attachments folder"
            )
        else:
            kept = f"{len(text)} → {len(shown)} characters, {share}% kept; code kept whole"
        items.append(
            {
                "name": name,
                "text": shown,
                "chars": len(shown),
                "original_chars": len(text),
                "compressed": not omitted and shown != text,
                "omitted": omitted,
                "kept": kept,
            }
        )
    return items
