"""Reading an eval back: each method's answer to each question, its calls and cost, and the
results files. Everything is read from the eval folder and its debates, through the
safe-read layer (an eval folder may come from someone else's repository)."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.accounting import BASELINE_CALLER, SYNTHESIS_CALLER
from dreamcontext_council.evaluation.folder import MATCH, METHODS, EvalFolder, debate_usage
from dreamcontext_council.evaluation.solo import SAMPLE_CALLER, stance_of
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_json, atomic_write_text, read_text
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.eval_scores import majority, plain_majority
from dreamcontext_council.rules.eval_set import EvalQuestion, is_right
from dreamcontext_council.rules.eval_stats import weighted_vote
from dreamcontext_council.rules.usage import calls_of

# -- reading the answers back ------------------------------------------------------------


def method_answers(
    root: Root, folder: EvalFolder, question: EvalQuestion, samples: object
) -> dict[str, str | None]:
    """Each method's answer to one question, as written (None: no answer); `samples` is
    the eval's setting (a number, or `match`)."""
    debate_id = folder.debates().get(question.id)
    answers: dict[str, str | None] = dict.fromkeys(METHODS[:4])
    if debate_id is None:
        return answers
    files = DebateFiles(root, debate_id)
    verdicts = files.verdicts()
    text_of = (lambda key: key) if question.options else verdicts.label
    if str(files.debate().status) == "complete":
        last = verdicts.round(verdicts.last_round())
        lead = metrics.leading(last)
        answers["council"] = text_of(lead) if lead else None
        weighted = weighted_vote(last)
        answers["weighted"] = text_of(weighted) if weighted else None
    vote = majority(verdicts.round(1))
    answers["vote"] = text_of(vote) if vote else None
    solo = folder.solo_answer(question.id)
    answers["solo"] = (
        stance_of(read_text(solo, within=folder.path), question) if solo.is_file() else None
    )
    if samples:
        drawn = [
            stance_of(read_text(p, within=folder.path), question)
            for n in range(1, folder.sample_count(question.id, samples) + 1)
            if (p := folder.sample_answer(question.id, n)).is_file()
        ]
        answers["self-consistency"] = plain_majority(drawn)
    return answers


def method_usage(root: Root, folder: EvalFolder, qid: str) -> dict[str, dict[str, float]]:
    """Calls, tokens and cost per method for one question, from its debate's usage.jsonl.

    The majority vote makes no call of its own: it reads the council's round 1, so its
    figures are those of the round-1 persona calls (what a vote alone would cost). The
    weighted vote reads the last round: its figures are the council's less the synthesis.
    """
    debate_id = folder.debates().get(qid)
    totals = {m: {"calls": 0.0, "tokens": 0.0, "cost_usd": 0.0} for m in METHODS}
    if debate_id is None:
        return totals
    for record in calls_of(debate_usage(DebateFiles(root, debate_id))):
        who = record.get("persona")
        method = (
            "solo"
            if who == BASELINE_CALLER
            else "self-consistency"
            if who == SAMPLE_CALLER
            else "council"
        )
        opening = method == "council" and record.get("round") == 1 and not str(who).startswith("(")
        counted_as = [method]
        if opening:
            counted_as.append("vote")
        if method == "council" and who != SYNTHESIS_CALLER:
            counted_as.append("weighted")
        for counted in counted_as:
            totals[counted]["calls"] += 1
            totals[counted]["tokens"] += sum(
                float(record.get(name) or 0)
                for name in (
                    "input_tokens",
                    "cache_write_tokens",
                    "cache_read_tokens",
                    "output_tokens",
                )
            )
            totals[counted]["cost_usd"] += float(record.get("cost_usd") or 0)
    return totals


def stand_in_calls(root: Root, folder: EvalFolder) -> tuple[int, int]:
    """How many of the eval's calls the scripted stand-in answered, and how many calls
    there were, from each question's debate's usage.jsonl."""
    scripted = total = 0
    for debate_id in folder.debates().values():
        for record in calls_of(debate_usage(DebateFiles(root, debate_id))):
            total += 1
            scripted += record.get("provider") == "scripted"
    return scripted, total


def question_rows(
    root: Root,
    folder: EvalFolder,
    questions: list[EvalQuestion],
    answer_type: str,
    samples: object,
) -> list[dict[str, Any]]:
    """One row per question: its debate, each method's answer and whether it is right."""
    debates = folder.debates()
    rows = []
    for question in questions:
        answers = method_answers(root, folder, question, samples)
        rows.append(
            {
                "id": question.id,
                "debate": debates.get(question.id),
                "answer": question.answer,
                "answers": answers,
                "right": {m: is_right(a, question, answer_type) for m, a in answers.items()},
                "usage": method_usage(root, folder, question.id),
                "wall_s": {k: round(v, 3) for k, v in folder.timings(question.id).items()},
                "samples": folder.sample_count(question.id, samples) if samples else 0,
            }
        )
    return rows


def write_results(root: Root, folder: EvalFolder, total_wall_s: float) -> dict[str, Any]:
    """results.json, results.md and accuracy-cost.svg from what the folder holds."""
    from dreamcontext_council.evaluation.evidence import evidence
    from dreamcontext_council.rules.eval_scores import method_summary
    from dreamcontext_council.views.eval_evidence import evidence_markdown
    from dreamcontext_council.views.eval_results import (
        accuracy_cost_svg,
        results_markdown,
        stand_in_line,
    )

    settings = folder.settings()
    questions = folder.questions()
    samples = settings.get("samples") if settings.get("samples") == MATCH else _count(settings)
    answer_type = str(settings.get("answer_type") or "exact")
    methods = [m for m in METHODS if m != "self-consistency" or samples]
    rows = question_rows(root, folder, questions, answer_type, samples)
    summary = method_summary(rows, methods)
    scripted, calls = stand_in_calls(root, folder)
    results = {
        "id": folder.id,
        "answer_type": answer_type,
        "questions": len(rows),
        "samples": samples,
        "calls": calls,
        "stand_in_calls": scripted,
        "wall_s_this_run": round(total_wall_s, 3),
        "methods": summary,
        **evidence(root, folder, questions, answer_type, rows, summary),
        "rows": rows,
    }
    atomic_write_json(folder.path / "results.json", results, within=root.path)
    atomic_write_text(
        folder.path / "results.md",
        results_markdown(
            folder.id,
            summary,
            rows,
            answer_type,
            stand_in_line(scripted, calls),
            evidence_markdown(results),
        ),
        within=root.path,
    )
    atomic_write_text(
        folder.path / "accuracy-cost.svg", accuracy_cost_svg(summary), within=root.path
    )
    return results


def _count(settings: dict[str, Any]) -> int:
    value = settings.get("samples")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
