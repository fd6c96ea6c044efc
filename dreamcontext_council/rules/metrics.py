"""Figures derived from verdicts: leading stance, convergence, shifts, tallies."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from dreamcontext_council.rules.verdicts import Verdict, Verdicts


def _half_up(value: float) -> int:
    # The Node tool uses Math.round, which rounds halves up; Python's round() does not.
    return math.floor(value + 0.5)


def stance_totals(verdicts: Mapping[str, Verdict]) -> dict[str, int]:
    """Sum of conviction per stance."""
    totals: dict[str, int] = {}
    for verdict in verdicts.values():
        totals[verdict.stance] = totals.get(verdict.stance, 0) + verdict.conviction
    return totals


def leading(verdicts: Mapping[str, Verdict]) -> str | None:
    """The stance with the most conviction; ties go to the alphabetically first."""
    totals = stance_totals(verdicts)
    if not totals:
        return None
    return min(totals, key=lambda stance: (-totals[stance], stance))


def convergence(verdicts: Mapping[str, Verdict]) -> int:
    """Percent of all conviction that sits on the leading stance; 0 when there is none."""
    totals = stance_totals(verdicts)
    total = sum(totals.values())
    lead = leading(verdicts)
    if not total or lead is None:
        return 0
    return _half_up(100 * totals[lead] / total)


def shift(previous: Verdict | None, current: Verdict | None) -> str:
    """`·` no previous verdict, `↑ A→B` stance changed, `↓ 78→45` conviction fell by 10+, `=`."""
    if previous is None or current is None:
        return "·"
    if previous.stance != current.stance:
        return f"↑ {previous.stance}→{current.stance}"
    if previous.conviction - current.conviction >= 10:
        return f"↓ {previous.conviction}→{current.conviction}"
    return "="


@dataclass(frozen=True)
class Tally:
    """Personas and conviction behind one option."""

    key: str
    label: str
    count: int
    conviction: int


def tally(verdicts: Verdicts, number: int) -> list[Tally]:
    """Options in their order (new stances after), each with count and conviction in a round."""
    votes = verdicts.round(number)
    keys = [o["key"] for o in verdicts.options]
    keys += sorted({v.stance for v in votes.values()} - set(keys))
    return [
        Tally(
            key,
            verdicts.label(key),
            sum(1 for v in votes.values() if v.stance == key),
            sum(v.conviction for v in votes.values() if v.stance == key),
        )
        for key in keys
    ]


class RoundFigures(NamedTuple):
    """What a round's verdicts add up to."""

    round: int
    verdicts: dict[str, Verdict]
    convergence: int
    leading: str | None


def round_figures(verdicts: Verdicts) -> list[RoundFigures]:
    """One entry per round that has verdicts, in order."""
    return [
        RoundFigures(
            n, dict(verdicts.round(n)), convergence(verdicts.round(n)), leading(verdicts.round(n))
        )
        for n in sorted(verdicts.rounds)
        if verdicts.round(n)
    ]
