"""Deterministic compression of persona answers before synthesis.

An answer is cut down to its first and last lines plus a one-line marker naming the
key points of what was removed. Fenced code is never cut: it is taken out before
compression and put back, byte for byte. Which answers are compressed is decided in
`seating.py`.

Everything here is pure: strings in, strings and dataclasses out, no files.

Fenced code follows CommonMark at the top level of the document: an opening fence
is 3 or more backticks or tildes indented by at most 3 spaces (a backtick fence's
info string may not contain a backtick); the closing fence uses the same character,
is at least as long, is indented by at most 3 spaces and has nothing but spaces or
tabs after it. A fence that is never closed runs to the end of the text. Lines are
split on ``\\n`` only; a ``\\r`` before it counts as trailing whitespace. Fences
inside block quotes or deeply indented list items are not recognised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Unicode noncharacters are reserved for a program's internal use and do not occur
# in interchanged text, so a placeholder line cannot be mistaken for prose.
_PLACEHOLDER_OPEN = "\ufdd0"
_PLACEHOLDER_CLOSE = "\ufdd1"
_PLACEHOLDER_RE = re.compile(f"{_PLACEHOLDER_OPEN}CODE-BLOCK-([0-9]+){_PLACEHOLDER_CLOSE}")

_OPENING_FENCE_RE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_CLOSING_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")

_MARKER_RE = re.compile(r"\[\.\.\. [0-9]+ lines compressed\.(?: Key points: .*)?\]")
# A marker read back when a compressed view is compressed again: its count and key points.
_MARKER_PARTS_RE = re.compile(r"\[\.\.\. ([0-9]{1,9}) lines compressed\.(?: Key points: (.*))?\]")
_KEY_SEPARATOR = "; "

_THEMATIC_BREAK_RE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_HEADING_RE = re.compile(r" {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_BULLET_RE = re.compile(r"[ \t]*[-*+][ \t]+(.*)")
_NUMBERED_RE = re.compile(r"[ \t]*[0-9]{1,9}[.)][ \t]+(.*)")
_BOLD_RE = re.compile(r"[ \t]*(\*\*.*)")
_WHITESPACE_RE = re.compile(r"\s+")

ELLIPSIS = "…"


def placeholder(index: int) -> str:
    """The single-line placeholder that stands for code block number ``index``.

    It is ``U+FDD0 + "CODE-BLOCK-<index>" + U+FDD1``: two Unicode noncharacters
    around a counter, so it cannot occur in normal text.
    """
    return f"{_PLACEHOLDER_OPEN}CODE-BLOCK-{index}{_PLACEHOLDER_CLOSE}"


@dataclass(frozen=True)
class FencedBlock:
    """One fenced code block found in a text, by character offsets."""

    start: int
    """Offset of the first character of the opening fence line."""
    end: int
    """Offset just past the closing fence line (its newline included), or the text's end."""
    info: str
    """The info string after the opening fence, stripped (``python``, ``claims``, ...)."""
    body: str
    """The lines between the fences, verbatim."""
    closed: bool
    """False when the fence was never closed and the block runs to the end of the text."""


