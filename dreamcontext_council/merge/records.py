"""index.json and verdicts.json: unions of records by their key."""

from __future__ import annotations

import json
from typing import Any

from dreamcontext_council.errors import FormatError
from dreamcontext_council.merge import MISSING, Conflict, merge_keyed, unchanged_side
from dreamcontext_council.merge.debate import status_rank
from dreamcontext_council.rules.verdicts import (
    Verdict,
    Verdicts,
    parse_verdicts,
    recorded_order,
    render_verdicts,
)


def merge_index(base: str, ours: str, theirs: str) -> str | None:
    """The union of the debates by id; an entry both sides changed takes the newer one.

    New debates go first, newest created first, as the index lists them; the others keep
    the ancestor's order. None when a side is not an index (git then marks the conflict).
    """
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    try:
        old, mine, other = (_index_entries(text) for text in (base, ours, theirs))
    except ValueError:
        return None
    merged = merge_keyed(old, mine, other, _newer_entry)
    added = sorted(
        (e for i, e in merged.items() if i not in old),
        key=lambda e: (str(e.get("created_at") or ""), e["id"]),
        reverse=True,
    )
    kept = [merged[i] for i in old if i in merged]
    return json.dumps([*added, *kept], indent=2, ensure_ascii=False) + "\n"


def _index_entries(text: str) -> dict[str, dict[str, Any]]:
    if not text.strip():
        return {}
    data = json.loads(text)
    if not isinstance(data, list) or not all(
        isinstance(e, dict) and isinstance(e.get("id"), str) for e in data
    ):
        raise ValueError("not an index")
    return {e["id"]: e for e in data}


def _newer_entry(_id: str, _base: Any, ours: Any, theirs: Any) -> Any:
    # A debate one side removed from the index and the other moved on is still a debate.
    if ours is MISSING or theirs is MISSING:
        return theirs if ours is MISSING else ours
    return max(ours, theirs, key=_entry_age)


def _entry_age(entry: dict[str, Any]) -> tuple[str, tuple[int, ...], str]:
    return (
        str(entry.get("updated_at") or ""),
        status_rank(str(entry.get("status"))),
        json.dumps(entry, sort_keys=True),  # a stable choice when all else is equal
    )


def merge_verdicts(base: str, ours: str, theirs: str) -> str | None:
    """The union of the verdicts by (round, persona), and of the options by key.

    Each round's verdicts in the order they were recorded (`at`, then the persona), and
    options in the ancestor's order then each side's new ones: the same file in either
    merge direction. The same persona and round recorded differently on both sides is a
    real conflict: None.
    """
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    try:
        old, mine, other = (parse_verdicts(text) for text in (base, ours, theirs))
    except FormatError:
        return None
    try:
        options = merge_keyed(_options(old), _options(mine), _options(other))
        by_key = merge_keyed(_by_key(old), _by_key(mine), _by_key(other))
    except Conflict:
        return None
    rounds: dict[int, dict[str, Verdict]] = {}
    for (number, slug), verdict in by_key.items():
        rounds.setdefault(number, {})[slug] = verdict
    merged = Verdicts(
        options=list(options.values()),
        rounds={n: {s: votes[s] for s in recorded_order(votes)} for n, votes in rounds.items()},
    )
    return render_verdicts(merged)


def _options(verdicts: Verdicts) -> dict[str, dict[str, str]]:
    return {o["key"]: o for o in verdicts.options}


def _by_key(verdicts: Verdicts) -> dict[tuple[int, str], Verdict]:
    return {
        (number, slug): verdict
        for number in sorted(verdicts.rounds)
        for slug, verdict in verdicts.rounds[number].items()
    }
