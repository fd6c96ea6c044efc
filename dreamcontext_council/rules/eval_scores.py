"""Scores of an eval: accuracy per method with its 95% Wilson interval, and majority votes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from dreamcontext_council.rules.verdicts import Verdict

Z_95 = 1.959963984540054


class Interval(NamedTuple):
    low: float
    high: float


def wilson(right: int, total: int, z: float = Z_95) -> Interval:
    """The Wilson score interval of `right` successes in `total` tries (0..1 when none)."""
    if total <= 0:
        return Interval(0.0, 1.0)
    if not 0 <= right <= total:
        raise ValueError(f"{right} right answers out of {total} is not a proportion")
    p = right / total
    z2 = z * z
    centre = (p + z2 / (2 * total)) / (1 + z2 / total)
    half = (z / (1 + z2 / total)) * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def majority(verdicts: Mapping[str, Verdict]) -> str | None:
    """The stance most personas took (one vote each); a tie goes to more conviction, then
    the alphabetically first stance."""
    votes: dict[str, tuple[int, int]] = {}
    for verdict in verdicts.values():
        count, conviction = votes.get(verdict.stance, (0, 0))
        votes[verdict.stance] = (count + 1, conviction + verdict.conviction)
    if not votes:
        return None
    return min(votes, key=lambda s: (-votes[s][0], -votes[s][1], s))


def plain_majority(answers: list[str | None]) -> str | None:
    """The most frequent answer among samples (None ones left out); ties to the first seen."""
    counts: dict[str, int] = {}
    for answer in answers:
        if answer is not None:
            counts[answer] = counts.get(answer, 0) + 1
    if not counts:
        return None
    best = max(counts.values())
    return next(a for a in counts if counts[a] == best)


def method_summary(rows: list[dict[str, Any]], methods: list[str]) -> dict[str, dict[str, Any]]:
    """Per method: right answers, accuracy with its 95% interval, calls, tokens, cost, wall;
    tokens and cost per question, and accuracy per dollar (None when it cost nothing)."""
    summary: dict[str, dict[str, Any]] = {}
    for method in methods:
        right = sum(1 for row in rows if row["right"].get(method))
        total = len(rows)
        low, high = wilson(right, total)
        usage = [row["usage"].get(method, {}) for row in rows]
        tokens = sum(u.get("tokens", 0) for u in usage)
        cost = sum(u.get("cost_usd", 0.0) for u in usage)
        per_question = cost / total if total else 0.0
        summary[method] = {
            "right": right,
            "questions": total,
            "accuracy": round(right / total, 4) if total else 0.0,
            "interval_95": [round(low, 4), round(high, 4)],
            "calls": int(sum(u.get("calls", 0) for u in usage)),
            "tokens": int(tokens),
            "cost_usd": round(cost, 6),
            "wall_s": round(sum(row["wall_s"].get(method, 0.0) for row in rows), 3),
            "tokens_per_question": round(tokens / total, 1) if total else 0.0,
            "cost_per_question": round(per_question, 6),
            "accuracy_per_dollar": (
                round(right / total / per_question, 4) if total and per_question > 0 else None
            ),
        }
    return summary