def _split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, each line keeping its ending; ``"".join`` gives the text back."""
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def _content(line: str) -> str:
    """A line without its ``\\n`` or ``\\r\\n`` ending."""
    line = line.removesuffix("\n")
    return line.removesuffix("\r")


def _opening_fence(line: str) -> tuple[str, str] | None:
    """The fence string and info string if the line opens a fenced block."""
    match = _OPENING_FENCE_RE.fullmatch(_content(line))
    if match is None:
        return None
    fence, rest = match.group(2), match.group(3)
    if fence[0] == "`" and "`" in rest:
        return None
    return fence, rest.strip()


def _closes(line: str, fence: str) -> bool:
    match = _CLOSING_FENCE_RE.fullmatch(_content(line))
    if match is None:
        return False
    closing = match.group(1)
    return closing[0] == fence[0] and len(closing) >= len(fence)


def _scan(lines: list[str]) -> list[tuple[int, int, str, bool]]:
    """Fenced blocks as (first line, line after the last, info string, closed)."""
    blocks: list[tuple[int, int, str, bool]] = []
    index = 0
    while index < len(lines):
        opening = _opening_fence(lines[index])
        if opening is None:
            index += 1
            continue
        fence, info = opening
        end = index + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        closed = end < len(lines)
        end = end + 1 if closed else end
        blocks.append((index, end, info, closed))
        index = end
    return blocks


def find_fenced_blocks(text: str) -> list[FencedBlock]:
    """Every top-level fenced code block of ``text``, in order (rules in the module doc)."""
    lines = _split_lines(text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    found = []
    for first, after, info, closed in _scan(lines):
        body_end = after - 1 if closed else after
        found.append(
            FencedBlock(
                start=offsets[first],
                end=offsets[after],
                info=info,
                body="".join(lines[first + 1 : body_end]),
                closed=closed,
            )
        )
    return found


def extract_code_blocks(text: str) -> tuple[str, list[str]]:
    """Take fenced code blocks out of ``text``, leaving one placeholder line for each.

    Returns the text with placeholders and the blocks verbatim, fences and final
    newline included. The placeholder for block ``i`` is ``placeholder(i)`` on a
    line of its own, followed by a newline exactly when the block ended with one.
    A prose line that already has the shape of a placeholder is taken out the same
    way, so every placeholder line in the result is one of ours and
    ``restore_code_blocks`` always gives the original text back.
    """
    lines = _split_lines(text)
    spans = {first: after for first, after, _info, _closed in _scan(lines)}
    view: list[str] = []
    blocks: list[str] = []
    index = 0
    while index < len(lines):
        after = spans.get(index)
        if after is None and _PLACEHOLDER_RE.fullmatch(lines[index].removesuffix("\n")):
            after = index + 1
        if after is None:
            view.append(lines[index])
            index += 1
            continue
        block = "".join(lines[index:after])
        ending = "\n" if block.endswith("\n") else ""
        view.append(placeholder(len(blocks)) + ending)
        blocks.append(block)
        index = after
    return "".join(view), blocks


def _placeholder_index(line: str) -> int | None:
    match = _PLACEHOLDER_RE.fullmatch(line.removesuffix("\n"))
    return None if match is None else int(match.group(1))


def restore_code_blocks(text: str, blocks: list[str]) -> str:
    """Put the code blocks back in place of their placeholder lines.

    Raises ``ValueError`` for a placeholder whose number has no block.
    """
    restored = []
    for line in _split_lines(text):
        index = _placeholder_index(line)
        if index is None:
            restored.append(line)
        elif index < len(blocks):
            restored.append(blocks[index])
        else:
            raise ValueError(f"placeholder for code block {index} has no block")
    return "".join(restored)


def _key_text(line: str) -> str | None:
    """The text of a key line (heading, bullet, numbered item, bold line), or None.

    A `;` becomes `,`: key points are joined with `; ` in the marker and read back from it."""
    content = _content(line)
    if _THEMATIC_BREAK_RE.fullmatch(content):
        return None
    for pattern in (_HEADING_RE, _BULLET_RE, _NUMBERED_RE, _BOLD_RE):
        match = pattern.fullmatch(content)
        if match is not None:
            text = (match.group(1) or "").replace("**", "")
            text = _WHITESPACE_RE.sub(" ", text.replace(";", ",")).strip()
            return text or None
    return None


def _cut(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    return text[: width - 1].rstrip() + ELLIPSIS


def compression_marker(removed: int, key_points: list[str]) -> str:
    """The line that stands where the middle of an answer was removed.

    ``[... N lines compressed. Key points: a; b; c]``, or
    ``[... N lines compressed.]`` when there are no key points.
    """
    if not key_points:
        return f"[... {removed} lines compressed.]"
    return f"[... {removed} lines compressed. Key points: {_KEY_SEPARATOR.join(key_points)}]"


def _is_compressed_view(lines: list[str], head: int, tail: int) -> bool:
    """True when the lines have the shape compress_answer gives with these settings."""
    if len(lines) <= head + tail or not _MARKER_RE.fullmatch(_content(lines[head])):
        return False
    return all(_placeholder_index(line) is not None for line in lines[head + 1 : len(lines) - tail])


def check_settings(head: int, tail: int, key_lines: int, key_width: int) -> None:
    if min(head, tail, key_lines) < 0:
        raise ValueError("head, tail and key_lines must not be negative")
    if key_width < 1:
        raise ValueError("key_width must be at least 1")


def compress_answer(
    text: str,
    *,
    head: int = 15,
    tail: int = 10,
    key_lines: int = 3,
    key_width: int = 60,
) -> str:
    """Compress one answer: first and last lines kept, a marker for the middle, code intact.

    The steps, in order:

    1. Take fenced code out (``extract_code_blocks``); each block becomes one line.
    2. If there are at most ``head + tail`` lines, nothing changes.
    3. Keep the first ``head`` and the last ``tail`` lines.
    4. From the middle, take up to ``key_lines`` key lines (markdown headings,
       bullets ``-``/``*``/``+``, numbered items ``1.``/``1)``, lines starting with
       ``**``), with the marker, ``#`` and ``**`` removed and whitespace collapsed,
       each cut to ``key_width`` characters (ending in ``…`` when cut).
    5. Put one marker line where the middle was (``compression_marker``), where N
       counts the middle lines removed. Code from the middle is never removed: its
       placeholder lines follow the marker directly, in their original order.
    6. Put the code back.

    The result is never longer than the input: when compression would not make the
    answer shorter, the input comes back unchanged. A text that already has the
    shape of a compressed view (a marker line right after the first ``head`` lines,
    then only code, then ``tail`` lines) comes back unchanged, so compressing twice
    is the same as compressing once.
    """
    check_settings(head, tail, key_lines, key_width)
    view, blocks = extract_code_blocks(text)
    lines = _split_lines(view)
    if len(lines) <= head + tail or _is_compressed_view(lines, head, tail):
        return text
    middle = lines[head : len(lines) - tail]
    code = [line for line in middle if _placeholder_index(line) is not None]
    removed = [line for line in middle if _placeholder_index(line) is None]
    if not removed:
        return text
    # A marker among the removed lines (a view compressed again, keeping fewer lines) stands
    # for the lines it counts and the key points it names, so compressing a view gives the
    # marker compressing the original would: the result does not depend on the route.
    count = 0
    candidates: list[str] = []
    for line in removed:
        earlier = _MARKER_PARTS_RE.fullmatch(_content(line))
        if earlier is None:
            count += 1
            key = _key_text(line)
            candidates += [key] if key is not None else []
        else:
            count += int(earlier.group(1))
            candidates += (earlier.group(2) or "").split(_KEY_SEPARATOR) if earlier.group(2) else []
    key_points = [_cut(key, key_width) for key in candidates[:key_lines]]
    ending = "\r\n" if removed[0].endswith("\r\n") else "\n"
    if not code and tail == 0 and not text.endswith("\n"):
        ending = ""  # the marker is the last line and the answer had no final newline
    marker = compression_marker(count, key_points) + ending
    tail_lines = lines[len(lines) - tail :]
    compressed = restore_code_blocks("".join([*lines[:head], marker, *code, *tail_lines]), blocks)
    return compressed if len(compressed) < len(text) else text


def widened(head: int, tail: int, extra: int) -> tuple[int, int]:
    """(head, tail) with `extra` more first lines and two thirds as many more last lines:
    from (15, 10) the ladder the fixed steps (8, 5), (4, 3), (2, 1) also stand on."""
    return head + extra, tail + (2 * extra + 1) // 3


def widest_view(
    text: str,
    room: int,
    *,
    head: int = 15,
    tail: int = 10,
    key_lines: int = 3,
    key_width: int = 60,
) -> tuple[str, tuple[int, int]] | None:
    """The compressed view of `text` that keeps the most lines, at least (head, tail), and is
    at most `room` characters; None when even the (head, tail) view is longer.

    This fills a budget rather than undershooting it: a compression step that brings a
    prompt under its budget takes back as many lines as still fit. Code is never cut."""

    def view(extra: int) -> str:
        first, last = widened(head, tail, extra)
        return compress_answer(
            text, head=first, tail=last, key_lines=key_lines, key_width=key_width
        )

    if len(view(0)) > room:
        return None
    low, high = 0, text.count("\n") + 1
    while low < high:
        middle = (low + high + 1) // 2
        if len(view(middle)) <= room:
            low = middle
        else:
            high = middle - 1
    return view(low), widened(head, tail, low)
