"""round-log.md and usage.jsonl: append-only logs, merged as both sides' additions in time order."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from dreamcontext_council.merge import unchanged_side
from dreamcontext_council.rules.roundlog import logged_time

_ISO_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?")
# The persona an entry is about, where its heading names one: `— <slug> in round N`.
_LOG_PERSONA = re.compile(r" — (\S+) in round \d+\b")

# When an event happened, as (day, time of day): "" for a time not written. Compared as
# tuples, a day alone comes before every time written on that day.
When = tuple[str, str]
# An item's time and what breaks a tie between the sides' items of the same time.
Order = Callable[[str], tuple[When, str]]


def merge_round_log(base: str, ours: str, theirs: str) -> str | None:
    """round-log.md: the ancestor's entries, then both sides' new `##` entries in time order.

    Every entry a side added since the ancestor is an event and is kept, even when the
    other side added the same text (two runs stopped by budget on two machines are two
    stops). None when a side changed the ancestor's entries instead of only appending
    (git then merges the lines).
    """
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    merged = merge_appended(
        _log_entries(base), _log_entries(ours), _log_entries(theirs), _entry_order
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
    merged = merge_appended(_lines(base), _lines(ours), _lines(theirs), _line_order)
    if merged is None:
        return None
    return "".join(f"{line}\n" for line in merged)


def merge_appended(
    base: list[str], ours: list[str], theirs: list[str], order: Order
) -> list[str] | None:
    """The ancestor's items, then every item each side added, interleaved by time; None
    when a side does not start with the ancestor's items.

    Each side keeps its own order (an item's time is never taken as earlier than the item
    before it on its side). Between the sides the earlier item goes first; at the same
    time, the one `order` ranks first, then the one whose text sorts first, and the same
    item at the same time on both sides is kept twice, together: merging A into B gives
    the same file as merging B into A.
    """
    if ours[: len(base)] != base or theirs[: len(base)] != base:
        return None
    mine, other = _ranked(ours[len(base) :], order), _ranked(theirs[len(base) :], order)
    merged, i, j = list(base), 0, 0
    while i < len(mine) and j < len(other):
        if mine[i][1] == other[j][1]:  # the same entry at the same time on both: two events
            merged += [mine[i][0], other[j][0]]
            i, j = i + 1, j + 1
        elif other[j][1] < mine[i][1]:
            merged.append(other[j][0])
            j += 1
        else:
            merged.append(mine[i][0])
            i += 1
    merged.extend(item for item, _ in mine[i:])
    merged.extend(item for item, _ in other[j:])
    return merged


def _ranked(items: list[str], order: Order) -> list[tuple[str, tuple[When, str, str]]]:
    """Each item with its rank: its time (or, when it has none or an earlier one, the time
    of the item before it), then what breaks a tie, then its text."""
    ranked: list[tuple[str, tuple[When, str, str]]] = []
    last: When = ("", "")
    for item in items:
        when, tie = order(item)
        last = max(when, last)
        ranked.append((item, (last, tie, item)))
    return ranked


def _log_entries(text: str) -> list[str]:
    """The text before the first `## ` entry, then each entry (its heading to the next)."""
    blocks: list[list[str]] = [[]]
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("## "):
            blocks.append([])
        blocks[-1].append(line)
    head, *entries = ("\n".join(b).strip("\n") for b in blocks)
    return [head, *entries]


def _entry_order(entry: str) -> tuple[When, str]:
    """An entry's time from its heading, and the persona it names (ties go by persona)."""
    heading = entry.split("\n", 1)[0]
    persona = _LOG_PERSONA.search(heading)
    return logged_time(heading), (persona.group(1) if persona else "")


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _line_order(line: str) -> tuple[When, str]:
    try:
        record = json.loads(line)
    except ValueError:
        return ("", ""), ""
    if not isinstance(record, dict):
        return ("", ""), ""
    at, persona = record.get("at"), record.get("persona")
    found = _ISO_TIME.match(at) if isinstance(at, str) else None
    return (
        (found.group(1), found.group(2) or "") if found else ("", ""),
        persona if isinstance(persona, str) else "",
    )
