"""reviews.json and round 2's cross-examination, as pure rules.

Round 2 pairs each critic with a peer (recorded in debate.md under `cross_examination`),
queues it a directive to cross-examine that peer, and its entry's `### Cross-examination`
ends in `Score: N/10`. reviews.json records those scores:
`{"rounds": {"2": {"critic": {"target": "peer", "score": 7.0}}}}`. The entries are the
record; reviews.json sums them up, so it can always be rebuilt from them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from dreamcontext_council.errors import FormatError
from dreamcontext_council.rules.debate import parse_round
from dreamcontext_council.rules.markdown import normalize_title, sections
from dreamcontext_council.rules.report import RoundEntry

PAIRS_KEY = "cross_examination"
"""debate.md's record of round 2's pairs, critic → peer, written as round 2 starts."""

CROSS_EXAM_DIRECTIVE = (
    "Cross-examine {peer}: find the factual errors, logical gaps and missing perspectives in its "
    "round 1 answer (not matters of opinion) and score it 1-10."
)
REVIEW_ROUND = 2

_SCORE = re.compile(r"score\s*[:=]?\s*\**\s*(\d{1,2}(?:\.\d+)?)\s*\**\s*/\s*10", re.I)

# One review: who the critic scored and the score (None: it gave none).
Review = tuple[str, float | None]


def review_score(cross_examination: str | None) -> float | None:
    """The `Score: N/10` a critic gave, clamped to 1-10; None when there is none."""
    if not cross_examination:
        return None
    found = _SCORE.findall(cross_examination)
    if not found:
        return None
    return min(10.0, max(1.0, float(found[-1])))


def cross_examination_of(body: str) -> str | None:
    """The `### Cross-examination` section of an entry's body, if it has one."""
    wanted = normalize_title("Cross-examination")
    found = [s.body for s in sections(body, 3) if normalize_title(s.title) == wanted]
    return found[0] if found else None


def recorded_pairs(meta: Mapping[str, Any]) -> dict[str, str]:
    """critic → peer as debate.md records them; empty before round 2 (or in a Node debate)."""
    recorded = meta.get(PAIRS_KEY)
    if not isinstance(recorded, dict):
        return {}
    return {str(c): str(p) for c, p in recorded.items() if isinstance(p, str)}


def entry_reviews(
    pairs: Mapping[str, str], round_two: Mapping[str, RoundEntry | None]
) -> dict[str, Review]:
    """critic → (peer, the score of its round-2 entry), in the pairs' order, for each critic
    with a round-2 entry (`round_two`: critic → its entry, None for none)."""
    found: dict[str, Review] = {}
    for critic, peer in pairs.items():
        entry = round_two.get(critic)
        if entry is not None:
            found[critic] = (peer, review_score(entry.section("Cross-examination")))
    return found


def parse_reviews(text: str, where: str = "reviews.json") -> dict[str, Any]:
    """reviews.json as data; empty text reads as no reviews. A file that is not reviews
    (not JSON, no `rounds` object, a round key that is not a round) is a FormatError."""
    if not text.strip():
        return {"rounds": {}}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FormatError(f"{where} is not JSON ({exc}).") from None
    if not isinstance(data, dict) or not isinstance(data.get("rounds"), dict):
        raise FormatError(f"{where} has no `rounds` object.")
    for number, by_critic in data["rounds"].items():
        parse_round(str(number), where)
        if not isinstance(by_critic, dict) or not all(
            isinstance(v, dict) for v in by_critic.values()
        ):
            raise FormatError(f"{where}: round {number} is not an object of reviews by critic.")
    return data


def critic_order(critics: Iterable[str], pairs: Mapping[str, str]) -> list[str]:
    """The order reviews are read in: the critics in the order debate.md pairs them, then any
    others by name. It does not depend on the order a merge left the file in."""
    place = {critic: n for n, critic in enumerate(pairs)}
    return sorted(critics, key=lambda c: (place.get(c, len(place)), c))


def ordered_reviews(data: dict[str, Any], pairs: Mapping[str, str]) -> dict[str, Any]:
    """`data` with its rounds in numeric order and each round's critics in `critic_order`."""
    rounds = data.get("rounds", {})
    data["rounds"] = {
        number: {c: rounds[number][c] for c in critic_order(rounds[number], pairs)}
        for number in sorted(rounds, key=int)
    }
    return data


def render_reviews(data: Mapping[str, Any]) -> str:
    """reviews.json text: the layout every writer uses (2-space indent, final newline)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
