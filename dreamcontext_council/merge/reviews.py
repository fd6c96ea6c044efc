"""reviews.json: the union of the critics' scores by (round, critic), both sides kept."""

from __future__ import annotations

import json
from typing import Any

from dreamcontext_council.errors import FormatError
from dreamcontext_council.merge import MISSING, Conflict, merge_keyed, unchanged_side
from dreamcontext_council.rules.reviews import parse_reviews, render_reviews

Key = tuple[int, str]


def merge_reviews(base: str, ours: str, theirs: str) -> str | None:
    """Every review either side recorded, by (round, critic).

    A critic's review that both sides recorded differently is settled the same way in
    either merge direction (`kept_review`), and `review_disagreements` names it: the
    critic's round-2 entry is the record, and `doctor` sets reviews.json from the entry
    that stands. Rounds in numeric order, each round's critics by name. None when a side
    is not a reviews file (git then marks the conflict).
    """
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    try:
        old, mine, other = (parse_reviews(text) for text in (base, ours, theirs))
        rest = merge_keyed(_rest(old), _rest(mine), _rest(other))
    except (FormatError, Conflict):
        return None
    merged = merge_keyed(_by_key(old), _by_key(mine), _by_key(other), _resolve)
    rounds: dict[str, dict[str, Any]] = {}
    for number, critic in sorted(merged):
        rounds.setdefault(str(number), {})[critic] = merged[(number, critic)]
    return render_reviews({**rest, "rounds": rounds})


def review_disagreements(base: str, ours: str, theirs: str) -> list[str]:
    """One line per review both sides recorded differently, saying which one the merge kept."""
    try:
        old, mine, other = (_by_key(parse_reviews(text)) for text in (base, ours, theirs))
    except FormatError:
        return []
    found = []
    for key in sorted(set(mine) & set(other)):
        if mine[key] == other[key] or old.get(key) in (mine[key], other[key]):
            continue
        kept = kept_review(mine[key], other[key])
        side = "ours" if kept == mine[key] else "theirs"
        found.append(
            f"{key[1]}'s round {key[0]} review was recorded two ways ({_shown(mine[key])} "
            f"in ours, {_shown(other[key])} in theirs); kept the one from {side}. Keep the "
            f"round-{key[0]} "
            f"entry of {key[1]} that stands, then run `dreamcontext council doctor --repair` "
            "to set reviews.json from it"
        )
    return found


def kept_review(ours: Any, theirs: Any) -> Any:
    """The review a merge keeps of two different ones: one with a score over one without,
    then the one whose JSON sorts last. The same in either merge direction."""
    return max(ours, theirs, key=lambda r: (_scored(r), json.dumps(r, sort_keys=True)))


def _resolve(_key: Key, _base: Any, ours: Any, theirs: Any) -> Any:
    # A review one side removed and the other recorded again is still a review.
    if ours is MISSING or theirs is MISSING:
        return theirs if ours is MISSING else ours
    return kept_review(ours, theirs)


def _scored(review: Any) -> bool:
    score = review.get("score") if isinstance(review, dict) else None
    return isinstance(score, int | float) and not isinstance(score, bool)


def _shown(review: Any) -> str:
    if not isinstance(review, dict):
        return "an unreadable review"
    score = review.get("score")
    shown = f"{score:g}/10" if _scored(review) else "no score"
    return f"{str(review.get('target', '?'))[:80]} {shown}"


def _by_key(data: dict[str, Any]) -> dict[Key, Any]:
    return {
        (int(number), critic): _fields_in_order(review)
        for number, by_critic in data["rounds"].items()
        for critic, review in by_critic.items()
    }


def _fields_in_order(review: dict[str, Any]) -> dict[str, Any]:
    """A review's fields as the tool writes them (`target`, `score`), then any others by name."""
    first = [k for k in ("target", "score") if k in review]
    return {k: review[k] for k in [*first, *sorted(k for k in review if k not in first)]}


def _rest(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "rounds"}
