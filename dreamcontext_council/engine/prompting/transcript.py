"""What a persona reads in a rebuttal round (round 3 and later): the full debate transcript.

NiraNexus Council: after the convergence check every model "receives the full debate
transcript" and writes its rebuttal. Here that is every peer's answer of every earlier
round, whole (the round-2 answers hold their cross-examinations; from round 4 on the
round-3 rebuttals are there too), the persona's own earlier answers, and the critiques
aimed at it from the latest cross-examination, in full.

Over the budget the transcript is compressed by the answer rule of the synthesis
(Open Council compression, `compression.compress_answer`: first and last lines kept
around a key-points marker, code never cut), in this order: the peers' older rounds
first (oldest first), then the peers' latest answers, each pass keeping fewer lines
(`LINE_STEPS`); only when every peer answer is down to its fewest lines do the reader's
own answers and the critiques aimed at it give way, in the same steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting.compression import compress_answer
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
    """0: a peer's older round; 1: a peer's latest answer; 2: the reader's own or aimed at it."""
    order: int
    lines_kept: tuple[int, int] | None = None

    @property
    def view(self) -> str:
        return str(self.shown["text"])


@dataclass
class RebuttalTranscript:
    """The transcript one persona reads, with what compression did to it."""

    rounds: list[dict[str, Any]] = field(default_factory=list)
    """Each earlier round: round, title, answers (slug, text, latest, compressed) of the peers."""
    cross_examinations: list[dict[str, Any]] = field(default_factory=list)
    """Who cross-examined whom: round, critic, target, score, aimed_at_you, by_you."""
    own_answers: list[dict[str, Any]] = field(default_factory=list)
    """The reader's earlier answers, round 1 first: round, text, compressed."""
    critiques: list[dict[str, Any]] = field(default_factory=list)
    """The critiques aimed at the reader from the latest cross-examination, in full."""
    budget: int = DEFAULT_BUDGET_CHARS
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
        return (
            f"{slug}: {self.original_chars:,} → {self.view_chars:,} characters "
            f"(budget {self.budget:,}); whole: {kept}; compressed: {', '.join(self.compressed)}"
        )


def _entry(entries: list[RoundEntry], number: int) -> RoundEntry | None:
    return next((e for e in entries if e.round == number), None)


def latest_critiques(files: DebateFiles, slug: str, number: int) -> list[dict[str, Any]]:
    """The critiques aimed at `slug` in the latest cross-examination before round `number`."""
    reviewed = load_reviews(files)["rounds"]
    earlier = sorted((int(r) for r in reviewed if int(r) < number), reverse=True)
    if not earlier:
        return []
    latest = earlier[0]
    found = []
    for critic, review in reviewed[str(latest)].items():
        if review.get("target") != slug:
            continue
        entry = _entry(files.entries(critic), latest)
        text = entry.section("Cross-examination") if entry else None
        if text:
            score = review.get("score")
            shown = f"{score:g}" if isinstance(score, int | float) else None
            found.append({"critic": critic, "round": latest, "score": shown, "text": text})
    return found


def cross_examination_index(files: DebateFiles, slug: str, number: int) -> list[dict[str, Any]]:
    """Every cross-examination before round `number`: who critiqued whom, with the score."""
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
    peers = [p for p in roster if p != slug]
    latest = {p: max((e.round for e in entries[p] if e.round < number), default=0) for p in peers}
    for round_number in range(1, number):
        answers = []
        for peer in peers:
            entry = _entry(entries[peer], round_number)
            if entry is None:
                continue
            is_latest = round_number == latest[peer]
            shown = {"slug": peer, "text": entry.body, "latest": is_latest}
            answers.append(shown)
            parts.append(
                _Part(f"{peer} R{round_number}", entry.body, shown, int(is_latest), round_number)
            )
        if answers:
            title = phase_title(round_number)
            transcript.rounds.append({"round": round_number, "title": title, "answers": answers})
    transcript.cross_examinations = cross_examination_index(files, slug, number)
    for earlier in sorted(entries[slug], key=lambda e: e.round):
        if earlier.round < number:
            shown = {"round": earlier.round, "text": earlier.body}
            transcript.own_answers.append(shown)
            parts.append(_Part(f"{slug} R{earlier.round}", earlier.body, shown, 2, earlier.round))
    for critique in latest_critiques(files, slug, number):
        shown = dict(critique)
        transcript.critiques.append(shown)
        label = f"{critique['critic']} R{critique['round']} cross-examination of {slug}"
        parts.append(_Part(label, str(critique["text"]), shown, 3, critique["round"]))
    _fit(transcript, parts, budget)
    return transcript


def _fit(transcript: RebuttalTranscript, parts: list[_Part], budget: int) -> None:
    """Compress the parts in the module's order until the transcript is within `budget`."""
    total = sum(len(p.text) for p in parts)
    transcript.original_chars = total
    for part in parts:
        part.shown["compressed"] = False
    if total > budget:
        peers = sorted((p for p in parts if p.tier < 2), key=lambda p: (p.tier, p.order))
        mine = sorted((p for p in parts if p.tier >= 2), key=lambda p: (p.tier, p.order))
        for group in (peers, mine):
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
        for part in parts:
            if part.lines_kept:
                first, last = part.lines_kept
                transcript.compressed.append(f"{part.label} (first {first}, last {last} lines)")
            else:
                transcript.whole.append(part.label)
    transcript.view_chars = total
