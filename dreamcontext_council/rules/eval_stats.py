"""The statistics that compare the council with a vote at equal cost: pure functions.

- `effective_votes`: Kish's effective number n / (1 + (n-1)·ρ̄) from the seats' correctness.
- `round_flips`: persona answers that moved right→wrong and wrong→right between two rounds,
  and who moved them (the peer that cross-examined them, or the majority).
- `recalibrated_weight` and `weighted_vote`: ReConcile's confidence-weighted vote.
- `paired_bootstrap` and `mcnemar`: the paired difference of two methods on the same questions.
- `matched_samples`: how many self-consistency samples a council's spend affords.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from dreamcontext_council.rules.eval_scores import majority
from dreamcontext_council.rules.verdicts import Verdict

BOOTSTRAP_SEED = 20240601
BOOTSTRAP_RESAMPLES = 10_000
MAX_MATCHED_SAMPLES = 50
MAJORITY = "(majority)"
UNATTRIBUTED = "(own)"

# -- effective votes ---------------------------------------------------------------------


def correlation(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Pearson's correlation of two correctness records over the same questions.

    Where it is undefined (a record that never varies), two records that never differ count
    as 1 (the seats are one vote) and any other pair as 0 (no co-variation to measure).
    """
    if len(a) != len(b):
        raise ValueError("correctness records must cover the same questions")
    n = len(a)
    if n == 0:
        return 0.0
    if list(a) == list(b):
        return 1.0
    mean_a, mean_b = sum(a) / n, sum(b) / n
    var_a = sum((x - mean_a) ** 2 for x in a)
    var_b = sum((y - mean_b) ** 2 for y in b)
    if var_a == 0 or var_b == 0:
        return 0.0
    cov = sum((x - mean_a) * (y - mean_b) for x, y in zip(a, b, strict=True))
    return cov / math.sqrt(var_a * var_b)


class EffectiveVotes(NamedTuple):
    seats: int
    mean_correlation: float
    effective: float


def effective_votes(correct: Mapping[str, Sequence[bool]]) -> EffectiveVotes:
    """Kish's effective number of independent votes among the seats.

    n / (1 + (n-1)·ρ̄), with ρ̄ the mean pairwise correlation of the seats' correctness
    (`correlation`); a negative ρ̄ counts as 0, so the figure stays between 1 and n.
    """
    seats = list(correct)
    n = len(seats)
    if n < 2:
        return EffectiveVotes(n, 1.0 if n else 0.0, float(n))
    pairs = list(itertools.combinations(seats, 2))
    rho = sum(correlation(correct[a], correct[b]) for a, b in pairs) / len(pairs)
    return EffectiveVotes(n, rho, n / (1 + (n - 1) * max(0.0, rho)))


def model_family(provider: str, model: str) -> str:
    """The family a seat's model belongs to: `anthropic:claude`, `openai:gpt`, `openai:o`;
    a `command:` program is a family of its own (its whole command line)."""
    if provider in ("anthropic", "openai"):
        head = re.match(r"[A-Za-z]+", model)
        return f"{provider}:{head.group(0).lower() if head else model}"
    if provider == "command":
        return f"command:{model}"
    return provider


# -- what the rounds did -----------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """One persona's change of stance between two rounds."""

    round: int
    persona: str
    by: str  # the peer that cross-examined it, MAJORITY, or UNATTRIBUTED
    before_right: bool
    after_right: bool


def round_moves(
    number: int,
    before: Mapping[str, Verdict],
    after: Mapping[str, Verdict],
    critics: Mapping[str, str],
    right: set[str],
) -> list[Move]:
    """Every persona whose stance changed from round `number - 1` to round `number`.

    `critics` maps a persona to the peer that cross-examined it; `right` holds the stances
    that count as right. A move is put down to that peer when the persona took the stance
    the peer held in the round before, else to the majority when it took that round's
    majority stance, else to the persona itself.
    """
    lead = majority(before)
    moves = []
    for persona, now in after.items():
        then = before.get(persona)
        if then is None or then.stance == now.stance:
            continue
        critic = critics.get(persona)
        held = before.get(critic) if critic else None
        if critic and held is not None and held.stance == now.stance:
            by = critic
        elif now.stance == lead:
            by = MAJORITY
        else:
            by = UNATTRIBUTED
        moves.append(Move(number, persona, by, then.stance in right, now.stance in right))
    return moves


class Flips(NamedTuple):
    right_to_wrong: int
    wrong_to_right: int
    wrong_to_wrong: int


def count_flips(moves: Sequence[Move]) -> Flips:
    """How many moves went right→wrong, wrong→right, and from one wrong stance to another."""
    return Flips(
        sum(1 for m in moves if m.before_right and not m.after_right),
        sum(1 for m in moves if not m.before_right and m.after_right),
        sum(1 for m in moves if not m.before_right and not m.after_right),
    )


