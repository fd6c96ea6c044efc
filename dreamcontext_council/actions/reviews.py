"""reviews.json on disk: the cross-examination scores critics gave their peers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.storage import atomic_write_json
from dreamcontext_council.rules.debate import parse_round
from dreamcontext_council.rules.reviews import ordered_reviews, recorded_pairs


def load_reviews(files: DebateFiles) -> dict[str, Any]:
    """`{"rounds": {"2": {"critic": {"target": "peer", "score": 7}}}}`; missing reads empty.

    Rounds come in numeric order and each round's critics in the order debate.md pairs
    them (then by name), whatever order a merge left the file in: what a prompt lists from
    it is the same on every machine. A round key that is not a round from 1 to MAX_ROUNDS
    is a FormatError."""
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
    if not all(isinstance(v, dict) for v in data["rounds"].values()):
        return {"rounds": {}}
    try:
        pairs = recorded_pairs(files.debate().meta)
    except (CouncilError, OSError, UnicodeDecodeError):
        pairs = {}
    return ordered_reviews(data, pairs)


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
