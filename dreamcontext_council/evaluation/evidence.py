"""What an eval shows beyond accuracy: the council against each method on the same
questions, what the rounds did, how many independent votes the seats are, and which seat
earns its cost.

Read from each question's debate (verdicts.json, debate.md's cross-examination pairs,
usage.jsonl) and from the rows of results.json; the statistics are the pure functions of
`rules.eval_stats`. Every figure is a plain number or a short name, so results.json stays
data a page can check.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.evaluation.folder import EvalFolder, debate_usage
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.eval_scores import wilson
from dreamcontext_council.rules.eval_set import EvalQuestion, is_right
from dreamcontext_council.rules.eval_stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    Move,
    conclusion,
    count_flips,
    effective_votes,
    model_family,
    paired_bootstrap,
    round_moves,
)
from dreamcontext_council.rules.reviews import recorded_pairs
from dreamcontext_council.rules.usage import calls_of
from dreamcontext_council.views.eval_results import METHOD_TITLES

COMPARED_TITLES = {
    "solo": "the solo answer",
    "vote": "the round-1 vote",
    "weighted": "the weighted vote",
    "self-consistency": "self-consistency",
}


@dataclass
class SeatRecord:
    """One seat over the questions: right or not in round 1 and at the end, and its spend."""

    family: str = ""
    first: list[bool] = field(default_factory=list)
    final: list[bool] = field(default_factory=list)
    calls: int = 0
    tokens: float = 0.0
    cost_usd: float = 0.0


@dataclass
class CouncilRecord:
    """What the debates of an eval say, seat by seat and round by round."""

    seats: dict[str, SeatRecord] = field(default_factory=dict)
    moves: list[Move] = field(default_factory=list)
    rounds: set[int] = field(default_factory=set)
    questions: int = 0


def _spend(files: DebateFiles, seats: dict[str, SeatRecord]) -> dict[str, str]:
    """Add each seat's calls, tokens and cost; the family of the model each seat ran."""
    families: dict[str, str] = {}
    for record in calls_of(debate_usage(files)):
        who = str(record.get("persona") or "")
        if who.startswith("(") or not who:
            continue
        seat = seats.setdefault(who, SeatRecord())
        seat.calls += 1
        seat.tokens += sum(
            float(record.get(k) or 0)
            for k in ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")
        )
        seat.cost_usd += float(record.get("cost_usd") or 0)
        families.setdefault(
            who, model_family(str(record.get("provider") or ""), str(record.get("model") or ""))
        )
    return families


def council_record(
    root: Root, folder: EvalFolder, questions: list[EvalQuestion], answer_type: str
) -> CouncilRecord:
    """Every complete debate of the eval: each seat's round-1 and final correctness, its
    spend and model family, and every change of stance between rounds."""
    record = CouncilRecord()
    debates = folder.debates()
    complete = []
    for question in questions:
        debate_id = debates.get(question.id)
        if debate_id is None:
            continue
        files = DebateFiles(root, debate_id)
        debate = files.debate()
        if str(debate.status) != "complete":
            continue
        complete.append((question, files, debate))
    for question, files, debate in complete:
        verdicts = files.verdicts()
        text_of = (lambda key: key) if question.options else verdicts.label
        stances = {v.stance for r in verdicts.rounds.values() for v in r.values()}
        right = {s for s in stances if is_right(text_of(s), question, answer_type)}
        last = verdicts.last_round()
        for slug in verdicts.round(1):
            record.seats.setdefault(slug, SeatRecord())
        families = _spend(files, record.seats)
        for slug, seat in record.seats.items():
            seat.family = seat.family or families.get(slug, "")
            first = verdicts.round(1).get(slug)
            final = verdicts.round(last).get(slug)
            # A seat that gave no answer counts as wrong, as a method with no answer does.
            seat.first.append(first is not None and first.stance in right)
            seat.final.append(final is not None and final.stance in right)
        critics = {peer: critic for critic, peer in recorded_pairs(debate.meta).items()}
        for number in range(2, last + 1):
            record.rounds.add(number)
            record.moves += round_moves(
                number, verdicts.round(number - 1), verdicts.round(number), critics, right
            )
        record.questions += 1
    # A seat first seen on a later question is wrong on those before it.
    for seat in record.seats.values():
        missing = record.questions - len(seat.first)
        seat.first[:0] = [False] * missing
        seat.final[:0] = [False] * missing
    return record


