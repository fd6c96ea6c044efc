"""The statistics of `council eval` on inputs whose figures are worked out by hand: effective
votes, moves between rounds, the weighted vote, the paired bootstrap and McNemar's test,
the one-line conclusion and the number of samples an equal budget affords."""

from __future__ import annotations

import math

import pytest

from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.eval_stats import (
    MAJORITY,
    UNATTRIBUTED,
    Flips,
    Move,
    PairedDifference,
    conclusion,
    correlation,
    count_flips,
    effective_votes,
    matched_samples,
    mcnemar,
    model_family,
    paired_bootstrap,
    recalibrated_weight,
    round_moves,
    weighted_vote,
)
from dreamcontext_council.rules.verdicts import Verdict

T, F = True, False


def test_correlation_of_correctness_and_its_undefined_cases() -> None:
    assert correlation([T, F, T, F], [T, F, T, F]) == 1.0
    assert correlation([T, T, F, F], [F, F, T, T]) == -1.0
    assert correlation([T, T, F, F], [T, F, T, F]) == 0.0
    # mean .25 and .5: cov .5, variances .75 and 1, so 1/sqrt(3).
    assert correlation([T, F, F, F], [T, T, F, F]) == pytest.approx(1 / math.sqrt(3))
    # A record that never varies: identical records are one vote, any other pair is 0.
    assert correlation([T, T, T], [T, T, T]) == 1.0
    assert correlation([T, T, T], [F, F, F]) == 0.0
    assert correlation([T, T, T], [T, F, T]) == 0.0
    with pytest.raises(ValueError):
        correlation([T], [T, F])


def test_effective_votes_of_a_right_seat_its_copy_a_wrong_seat_and_a_flipper() -> None:
    seats = {
        "right": [T, T, T, T],
        "copier": [T, T, T, T],
        "wrong": [F, F, F, F],
        "flipper": [T, F, T, F],
    }
    # Six pairs: right-copier 1, the five others 0; 4 / (1 + 3/6) = 8/3.
    votes = effective_votes(seats)
    assert votes.seats == 4
    assert votes.mean_correlation == pytest.approx(1 / 6)
    assert votes.effective == pytest.approx(8 / 3)
    assert effective_votes({"a": [T, F], "b": [T, F], "c": [T, F]}).effective == 1.0
    assert effective_votes({"a": [T, T, F, F], "b": [T, F, T, F]}).effective == 2.0
    # A negative mean correlation counts as 0: never more votes than seats.
    opposed = effective_votes({"a": [T, T, F, F], "b": [F, F, T, T]})
    assert opposed.mean_correlation == -1.0 and opposed.effective == 2.0
    assert effective_votes({"a": [T]}).effective == 1.0
    assert effective_votes({}).effective == 0.0


def test_model_families() -> None:
    assert model_family("anthropic", "claude-sonnet-5-5") == "anthropic:claude"
    assert model_family("anthropic", "claude-haiku-5-5") == "anthropic:claude"
    assert model_family("openai", "gpt-4o-mini") == "openai:gpt"
    assert model_family("openai", "o3-mini") == "openai:o"
    assert model_family("command", "python3 stub.py") == "command:python3 stub.py"
    assert model_family("scripted", "") == "scripted"


def v(stance: str, conviction: int = 50) -> Verdict:
    return Verdict(stance, conviction, "h")


def test_moves_are_put_down_to_the_cross_examiner_the_majority_or_the_persona() -> None:
    before = {"a": v("A"), "b": v("A"), "c": v("B"), "d": v("C"), "e": v("D"), "f": v("A")}
    after = {"a": v("A"), "b": v("B"), "c": v("A"), "d": v("E"), "e": v("A"), "f": v("C")}
    # b is cross-examined by c, who held B; c by d (C), so c's move to the majority A is the
    # majority's; d by nobody; e by a (who held A, also the majority): a comes first.
    critics = {"b": "c", "c": "d", "e": "a", "f": "d"}
    moves = round_moves(2, before, after, critics, right={"A"})
    assert moves == [
        Move(2, "b", "c", True, False),
        Move(2, "c", MAJORITY, False, True),
        Move(2, "d", UNATTRIBUTED, False, False),
        Move(2, "e", "a", False, True),
        Move(2, "f", "d", True, False),
    ]
    assert count_flips(moves) == Flips(right_to_wrong=2, wrong_to_right=2, wrong_to_wrong=1)
    # A persona with no answer the round before has not moved.
    assert round_moves(3, {}, after, critics, right={"A"}) == []


def test_recalibrated_weights_follow_reconcile() -> None:
    weights = {c: recalibrated_weight(c) for c in (100, 99, 90, 89, 80, 79, 61, 60, 0)}
    assert weights == {
        100: 1.0,
        99: 0.8,
        90: 0.8,
        89: 0.5,
        80: 0.5,
        79: 0.3,
        61: 0.3,
        60: 0.1,
        0: 0.1,
    }