# -- the weighted vote -------------------------------------------------------------------


def recalibrated_weight(conviction: int) -> float:
    """ReConcile's recalibrated confidence (Chen et al. 2024) for a conviction of 0-100:
    1.0 at 100, 0.8 from 90, 0.5 from 80, 0.3 above 60, else 0.1."""
    if conviction >= 100:
        return 1.0
    if conviction >= 90:
        return 0.8
    if conviction >= 80:
        return 0.5
    if conviction > 60:
        return 0.3
    return 0.1


def weighted_vote(verdicts: Mapping[str, Verdict]) -> str | None:
    """The stance with the most recalibrated conviction (`recalibrated_weight`); a tie goes
    to more personas, then the alphabetically first stance."""
    totals: dict[str, tuple[float, int]] = {}
    for verdict in verdicts.values():
        weight, heads = totals.get(verdict.stance, (0.0, 0))
        totals[verdict.stance] = (weight + recalibrated_weight(verdict.conviction), heads + 1)
    if not totals:
        return None
    return min(totals, key=lambda s: (-round(totals[s][0], 9), -totals[s][1], s))


# -- paired comparisons ------------------------------------------------------------------


class PairedDifference(NamedTuple):
    difference: float  # accuracy of the first method minus the second's, 0..1 shares
    low: float
    high: float
    first_only: int  # questions only the first got right
    second_only: int
    p_value: float  # McNemar's exact two-sided test


def mcnemar(first_only: int, second_only: int) -> float:
    """McNemar's exact two-sided p-value for the discordant pairs (binomial at one half)."""
    n = first_only + second_only
    if n == 0:
        return 1.0
    k = min(first_only, second_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def _percentile(sorted_values: Sequence[float], share: float) -> float:
    """The `share` percentile of sorted values (the nearest rank at or above it)."""
    index = max(0, math.ceil(share * len(sorted_values)) - 1)
    return sorted_values[min(index, len(sorted_values) - 1)]


def paired_bootstrap(
    first: Sequence[bool],
    second: Sequence[bool],
    *,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> PairedDifference:
    """The difference in accuracy of two methods on the same questions, with the 95%
    percentile interval of `resamples` paired bootstrap resamples drawn with `seed`."""
    if len(first) != len(second):
        raise ValueError("both methods must answer the same questions")
    n = len(first)
    diffs = [int(a) - int(b) for a, b in zip(first, second, strict=True)]
    first_only, second_only = diffs.count(1), diffs.count(-1)
    p_value = mcnemar(first_only, second_only)
    if n == 0:
        return PairedDifference(0.0, 0.0, 0.0, 0, 0, 1.0)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    return PairedDifference(
        sum(diffs) / n,
        _percentile(means, 0.025),
        _percentile(means, 0.975),
        first_only,
        second_only,
        p_value,
    )


def _points(share: float) -> str:
    value = round(share * 100)
    return f"{'−' if value < 0 else ''}{abs(value)}"


def interval_points(low: float, high: float) -> str:
    """An interval of shares as whole points: `[2, 10]`, `[−4, 8]`."""
    return f"[{_points(low)}, {_points(high)}]"


def signed_points(share: float) -> str:
    """A share as whole points with its sign: `+6`, `−4`, `0`."""
    value = round(share * 100)
    return f"{'+' if value > 0 else '−' if value < 0 else ''}{abs(value)}"


def conclusion(
    title: str, paired: PairedDifference, ratio: float | None, unit: str = "the cost"
) -> str:
    """One line: whether the council beat `title`, by how many points [interval], and at
    what multiple of its cost (`ratio`: the council's spend over the method's)."""
    interval = interval_points(paired.low, paired.high)
    if paired.low > 0:
        said = f"the council beat {title} by {_points(paired.difference)} points {interval}"
    elif paired.high < 0:
        said = f"the council lost to {title} by {_points(-paired.difference)} points {interval}"
    else:
        said = f"the council and {title} did not differ: {signed_points(paired.difference)} points {interval}"
    if ratio is None:
        return f"{said} ({title} spent nothing to compare with)."
    return f"{said} at {ratio:.1f}× {unit}."


# -- equal budgets -----------------------------------------------------------------------


def matched_samples(
    council_spend: float, sample_spend: float, cap: int = MAX_MATCHED_SAMPLES
) -> int:
    """How many samples of `sample_spend` each the council's `council_spend` affords: the
    whole number that fits, at least 1 and at most `cap`."""
    if sample_spend <= 0 or not math.isfinite(council_spend / sample_spend):
        return 1
    return max(1, min(cap, math.floor(council_spend / sample_spend + 1e-9)))
