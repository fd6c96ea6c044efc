"""Git's conflict markers in a debate's file: found, and named in one line that says what to do.

Without the merge drivers (`council git-setup`), a merge both branches changed a file in
leaves `<<<<<<<`, `=======` and `>>>>>>>` lines in it. Such a file is not the format any
more; the commands say so in place of a parse error, and the read commands show the rest
of the debate.
"""

from __future__ import annotations

import re

from dreamcontext_council.errors import FormatError

# Both ends of a conflict: a lone `=======` line is also a markdown heading underline.
_OPENS = re.compile(r"^<{7}(?: |$)", re.MULTILINE)
_CLOSES = re.compile(r"^>{7}(?: |$)", re.MULTILINE)


class ConflictMarkers(FormatError):
    """A debate file holds git conflict markers; nothing was written."""

    def __init__(self, where: str, *, needed_by_all: bool = False) -> None:
        super().__init__(conflict_line(where, needed_by_all=needed_by_all))
        self.where = where


def holds_conflict(text: str) -> bool:
    """Whether the text holds a conflict git left: a `<<<<<<<` line and a `>>>>>>>` line."""
    return _OPENS.search(text) is not None and _CLOSES.search(text) is not None


def conflict_line(where: str, *, needed_by_all: bool = False) -> str:
    """The one line naming the cause; `needed_by_all` for a file nothing can be shown without."""
    cost = (
        " (every command needs it, so nothing of the debate can be shown)" if needed_by_all else ""
    )
    return (
        f"{where} holds git conflict markers{cost}: resolve them, or run "
        "`dreamcontext council git-setup` before merging next time; "
        "`dreamcontext council doctor` shows where."
    )


_SIDE_OPENS = "<" * 7
_SIDE_BASE = "|" * 7
_SIDE_SPLIT = "=" * 7
_SIDE_CLOSES = ">" * 7


def one_side(text: str, *, ours: bool = True) -> str:
    """The text with every conflict git left taken from one side: ours (between `<<<<<<<`
    and `=======`, less a diff3 `|||||||` base) or theirs (between `=======` and `>>>>>>>`).
    For reading what a conflicted file can still say, never for writing it back."""
    kept: list[str] = []
    state = ""  # "", "ours", "base", "theirs"
    for line in text.split("\n"):
        marker = line[:7]
        if marker == _SIDE_OPENS and line[7:8] in ("", " ") and state == "":
            state = "ours"
        elif marker == _SIDE_BASE and line[7:8] in ("", " ") and state == "ours":
            state = "base"
        elif line == _SIDE_SPLIT and state in ("ours", "base"):
            state = "theirs"
        elif marker == _SIDE_CLOSES and line[7:8] in ("", " ") and state == "theirs":
            state = ""
        elif state == "" or state == ("ours" if ours else "theirs"):
            kept.append(line)
    return "\n".join(kept)
