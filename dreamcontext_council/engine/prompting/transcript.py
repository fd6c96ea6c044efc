"""What a persona reads in a rebuttal round (round 3 and later): the full debate transcript.

NiraNexus Council: after the convergence check every model "receives the full debate
transcript" and writes its rebuttal. Here that is every peer's answer of every earlier
round, whole (the round-2 answers hold their cross-examinations; from round 4 on the
round-3 rebuttals are there too), the persona's own earlier answers, the critiques aimed
at it from the latest cross-examination, in full, each with the answer it already gave
and what its critic said to that (engine/prompting/exchanges.py), and from round 4 its
target's answers to its own critique, to press or drop.

Over the budget the transcript is compressed by the answer rule of the synthesis
(Open Council compression, `compression.compress_answer`: first and last lines kept
around a key-points marker, code never cut), in this order: the peers' older rounds
(oldest first) and then the reader's own older answers, then the peers' latest answers,
each group through every step of `LINE_STEPS` before the next gives way; only then do
the reader's latest answer and the exchanges give way, in the same steps. The part that
brings the transcript under its budget takes back as many lines as still fit
(`compression.widest_view`), so the budget is filled, not undershot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting.compression import compress_answer, widest_view
from dreamcontext_council.engine.prompting.exchanges import Exchange, exchanges_before
from dreamcontext_council.engine.prompting.reviews import load_reviews
from dreamcontext_council.rules.report import RoundEntry

# The default budget: the synthesis gate (0.6 × a 100,000-character window).
DEFAULT_BUDGET_CHARS = 60_000
LINE_STEPS = ((15, 10), (8, 5), (4, 3), (2, 1))
"""(first, last) lines a compressed part keeps, one step per pass."""


def phase_title(number: int) -> str:
    return "opening" if number == 1 else "cross-examination" if number == 2 else "rebuttal"


@dataclass
class _Part:
    """One piece of the transcript compression may shorten, with where it is shown."""

    label: str
    text: str
    shown: dict[str, Any]
    tier: int
    """0: a peer's older round; 1: the reader's older answer; 2: a peer's latest answer;
    3: the reader's latest answer; 4: an exchange the reader is part of."""
    order: int
    lines_kept: tuple[int, int] | None = None

    @property
    def view(self) -> str:
        return str(self.shown["text"])


@dataclass
class RebuttalTranscript:
    """The transcript one persona reads, with what compression did to it."""

    rounds: list[dict[str, Any]] = field(default_factory=list)
    """Each earlier round: round, title, answers (slug, text, yours, compressed), the
    reader's own among them."""
    cross_examinations: list[dict[str, Any]] = field(default_factory=list)
    """Who cross-examined whom: round, critic, target, score, aimed_at_you, by_you."""
    own_answers: list[dict[str, Any]] = field(default_factory=list)
    """The reader's earlier answers as `rounds` shows them, round 1 first."""
    critiques: list[dict[str, Any]] = field(default_factory=list)
    """The critiques aimed at the reader from the latest cross-examination, in full, each with
    its turns (`Exchange.shown`): new when `answered_in` is None, else with the answer."""
    answers_to_critiques: list[dict[str, Any]] = field(default_factory=list)
    """The reader's own critiques its target has answered (from round 4), with the turns."""
    budget: int = DEFAULT_BUDGET_CHARS
    gate: int | None = None
    """The call's whole budget, when `budget` is what the rest of the prompt leaves of it."""
    original_chars: int = 0
    view_chars: int = 0
    whole: list[str] = field(default_factory=list)
    compressed: list[str] = field(default_factory=list)
    """What was compressed, as `slug RN (first A, last B lines)`; empty under the budget."""

    def log_line(self, slug: str) -> str | None:
        """The round-log bullet for this persona's transcript, when it was compressed."""
        if not self.compressed:
            return None
        kept = ", ".join(self.whole) or "none"
        budget = f"budget {self.budget:,}"
        if self.gate is not None:
            budget += f": the {self.gate:,} gate less {self.gate - self.budget:,} for the rest of the prompt"
        return (
            f"{slug}: {self.original_chars:,} → {self.view_chars:,} characters "
            f"({budget}); whole: {kept}; compressed: {', '.join(self.compressed)}"
        )


def _entry(entries: list[RoundEntry], number: int) -> RoundEntry | None:
    return next((e for e in entries if e.round == number), None)


