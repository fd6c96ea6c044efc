"""reviews.json: the cross-examination scores critics gave their peers."""

from __future__ import annotations

from typing import Any

# Read and written in actions/reviews.py, which `doctor` shares; named here for the engine.
from dreamcontext_council.actions.reviews import load_reviews as load_reviews
from dreamcontext_council.actions.reviews import record_review as record_review
from dreamcontext_council.actions.reviews import record_reviews as record_reviews


def answer_scores(data: dict[str, Any]) -> dict[tuple[str, int], float]:
    """Total score each reviewed answer received, by (persona, round).

    A review recorded in round N scores its target's round N-1 answer: round 2's
    cross-examinations score the round-1 answers they were given."""
    scores: dict[tuple[str, int], float] = {}
    for number, by_critic in data.get("rounds", {}).items():
        reviewed = int(number) - 1
        for entry in by_critic.values():
            score = entry.get("score")
            target = entry.get("target")
            if isinstance(score, int | float) and isinstance(target, str) and reviewed >= 1:
                key = (target, reviewed)
                scores[key] = scores.get(key, 0.0) + float(score)
    return scores
