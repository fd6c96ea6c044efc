"""reviews.json: the cross-examination scores critics gave their peers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.folder.storage import atomic_write_json
from dreamcontext_council.rules.debate import parse_round


def load_reviews(files: DebateFiles) -> dict[str, Any]:
    """`{"rounds": {"2": {"critic": {"target": "peer", "score": 7}}}}`; missing reads empty.

    A round key that is not a round from 1 to MAX_ROUNDS is a FormatError."""
    path = files.paths.reviews
    if not path.exists():
        return {"rounds": {}}
    try:
        data = json.loads(files.read(path))
    except ValueError:
        return {"rounds": {}}
    if not isinstance(data, dict) or not isinstance(data.get("rounds"), dict):
        return {"rounds": {}}
    for number in data["rounds"]:
        parse_round(str(number), "reviews.json")
    return data


def record_review(
    files: DebateFiles, number: int, critic: str, target: str, score: float | None
) -> None:
    """Store one critic's score of its peer (last write wins)."""
    record_reviews(files, number, {critic: (target, score)})


def record_reviews(
    files: DebateFiles,
    number: int,
    reviews: Mapping[str, tuple[str, float | None]],
    *,
    whole_round: bool = False,
) -> None:
    """Store critics' scores of their peers, critic → (target, score), in one write.

    With `whole_round`, `reviews` is every review of the round, in its order: the round's
    record is replaced, so it reads as one written at once."""
    if not reviews:
        return
    with files.lock():
        data = load_reviews(files)
        if whole_round:
            data["rounds"][str(number)] = {}
        by_critic = data["rounds"].setdefault(str(number), {})
        for critic, (target, score) in reviews.items():
            by_critic[critic] = {"target": target, "score": score}
        data["rounds"] = dict(sorted(data["rounds"].items(), key=lambda kv: int(kv[0])))
        atomic_write_json(files.paths.reviews, data, within=files.root.path)


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