def cross_examination_index(
    files: DebateFiles, slug: str, number: int, exchanges: list[Exchange] | None = None
) -> list[dict[str, Any]]:
    """Every cross-examination before round `number`: who critiqued whom, with the score, and
    for the reader's own exchanges the round its target answered (`answered_in`)."""
    answered = {
        (e.round, e.critic): e.answered_in()
        for e in exchanges or []
        if slug in (e.critic, e.target)
    }
    found = []
    for key, by_critic in load_reviews(files)["rounds"].items():
        if int(key) >= number:
            continue
        for critic, review in by_critic.items():
            score = review.get("score")
            target = str(review.get("target", "?"))
            found.append(
                {
                    "round": int(key),
                    "critic": critic,
                    "target": target,
                    "score": f"{score:g}/10" if isinstance(score, int | float) else "no score",
                    "aimed_at_you": target == slug,
                    "by_you": critic == slug,
                    "answered_in": answered.get((int(key), critic)),
                }
            )
    return found


def rebuttal_transcript(
    files: DebateFiles,
    roster: list[str],
    slug: str,
    number: int,
    *,
    budget: int = DEFAULT_BUDGET_CHARS,
) -> RebuttalTranscript:
    """The transcript `slug` reads in round `number` (3 or later), within `budget` characters."""
    entries = {s: files.entries(s) for s in dict.fromkeys([*roster, slug])}
    transcript = RebuttalTranscript(budget=budget)
    parts: list[_Part] = []
    seated = list(dict.fromkeys([*roster, slug]))
    latest = {p: max((e.round for e in entries[p] if e.round < number), default=0) for p in seated}
    # Round by round, each answer in roster order, the reader's own among them: the prompt of
    # the next round starts with these same blocks, byte for byte (a prefix cache serves them).
    for round_number in range(1, number):
        answers = []
        for persona in seated:
            entry = _entry(entries[persona], round_number)
            if entry is None:
                continue
            yours = persona == slug
            shown = {"slug": persona, "text": entry.body, "yours": yours}
            answers.append(shown)
            if yours:
                transcript.own_answers.append(shown)
            is_latest = round_number == latest[persona]
            tier = (3 if is_latest else 1) if yours else int(is_latest) * 2
            parts.append(_Part(f"{persona} R{round_number}", entry.body, shown, tier, round_number))
        if answers:
            title = phase_title(round_number)
            transcript.rounds.append({"round": round_number, "title": title, "answers": answers})
    exchanges = exchanges_before(files, number, entries)
    transcript.cross_examinations = cross_examination_index(files, slug, number, exchanges)
    for exchange in exchanges:
        thread = exchange.shown(slug)
        if exchange.target == slug:
            transcript.critiques.append(thread)
            label = f"{exchange.critic} R{exchange.round} cross-examination of {slug}"
        elif exchange.critic == slug and exchange.answered_in() is not None:
            transcript.answers_to_critiques.append(thread)
            label = f"{exchange.target}'s answers to {slug}'s R{exchange.round} cross-examination"
        else:
            continue
        parts.append(_Part(label, exchange.critique, thread, 4, exchange.round))
        for turn in thread["turns"]:
            turn_label = f"{turn['by']} R{turn['round']} in that exchange"
            parts.append(_Part(turn_label, str(turn["text"]), turn, 4, turn["round"]))
    _fit(transcript, parts, budget)
    return transcript


def _fit(transcript: RebuttalTranscript, parts: list[_Part], budget: int) -> None:
    """Compress the parts in the module's order until the transcript is within `budget`."""
    total = sum(len(p.text) for p in parts)
    transcript.original_chars = total
    for part in parts:
        part.shown["compressed"] = False
    if total > budget:
        groups = [
            sorted((p for p in parts if p.tier in tiers), key=lambda p: (p.tier, p.order))
            for tiers in ((0, 1), (2,), (3, 4))
        ]
        last: _Part | None = None
        for group in groups:
            for head, tail in LINE_STEPS:
                for part in group:
                    if total <= budget:
                        break
                    view = compress_answer(part.text, head=head, tail=tail)
                    if len(view) >= len(part.view):
                        continue
                    total -= len(part.view) - len(view)
                    part.shown["text"] = view
                    part.shown["compressed"] = True
                    part.lines_kept = (head, tail)
                    last = part
        if last is not None and last.lines_kept and total <= budget:
            total = _widen(last, total, budget)
        for part in parts:
            if part.lines_kept:
                first, last_lines = part.lines_kept
                transcript.compressed.append(
                    f"{part.label} (first {first}, last {last_lines} lines)"
                )
            else:
                transcript.whole.append(part.label)
    transcript.view_chars = total


def _widen(part: _Part, total: int, budget: int) -> int:
    """The part that brought the transcript under `budget` takes back the lines that fit."""
    assert part.lines_kept is not None
    head, tail = part.lines_kept
    room = budget - (total - len(part.view))
    widest = widest_view(part.text, room, head=head, tail=tail)
    if widest is None or len(widest[0]) <= len(part.view):
        return total
    view, kept = widest
    total += len(view) - len(part.view)
    part.shown["text"] = view
    part.shown["compressed"] = view != part.text
    part.lines_kept = kept if view != part.text else None
    return total