def votes_summary(record: CouncilRecord) -> dict[str, Any]:
    """Effective votes of the whole council and within each model family (round 1)."""
    whole = effective_votes({slug: s.first for slug, s in record.seats.items()})
    families: dict[str, list[str]] = {}
    for slug, seat in record.seats.items():
        families.setdefault(seat.family or "unknown", []).append(slug)
    by_family = []
    for family, slugs in sorted(families.items()):
        votes = effective_votes({slug: record.seats[slug].first for slug in slugs})
        by_family.append(
            {
                "family": family,
                "seats": sorted(slugs),
                "mean_correlation": round(votes.mean_correlation, 4),
                "effective": round(votes.effective, 4),
            }
        )
    return {
        "questions": record.questions,
        "seats": whole.seats,
        "mean_correlation": round(whole.mean_correlation, 4),
        "effective": round(whole.effective, 4),
        "families": by_family,
    }


def flips_summary(record: CouncilRecord) -> dict[str, Any]:
    """Per round: answers that moved right→wrong, wrong→right, wrong→wrong; and who moved
    whom, counted by (round, by, persona, direction)."""
    rounds = []
    for number in sorted(record.rounds):
        flips = count_flips([m for m in record.moves if m.round == number])
        rounds.append({"round": number, **flips._asdict()})
    movers = Counter(
        (m.round, m.by, m.persona, _direction(m.before_right, m.after_right)) for m in record.moves
    )
    return {
        "rounds": rounds,
        "movers": [
            {"round": r, "by": by, "persona": persona, "direction": direction, "count": n}
            for (r, by, persona, direction), n in sorted(movers.items())
        ],
    }


def _direction(before: bool, after: bool) -> str:
    return f"{'right' if before else 'wrong'}→{'right' if after else 'wrong'}"


def seats_summary(record: CouncilRecord) -> list[dict[str, Any]]:
    """Per seat: round-1 and final accuracy, the final's 95% Wilson interval, and spend."""
    seats = []
    for slug, seat in sorted(record.seats.items()):
        total = len(seat.final)
        right = sum(seat.final)
        low, high = wilson(right, total)
        seats.append(
            {
                "persona": slug,
                "family": seat.family,
                "first_right": sum(seat.first),
                "right": right,
                "questions": total,
                "accuracy": round(right / total, 4) if total else 0.0,
                "interval_95": [round(low, 4), round(high, 4)],
                "calls": seat.calls,
                "tokens": int(seat.tokens),
                "cost_usd": round(seat.cost_usd, 6),
            }
        )
    return seats


def comparisons(rows: list[dict[str, Any]], summary: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The council against each other method on the same questions: the paired difference
    in accuracy with its 95% bootstrap interval, McNemar's test, the cost ratio, one line."""
    council = summary.get("council")
    found: dict[str, Any] = {}
    if council is None:
        return {"seed": BOOTSTRAP_SEED, "resamples": BOOTSTRAP_RESAMPLES, "methods": found}
    ours = [bool(row["right"].get("council")) for row in rows]
    for method, figures in summary.items():
        if method == "council":
            continue
        theirs = [bool(row["right"].get(method)) for row in rows]
        paired = paired_bootstrap(ours, theirs)
        by_cost = council["cost_usd"] > 0 and figures["cost_usd"] > 0
        unit = "cost_usd" if by_cost else "tokens"
        ratio = council[unit] / figures[unit] if figures[unit] > 0 else None
        title = COMPARED_TITLES.get(method, METHOD_TITLES.get(method, method))
        found[method] = {
            "difference": round(paired.difference, 4),
            "interval_95": [round(paired.low, 4), round(paired.high, 4)],
            "council_only": paired.first_only,
            "method_only": paired.second_only,
            "mcnemar_p": round(paired.p_value, 4),
            "cost_ratio": round(ratio, 3) if ratio is not None else None,
            "ratio_of": unit,
            "conclusion": conclusion(title, paired, ratio, "the cost" if by_cost else "the tokens"),
        }
    return {"seed": BOOTSTRAP_SEED, "resamples": BOOTSTRAP_RESAMPLES, "methods": found}


def evidence(
    root: Root,
    folder: EvalFolder,
    questions: list[EvalQuestion],
    answer_type: str,
    rows: list[dict[str, Any]],
    summary: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """results.json's `comparisons`, `votes`, `flips` and `seats`."""
    record = council_record(root, folder, questions, answer_type)
    return {
        "comparisons": comparisons(rows, summary),
        "votes": votes_summary(record),
        "flips": flips_summary(record),
        "seats": seats_summary(record),
    }