def test_the_weighted_vote_lets_a_sure_seat_outweigh_lukewarm_ones() -> None:
    last = {"right": v("9", 60), "copier": v("9", 60), "flipper": v("9", 85), "wrong": v("10", 100)}
    # 0.1 + 0.1 + 0.5 = 0.7 for 9 against 1.0 for 10; summed conviction (the council's
    # answer) is 205 against 100.
    assert weighted_vote(last) == "10"
    assert metrics.leading(last) == "9"
    last["wrong"] = v("10", 70)  # 0.3 now
    assert weighted_vote(last) == "9"
    # A tie in weight goes to more personas, then the first stance.
    assert weighted_vote({"a": v("X", 100), "b": v("Y", 80), "c": v("Y", 85)}) == "Y"
    assert weighted_vote({"a": v("Y", 90), "b": v("X", 90)}) == "X"
    assert weighted_vote({}) is None


def test_mcnemar_exact_p_values() -> None:
    assert mcnemar(0, 0) == 1.0
    assert mcnemar(2, 0) == 0.5
    assert mcnemar(1, 1) == 1.0
    assert mcnemar(5, 1) == pytest.approx(14 / 64)  # 2 * (1 + 6) / 2**6
    assert mcnemar(0, 10) == pytest.approx(2 / 1024)


def test_paired_bootstrap_intervals_worked_out_by_hand() -> None:
    # Differences 1, 0, 1, 0: a resample's mean is Binomial(4, 1/2) / 4, with 1/16 at 0 and
    # at 1, so the 2.5% and 97.5% points are 0 and 1.
    paired = paired_bootstrap([T, T, T, T], [F, T, F, T])
    assert paired == PairedDifference(0.5, 0.0, 1.0, 2, 0, 0.5)
    same = paired_bootstrap([T, F, T], [T, F, T])
    assert same == PairedDifference(0.0, 0.0, 0.0, 0, 0, 1.0)
    assert paired_bootstrap([T, T, T], [F, F, F]) == PairedDifference(1.0, 1.0, 1.0, 3, 0, 0.25)
    assert paired_bootstrap([F, F], [T, T]) == PairedDifference(-1.0, -1.0, -1.0, 0, 2, 0.5)
    assert paired_bootstrap([], []) == PairedDifference(0.0, 0.0, 0.0, 0, 0, 1.0)
    with pytest.raises(ValueError):
        paired_bootstrap([T], [])


def test_the_bootstrap_is_reproducible_and_close_to_the_normal_interval() -> None:
    first = [i % 3 != 0 for i in range(300)]  # 200 right
    second = [i % 2 == 0 for i in range(300)]  # 150 right
    one = paired_bootstrap(first, second)
    assert paired_bootstrap(first, second) == one  # the same seed, the same interval
    assert one.difference == pytest.approx(50 / 300)
    # The differences are +1 on 100 questions, -1 on 50, 0 on 150: sd of the mean
    # sqrt((150/300 - (1/6)^2) / 300) = 0.0373, so about ±0.073 around 0.167.
    assert one.low == pytest.approx(50 / 300 - 0.0731, abs=0.01)
    assert one.high == pytest.approx(50 / 300 + 0.0731, abs=0.01)
    assert (one.first_only, one.second_only) == (100, 50)


def test_the_conclusion_says_who_won_by_how_much_at_what_cost() -> None:
    beat = PairedDifference(0.06, 0.02, 0.10, 5, 2, 0.45)
    assert (
        conclusion("the round-1 vote", beat, 3.1)
        == "the council beat the round-1 vote by 6 points [2, 10] at 3.1× the cost."
    )
    lost = PairedDifference(-0.2, -0.35, -0.05, 1, 5, 0.2)
    assert (
        conclusion("self-consistency", lost, 1.04, "the tokens")
        == "the council lost to self-consistency by 20 points [−35, −5] at 1.0× the tokens."
    )
    even = PairedDifference(0.5, 0.0, 1.0, 2, 0, 0.5)
    assert (
        conclusion("the solo answer", even, 16.6)
        == "the council and the solo answer did not differ: +50 points [0, 100] at 16.6× the cost."
    )
    assert (
        conclusion("the solo answer", PairedDifference(0, 0, 0, 0, 0, 1), None)
        == "the council and the solo answer did not differ: 0 points [0, 0] (the solo answer "
        "spent nothing to compare with)."
    )


def test_matched_samples_fit_the_councils_spend() -> None:
    assert matched_samples(11980, 745) == 16  # 16.08
    assert matched_samples(1000, 250) == 4  # exactly 4, not 3 by rounding
    assert matched_samples(0.30, 0.10) == 3  # 2.9999999999999996 in floating point
    assert matched_samples(100, 300) == 1  # at least one sample
    assert matched_samples(0, 0) == 1
    assert matched_samples(10_000, 1) == 50  # at most the cap
    assert matched_samples(10_000, 1, cap=8) == 8
