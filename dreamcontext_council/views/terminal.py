"""Text from models and programs made safe to print: its control characters shown, not obeyed.

A terminal obeys control characters wherever they come from: an escape sequence in a verdict
headline can retitle the window, clear the screen or rewrite lines above it, and a bidi
override can make a line read differently from what it says. Everything the council prints
passes through `printable` (or `printable_json` for JSON) on its way out.
"""

from __future__ import annotations

import os
import re
import sys

# C0 controls but tab and newline, DEL, C1 controls, and the bidi embeddings, overrides
# and isolates (the "Trojan Source" set).
_BIDI = "\u202a-\u202e\u2066-\u2069"
_UNPRINTABLE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
# Outside JSON strings JSON is plain ASCII, and json.dumps already escapes C0 controls.
# Compiled by its first use (re keeps it): a board printed as text needs none.
_JSON_UNPRINTABLE = f"[\x7f-\x9f{_BIDI}]"


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character other than newline and tab shown as its escape.

    ESC becomes the four characters `\\x1b`, CSI (U+009B) `\\x9b`, a right-to-left override
    `\\u202e`; a CR that ends a line (CRLF) is dropped. Applying it twice changes nothing.
    """
    return _UNPRINTABLE.sub(_shown, text.replace("\r\n", "\n"))


def terminal_columns() -> int | None:
    """The width of the terminal output goes to: `COLUMNS` when set, else the terminal's
    own; None for a pipe or a file."""
    # shutil.get_terminal_size's rule for the columns, without importing shutil (and with it
    # zlib, bz2 and lzma) on every command that prints.
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or None


def printable_json(text: str) -> str:
    """JSON text (as `json.dumps` writes it) with DEL, C1 and bidi controls `\\u`-escaped.

    Unlike `printable` this loses nothing: the JSON still decodes to the same strings.
    """
    return re.sub(_JSON_UNPRINTABLE, lambda m: f"\\u{ord(m.group()):04x}", text)


# Latin letters and general punctuation (`·`, `…`, `—`): one column each, no table needed.
_NOT_PLAIN = re.compile("[^\x00-\u02ff\u2000-\u206f]")


def cells(text: str) -> int:
    """How many terminal columns `text` takes: wide (CJK) characters two, combining marks
    none. The standard library's tables: the list commands must not pay for rich's import."""
    if not _NOT_PLAIN.search(text):
        return len(text)
    import unicodedata

    return sum(
        0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1
        for char in text
    )


def cut_to(text: str, width: int) -> str:
    """`text` in at most `width` terminal columns, ending in `…` when it had to be cut."""
    if not _NOT_PLAIN.search(text):  # one column a character: a list of thousands
        return text if len(text) <= width else text[: max(width - 1, 0)].rstrip() + "…"
    if cells(text) <= width:
        return text
    kept, used = [], 0
    for char in text:
        size = cells(char)
        if used + size > width - 1:
            break
        kept.append(char)
        used += size
    return "".join(kept).rstrip() + "…"
