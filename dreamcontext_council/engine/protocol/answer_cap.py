"""An answer over the size cap, cut down to it. Pure.

The cut keeps what the contract needs: every heading, and the closing ```verdict (or
```claims) block whole. The longest sections lose the middle of their text, keeping
their head and tail, and a marker in place of the cut states the answer's original
size and where the whole answer is kept. A code fence open at a cut is closed before
the marker and opened again after it, so no fence swallows what follows.

An answer whose reading stopped at its budget (`Completion.cut`) has no end to keep: its
head is kept up to the cap, then the marker. So is an answer of so many sections that their
markers alone would pass the cap.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from dreamcontext_council.engine.providers.answer_read import DEFAULT_MAX_ANSWER_KB
from dreamcontext_council.rules.markdown import headings

__all__ = ["DEFAULT_MAX_ANSWER_KB", "CappedAnswer", "cap_answer", "size_of"]
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_MARKER_ROOM = 400  # bytes a marker and its re-balanced fences take, at most (checked)
_HEAD_SHARE = 2 / 3  # of a cut section's room, the rest is its tail


@dataclass(frozen=True)
class CappedAnswer:
    """The answer as stored, and what it was before."""

    text: str
    original_bytes: int
    truncated: bool


def size_of(text: str) -> int:
    """The UTF-8 size of `text` in bytes."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def cap_answer(
    text: str, max_kb: int, *, keep_block: str, kept_at: str, read_whole: bool = True
) -> CappedAnswer:
    """`text` if it is at most `max_kb` KB (1000 bytes), else cut to about that size.

    `keep_block` names the fenced block kept whole (its info string, e.g. `verdict`);
    `kept_at` names the file that holds the whole answer, for the marker. `read_whole`
    False says reading stopped before the answer's end: its head is kept, up to the cap.
    """
    limit = max_kb * 1000
    original = size_of(text)
    if not read_whole:
        note = _stopped_marker(original, max_kb, kept_at)
        return CappedAnswer(_head(text, limit, note), original, True)
    if original <= limit:
        return CappedAnswer(text, original, False)
    lines = text.split("\n")
    pieces = _pieces(lines, keep_block)
    fixed = sum(size_of(p) + 1 for p, keep in pieces if keep)
    if fixed > limit // 2:  # a block that large is not worth keeping whole
        pieces = [(p, False) for p, _ in pieces]
        fixed = 0
    sizes = [size_of(p) + 1 for p, keep in pieces if not keep]
    note = _marker(original, max_kb, kept_at)
    room = limit - fixed
    out = ""
    for _ in range(4):  # the markers take room too: shrink until it fits
        level = _water_level(sizes, room, len(note) + _MARKER_ROOM)
        out = "\n".join(
            p if keep or size_of(p) + 1 <= level else _cut(p, int(level), note)
            for p, keep in pieces
        )
        if size_of(out) <= limit:
            break
        room -= size_of(out) - limit
    if size_of(out) > limit:  # more sections than markers fit in the cap
        out = _head(text, limit, note)
    return CappedAnswer(out, original, True)


def _marker(original: int, max_kb: int, kept_at: str) -> str:
    return (
        f"> **[Truncated]** This answer was {original:,} bytes, over the {max_kb} KB cap; "
        f"part of this section was cut here. The whole answer is in `{kept_at}`."
    )


def _stopped_marker(original: int, max_kb: int, kept_at: str) -> str:
    return (
        f"> **[Truncated]** This answer passed the {max_kb} KB cap: reading stopped after "
        f"{original:,} bytes and the rest was cut here. What was read is in `{kept_at}`."
    )


def _head(text: str, limit: int, note: str) -> str:
    """The head of `text` that leaves room for `note` within `limit` bytes, then `note`
    (a fence open at the cut closed before it)."""
    room = max(limit - size_of(note) - _MARKER_ROOM, 0)
    if text.isascii():
        head = text[:room]
    else:
        head = text[:room].encode("utf-8")[:room].decode("utf-8", "ignore")
    if "\n" in head[len(head) // 2 :]:
        head = head[: head.rfind("\n")]
    fence = _open_fence(head)
    return "\n".join([head, *([fence] if fence else []), "", note])


def _pieces(lines: list[str], keep_block: str) -> list[tuple[str, bool]]:
    """The text split at every heading and around the last `keep_block` block; True = keep."""
    starts = {h.line for h in headings(lines)}
    block = _last_block(lines, keep_block)
    kept = block[0] if block else -1
    if block:
        starts |= {block[0], block[1]}
    starts.discard(0)
    bounds = [0, *sorted(b for b in starts if b < len(lines)), len(lines)]
    return [("\n".join(lines[a:b]), a == kept) for a, b in itertools.pairwise(bounds) if b > a]


def _last_block(lines: list[str], info: str) -> tuple[int, int] | None:
    """(first line, line after the closing fence) of the last closed block named `info`."""
    found = None
    fence: str | None = None
    start, opened_as = 0, ""
    for number, line in enumerate(lines):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence, start = match.group(1), number
                opened_as = match.group(2).strip().lower()
        elif match and _closes(match, fence):
            if opened_as == info:
                found = (start, number + 1)
            fence = None
    return found


def _closes(match: re.Match[str], fence: str) -> bool:
    run = match.group(1)
    return run[0] == fence[0] and len(run) >= len(fence) and not match.group(2).strip()


def _open_fence(text: str) -> str | None:
    """The fence still open at the end of `text` (from a closed start), or None."""
    fence: str | None = None
    for match in _FENCE_LINE.finditer(text):  # only fence lines change it
        if fence is None:
            fence = match.group(1)
        elif _closes(match, fence):
            fence = None
    return fence


def _water_level(sizes: list[int], room: int, per_cut: int) -> float:
    """The size every piece is cut down to so that all fit in `room` with their markers."""
    if sum(sizes) <= room:
        return float("inf")
    ordered = sorted(sizes)
    spent = 0
    for index, size in enumerate(ordered):
        left = len(ordered) - index  # pieces from here on are cut to the level
        level = (room - spent - left * per_cut) / left
        if size >= level:
            return max(level, 0.0)
        spent += size
    return 0.0


def _cut(piece: str, level: int, note: str) -> str:
    """`piece` cut to about `level` bytes: its head, the marker, its tail."""
    data = piece.encode("utf-8")
    head_size = int(level * _HEAD_SHARE)
    tail_size = max(level - head_size, 0)
    head = data[:head_size].decode("utf-8", "ignore")
    tail = data[len(data) - tail_size :].decode("utf-8", "ignore") if tail_size else ""
    head = head[: head.rfind("\n")] if "\n" in head[len(head) // 2 :] else head
    if "\n" in tail[: len(tail) // 2]:
        tail = tail[tail.index("\n") + 1 :]
    before = _open_fence(head)
    after = _open_fence(piece[: len(piece) - len(tail)])
    parts = [head]
    if before:
        parts.append(before)
    parts += ["", note, ""]
    if after:
        parts.append(after)
    parts.append(tail)
    return "\n".join(parts)
