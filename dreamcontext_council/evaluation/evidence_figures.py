"""results.json's comparisons, rounds, effective votes and seats as the eval page shows them.

results.json may come from someone else's repository: each figure must be a finite number
in range, a method must be one the eval knows, a name is cut to one line, and each
comparison's sentence is written again from its checked numbers (the file's own text is
never shown). A section that does not check out is left off the page; `problem` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.evaluation.evidence import COMPARED_TITLES
from dreamcontext_council.evaluation.folder import METHODS
from dreamcontext_council.rules.eval_stats import (
    PairedDifference,
    conclusion,
    interval_points,
    signed_points,
)
from dreamcontext_council.views.eval_names import one_line
from dreamcontext_council.views.eval_results import METHOD_TITLES

NAME_CHARS = 60
FAMILY_CHARS = 200  # a `command:` family is its whole command line: cut only a long one
MAX_LINES = 500  # more seats, families or movers than this are not shown


class Unfit(ValueError):
    """A section of results.json that is not what the eval writes."""


def _number(value: Any, what: str, *, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise Unfit(f"no number for {what}")
    if not low <= value <= high:
        raise Unfit(f"{value} for {what}, out of range")
    return float(value)


def _count(value: Any, what: str) -> int:
    return int(_number(value, what))


def _name(value: Any, what: str, limit: int = NAME_CHARS) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Unfit(f"no name for {what}")
    return one_line(value, limit)


def _items(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list) or len(value) > MAX_LINES:
        raise Unfit(f"no list of {what}")
    return value


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Unfit(f"no figures for {what}")
    return value


@dataclass(frozen=True)
class Comparison:
    method: str
    title: str
    difference: float
    low: float
    high: float
    council_only: int
    method_only: int
    p_value: float
    ratio: float | None
    unit: str  # cost or tokens
    line: str

    @property
    def points(self) -> str:
        return signed_points(self.difference)

    @property
    def interval(self) -> str:
        return interval_points(self.low, self.high)


@dataclass(frozen=True)
class Evidence:
    """The checked sections; empty lists where results.json has none (an older file)."""

    comparisons: list[Comparison] = field(default_factory=list)
    seed: int = 0
    resamples: int = 0
    flips: list[tuple[int, int, int, int]] = field(default_factory=list)
    movers: list[tuple[int, str, str, str, int]] = field(default_factory=list)
    seats: int = 0
    effective: float = 0.0
    correlation: float = 0.0
    families: list[tuple[str, str, float, float]] = field(default_factory=list)
    seat_lines: list[tuple[str, str, int, int, int, float, float, float]] = field(
        default_factory=list
    )
    problem: str = ""


def _comparisons(data: dict[str, Any]) -> tuple[list[Comparison], int, int]:
    methods = _object(data.get("methods"), "the comparisons")
    found = []
    for method in METHODS:
        if method == "council" or method not in methods:
            continue
        c = _object(methods[method], f"the comparison with {method}")
        interval = c.get("interval_95")
        if not isinstance(interval, list) or len(interval) != 2:
            raise Unfit(f"no interval for the comparison with {method}")
        paired = PairedDifference(
            _number(c.get("difference"), f"{method} difference", low=-1, high=1),
            _number(interval[0], f"{method} interval", low=-1, high=1),
            _number(interval[1], f"{method} interval", low=-1, high=1),
            _count(c.get("council_only"), f"{method} council_only"),
            _count(c.get("method_only"), f"{method} method_only"),
            _number(c.get("mcnemar_p"), f"{method} mcnemar_p", high=1),
        )
        raw_ratio = c.get("cost_ratio")
        ratio = None if raw_ratio is None else _number(raw_ratio, f"{method} cost_ratio")
        unit = "cost" if c.get("ratio_of") == "cost_usd" else "tokens"
        title = COMPARED_TITLES.get(method, METHOD_TITLES[method])
        found.append(
            Comparison(
                method,
                METHOD_TITLES[method],
                paired.difference,
                paired.low,
                paired.high,
                paired.first_only,
                paired.second_only,
                paired.p_value,
                ratio,
                unit,
                conclusion(title, paired, ratio, f"the {unit}"),
            )
        )
    return found, _count(data.get("seed"), "the seed"), _count(data.get("resamples"), "resamples")


def _flips(data: dict[str, Any]) -> tuple[list[tuple[int, int, int, int]], list[Any]]:
    rounds = [
        (
            _count(r.get("round"), "a round"),
            _count(r.get("right_to_wrong"), "right_to_wrong"),
            _count(r.get("wrong_to_right"), "wrong_to_right"),
            _count(r.get("wrong_to_wrong"), "wrong_to_wrong"),
        )
        for r in (_object(x, "a round") for x in _items(data.get("rounds"), "rounds"))
    ]
    movers = []
    for item in _items(data.get("movers"), "movers"):
        m = _object(item, "a mover")
        direction = m.get("direction")
        if direction not in ("right→right", "right→wrong", "wrong→right", "wrong→wrong"):
            raise Unfit("a move with no direction")
        movers.append(
            (
                _count(m.get("round"), "a move's round"),
                _name(m.get("by"), "a mover"),
                _name(m.get("persona"), "a moved persona"),
                str(direction),
                _count(m.get("count"), "a move's count"),
            )
        )
    return rounds, movers


def read_evidence(parsed: dict[str, Any]) -> Evidence:
    """The sections of results.json past the method table, checked; an Evidence with a
    `problem` (and nothing else) when one of them does not check out."""
    if "comparisons" not in parsed:
        return Evidence()
    try:
        comparisons, seed, resamples = _comparisons(_object(parsed["comparisons"], "comparisons"))
        flips, movers = _flips(_object(parsed.get("flips"), "the rounds"))
        votes = _object(parsed.get("votes"), "the effective votes")
        seats = _count(votes.get("seats"), "seats")
        families = []
        for item in _items(votes.get("families"), "families"):
            f = _object(item, "a family")
            names = _items(f.get("seats"), "a family's seats")
            families.append(
                (
                    _name(f.get("family"), "a family", FAMILY_CHARS),
                    ", ".join(_name(n, "a seat") for n in names),
                    _number(f.get("mean_correlation"), "a family's correlation", low=-1, high=1),
                    _number(f.get("effective"), "a family's effective votes", high=seats),
                )
            )
        seat_lines = []
        for item in _items(parsed.get("seats"), "seats"):
            s = _object(item, "a seat")
            interval = s.get("interval_95")
            if not isinstance(interval, list) or len(interval) != 2:
                raise Unfit("no interval for a seat")
            seat_lines.append(
                (
                    _name(s.get("persona"), "a seat"),
                    _name(s.get("family") or "unknown", "a seat's family", FAMILY_CHARS),
                    _count(s.get("first_right"), "a seat's round 1"),
                    _count(s.get("right"), "a seat's right answers"),
                    _count(s.get("questions"), "a seat's questions"),
                    _number(interval[0], "a seat's interval", high=1),
                    _number(interval[1], "a seat's interval", high=1),
                    _number(s.get("cost_usd"), "a seat's cost"),
                )
            )
        return Evidence(
            comparisons,
            seed,
            resamples,
            flips,
            movers,
            seats,
            _number(votes.get("effective"), "effective votes", high=max(seats, 0)),
            _number(votes.get("mean_correlation"), "the mean correlation", low=-1, high=1),
            families,
            seat_lines,
        )
    except Unfit as exc:
        return Evidence(problem=str(exc))
