"""round-log.md and usage.jsonl: append-only logs, merged as the union in time order."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable

from dreamcontext_council.merge import unchanged_side

_LOG_DATE = re.compile(r" — (\d{4}-\d{2}-\d{2})\b")


def merge_round_log(base: str, ours: str, theirs: str) -> str | None:
    """round-log.md: the ancestor's entries, then both sides' new `##` entries by date.

    An entry both sides added the same way is kept once. None when a side changed the
    ancestor's entries instead of only appending (git then merges the lines).
    """
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    merged = _merge_appended(
        _log_entries(base), _log_entries(ours), _log_entries(theirs), _entry_date
    )
    if merged is None:
        return None
    head, *entries = merged
    return "\n\n".join([head.rstrip("\n"), *entries]).rstrip("\n") + "\n"


def merge_usage(base: str, ours: str, theirs: str) -> str | None:
    """usage.jsonl: the ancestor's lines, then both sides' new lines by their `at` time."""
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    merged = _merge_appended(_lines(base), _lines(ours), _lines(theirs), _line_time)
    if merged is None:
        return None
    return "".join(f"{line}\n" for line in merged)


def _merge_appended(
    base: list[str], ours: list[str], theirs: list[str], when: Callable[[str], str]
) -> list[str] | None:
    if ours[: len(base)] != base or theirs[: len(base)] != base:
        return None
    mine, other = _timed(ours[len(base) :], when), _timed(theirs[len(base) :], when)
    left = Counter(item for item, _ in mine)
    extra = []
    for item, time in other:  # an item both sides added is one item, kept once
        if left[item]:
            left[item] -= 1
        else:
            extra.append((item, time))
    # A stable sort: equal times keep ours before theirs, and each side's own order.
    return [*base, *(item for item, _ in sorted([*mine, *extra], key=lambda pair: pair[1]))]


def _timed(items: list[str], when: Callable[[str], str]) -> list[tuple[str, str]]:
    """Each item with its time; one without a time takes the time of the item before it."""
    timed, last = [], ""
    for item in items:
        last = when(item) or last
        timed.append((item, last))
    return timed


def _log_entries(text: str) -> list[str]:
    """The text before the first `## ` entry, then each entry (its heading to the next)."""
    blocks: list[list[str]] = [[]]
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("## "):
            blocks.append([])
        blocks[-1].append(line)
    head, *entries = ("\n".join(b).strip("\n") for b in blocks)
    return [head, *entries]


def _entry_date(entry: str) -> str:
    found = _LOG_DATE.search(entry.split("\n", 1)[0])
    return found.group(1) if found else ""


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _line_time(line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return ""
    at = record.get("at") if isinstance(record, dict) else None
    return at if isinstance(at, str) else ""
