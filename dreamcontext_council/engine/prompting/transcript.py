"""What a persona reads in a rebuttal round (round 3 and later): the debate so far.

NiraNexus Council: after the convergence check every model "receives the full debate
transcript" and writes its rebuttal. Here that is every round-1 answer, every round-2
cross-examination, the persona's own earlier answers and the critiques aimed at it,
marked. Over the budget the transcript is compressed by the synthesis rules (Open Council
compression, `seating.compress_for_synthesis`): the best-seated answers stay verbatim, the
rest keep their first and last lines, and code is never cut. The critiques aimed at the
persona are never compressed: they are what it must answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting.reviews import answer_scores, load_reviews
from dreamcontext_council.engine.prompting.seating import Answer, Decision, compress_for_synthesis
from dreamcontext_council.rules.report import RoundEntry

# The default budget: the synthesis gate (0.6 × a 100,000-character window).
DEFAULT_BUDGET_CHARS = 60_000
KEEP_VERBATIM = 2


@dataclass
class RebuttalTranscript:
    """The transcript one persona reads, with what compression did to it."""

    openings: list[dict[str, Any]] = field(default_factory=list)
    """Every round-1 answer: slug, text, yours, compressed."""
    cross_examinations: list[dict[str, Any]] = field(default_factory=list)
    """Every round-2 critique: critic, target, score, text, aimed_at_you, by_you, compressed.
    The text of one aimed at the reader or written by it is empty: it is shown elsewhere."""
    own_answers: list[dict[str, Any]] = field(default_factory=list)
    """The reader's answers after round 1: round, text, compressed."""
    budget: int = DEFAULT_BUDGET_CHARS
    original_chars: int = 0
    view_chars: int = 0
    verbatim: list[str] = field(default_factory=list)
    compressed: list[str] = field(default_factory=list)
    """What was compressed, as `slug RN (first A, last B lines)`; empty under the budget."""

    def log_line(self, slug: str) -> str | None:
        """The round-log bullet for this persona's transcript, when it was compressed."""
        if not self.compressed:
            return None
        kept = ", ".join(self.verbatim) or "none"
        return (
            f"{slug}: {self.original_chars:,} → {self.view_chars:,} characters "
            f"(budget {self.budget:,}); verbatim: {kept}; compressed: {', '.join(self.compressed)}"
        )


def _entry(entries: list[RoundEntry], number: int) -> RoundEntry | None:
    return next((e for e in entries if e.round == number), None)


def rebuttal_transcript(
    files: DebateFiles,
    roster: list[str],
    slug: str,
    number: int,
    aimed_at_you: list[dict[str, Any]],
    *,
    budget: int = DEFAULT_BUDGET_CHARS,
    keep_verbatim: int = KEEP_VERBATIM,
) -> RebuttalTranscript:
    """The transcript `slug` reads in round `number` (3 or later).

    `aimed_at_you` are the critiques of the reader, shown in full beside the transcript:
    their characters count against the budget, and they are never compressed."""
    entries = {s: files.entries(s) for s in dict.fromkeys([*roster, slug])}
    reviews = load_reviews(files)
    scores = answer_scores(reviews)
    priority = {s: i for i, s in enumerate(roster)}
    # The parts compression may touch, in reading order, each with where it is shown.
    parts: list[tuple[Answer, dict[str, Any], str]] = []

    def add(persona: str, round_number: int, text: str, shown: dict[str, Any], label: str) -> None:
        answer = Answer(
            persona,
            round_number,
            text,
            priority.get(persona, len(priority)),
            scores.get((persona, round_number)),
        )
        parts.append((answer, shown, label))

    transcript = RebuttalTranscript(budget=budget)
    for persona in roster:
        opening = _entry(entries[persona], 1)
        if opening is None:
            continue
        shown = {"slug": persona, "text": opening.body, "yours": persona == slug}
        transcript.openings.append(shown)
        add(persona, 1, opening.body, shown, f"{persona} R1")
    for critic, review in reviews["rounds"].get("2", {}).items():
        critique = _entry(entries.get(critic) or files.entries(critic), 2)
        text = (critique.section("Cross-examination") or "") if critique else ""
        score = review.get("score")
        target = str(review.get("target", "?"))
        shown = {
            "critic": critic,
            "target": target,
            "score": f"{score:g}/10" if isinstance(score, int | float) else "no score",
            "text": "",
            "aimed_at_you": target == slug,
            "by_you": critic == slug,
        }
        transcript.cross_examinations.append(shown)
        if text and target != slug and critic != slug:
            shown["text"] = text
            add(critic, 2, text, shown, f"{critic} R2 cross-examination")
    for earlier in sorted(entries[slug], key=lambda e: e.round):
        if 1 < earlier.round < number:
            shown = {"round": earlier.round, "text": earlier.body}
            transcript.own_answers.append(shown)
            add(slug, earlier.round, earlier.body, shown, f"{slug} R{earlier.round}")
    fixed = sum(len(str(c.get("text", ""))) for c in aimed_at_you)
    decided = compress_for_synthesis(
        [answer for answer, _, _ in parts],
        gate_chars=max(0, budget - fixed),
        keep_verbatim=keep_verbatim,
    )
    transcript.original_chars = decided.original_chars + fixed
    transcript.view_chars = decided.view_chars + fixed
    for item, (_, shown, label) in zip(decided.answers, parts, strict=True):
        shown["text"] = item.view_text
        shown["compressed"] = item.compressed
        if item.compressed and item.lines_kept:
            first, last = item.lines_kept
            transcript.compressed.append(f"{label} (first {first}, last {last} lines)")
        elif item.compressed:
            transcript.compressed.append(label)
        elif decided.over_gate and item.decision == Decision.VERBATIM_SEAT:
            transcript.verbatim.append(label)
    return transcript
