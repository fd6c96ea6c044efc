"""results.md's sections beyond accuracy: the council against each method at its cost, what
the rounds did, the effective votes and each seat's record (docs/eval.md explains each)."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.rules.eval_stats import interval_points, signed_points
from dreamcontext_council.views.eval_results import METHOD_TITLES


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def comparison_lines(comparisons: dict[str, Any]) -> list[str]:
    """The paired comparison of the council with each method, one line each."""
    methods = comparisons.get("methods") or {}
    if not methods:
        return []
    lines = [
        "## The council against each method",
        "",
        "The same questions, paired: the council's accuracy minus the method's, in points, with "
        f"its 95% paired-bootstrap interval ({comparisons['resamples']:,} resamples, seed "
        f"{comparisons['seed']}); McNemar's exact test on the questions only one of them got "
        "right; and the council's spend over the method's.",
        "",
        "| Method | Difference | 95% interval | Only the council right | Only the method right "
        "| McNemar p | Council's spend |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for method, c in methods.items():
        low, high = c["interval_95"]
        ratio = c.get("cost_ratio")
        spend = (
            "—"
            if ratio is None
            else f"{ratio:.1f}× {'cost' if c['ratio_of'] == 'cost_usd' else 'tokens'}"
        )
        lines.append(
            f"| {METHOD_TITLES.get(method, method)} | {signed_points(c['difference'])} "
            f"| {interval_points(low, high)} | {c['council_only']} | {c['method_only']} "
            f"| {c['mcnemar_p']:.3f} | {spend} |"
        )
    lines.append("")
    lines += [f"- {_cell(c['conclusion'])}" for c in methods.values()]
    return [*lines, ""]


def rounds_lines(flips: dict[str, Any]) -> list[str]:
    """Per round, the answers that moved, and who moved whom."""
    if not flips.get("rounds"):
        return []
    lines = [
        "## What the rounds did",
        "",
        "Persona answers that changed stance from the round before, by whether they were right.",
        "",
        "| Round | Right → wrong | Wrong → right | Wrong → another wrong |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for r in flips["rounds"]:
        lines.append(
            f"| {r['round']} | {r['right_to_wrong']} | {r['wrong_to_right']} "
            f"| {r['wrong_to_wrong']} |"
        )
    if flips.get("movers"):
        lines += [
            "",
            "Who moved whom: the peer that cross-examined the persona when it took that peer's "
            "stance, else `(majority)` when it took the round's majority, else `(own)`.",
            "",
            "| Round | Moved by | Persona | Direction | Times |",
            "| ---: | --- | --- | --- | ---: |",
        ]
        for m in flips["movers"]:
            lines.append(
                f"| {m['round']} | {_cell(m['by'])} | {_cell(m['persona'])} "
                f"| {m['direction']} | {m['count']} |"
            )
    return [*lines, ""]


def votes_lines(votes: dict[str, Any]) -> list[str]:
    """Kish's effective number of votes, for the council and per model family."""
    if not votes.get("seats"):
        return []
    lines = [
        "## Effective votes",
        "",
        f"From the {votes['seats']} seats' round-1 answers over {votes['questions']} questions: "
        f"n / (1 + (n−1)·ρ̄) with ρ̄ the mean pairwise correlation of their correctness. The "
        f"council's {votes['seats']} seats are worth **{votes['effective']:.2f}** independent "
        f"votes (ρ̄ = {votes['mean_correlation']:.2f}).",
        "",
        "| Model family | Seats | Mean correlation ρ̄ | Effective votes |",
        "| --- | --- | ---: | ---: |",
    ]
    for f in votes["families"]:
        lines.append(
            f"| {_cell(f['family'])} | {_cell(', '.join(f['seats']))} "
            f"| {f['mean_correlation']:.2f} | {f['effective']:.2f} |"
        )
    return [*lines, ""]


def seats_lines(seats: list[dict[str, Any]]) -> list[str]:
    """Each seat's accuracy in round 1 and at the end, with its interval and spend."""
    if not seats:
        return []
    lines = [
        "## Seats",
        "",
        "| Persona | Model family | Round 1 | Last round | 95% interval | Calls | Tokens | Cost |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for s in seats:
        low, high = s["interval_95"]
        lines.append(
            f"| {_cell(s['persona'])} | {_cell(s['family'])} | {s['first_right']}/{s['questions']} "
            f"| {s['right']}/{s['questions']} ({s['accuracy']:.0%}) | {low:.0%}–{high:.0%} "
            f"| {s['calls']} | {s['tokens']:,} | ${s['cost_usd']:.4f} |"
        )
    return [*lines, ""]


def samples_lines(results: dict[str, Any]) -> list[str]:
    """With --samples match: how many samples each question's council spend afforded."""
    if results.get("samples") != "match":
        return []
    counts = [int(row.get("samples") or 0) for row in results.get("rows", [])]
    if not counts:
        return []
    return [
        "## Equal budgets",
        "",
        "Self-consistency drew, per question, as many samples as the council's spend on that "
        f"question affords: {', '.join(str(c) for c in counts)} "
        f"({sum(counts) / len(counts):.1f} a question).",
        "",
    ]


def evidence_markdown(results: dict[str, Any]) -> str:
    """The sections after the method table, from results.json's figures."""
    lines = [
        *samples_lines(results),
        *comparison_lines(results.get("comparisons") or {}),
        *rounds_lines(results.get("flips") or {}),
        *votes_lines(results.get("votes") or {}),
        *seats_lines(results.get("seats") or []),
    ]
    return "\n".join(lines).rstrip("\n") + "\n" if lines else ""
