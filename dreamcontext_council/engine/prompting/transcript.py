"""Fitting what a persona reads in a rebuttal round (round 3 and later) to its budget.

NiraNexus Council: after the convergence check every model "receives the full debate
transcript" and writes its rebuttal. A persona's message holds it as a conversation that
grows round by round (engine/protocol/material.py): every answer of every earlier round,
each once (its own under `Your round N answer`, the peers' as it first reads them whole),
the critiques aimed at it with the answers it gave and what its critic said to that
(engine/prompting/exchanges.py), and from round 4 its target's answers to its own critique.

Over the budget those texts are compressed by the answer rule of the synthesis (Open
Council compression, `compression.compress_answer`: first and last lines kept around a
key-points marker, code never cut), in this order: the peers' older rounds (oldest first)
and then the reader's own older answers and the critiques earlier rounds showed it, then
the peers' latest answers, each group through every step of `LINE_STEPS` before the next
gives way; only then do the reader's latest answer and this round's exchanges give way, in
the same steps. The part that brings the message under its budget takes back as many
lines as still fit (`compression.widest_view`), so the budget is filled, not undershot.
A compressed message no longer starts with the previous round's, byte for byte: that is
the price of fitting it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting.compression import compress_answer, widest_view
from dreamcontext_council.engine.prompting.exchanges import Exchange
from dreamcontext_council.engine.prompting.reviews import load_reviews

# The default budget: the synthesis gate (0.6 × a 100,000-character window).
DEFAULT_BUDGET_CHARS = 60_000
LINE_STEPS = ((15, 10), (8, 5), (4, 3), (2, 1))
"""(first, last) lines a compressed part keeps, one step per pass."""
PEER_OLDER, OWN_OLDER, PEER_LATEST, OWN_LATEST, EXCHANGE = range(5)
"""The tiers of `Part`, in the order compression reaches them."""


def phase_title(number: int) -> str:
    return "opening" if number == 1 else "cross-examination" if number == 2 else "rebuttal"


@dataclass
class Part:
    """One text compression may shorten, with the dict the prompt shows it from."""

    label: str
    text: str
    shown: dict[str, Any]
    tier: int
    """PEER_OLDER: a peer's older round; OWN_OLDER: the reader's older answer, or a critique
    an earlier round showed it; PEER_LATEST: a peer's latest answer; OWN_LATEST: the reader's
    latest answer; EXCHANGE: a critique or answer of this round's exchanges."""
    order: int
    lines_kept: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.shown["text"] = self.text
        self.shown["compressed"] = False

    @property
    def view(self) -> str:
        return str(self.shown["text"])


@dataclass
class Fitted:
    """What fitting the parts to a budget did to them."""

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


def framed(parts: list[Part]) -> None:
    """Empty every part, tagged as compressed, to measure the rest of the prompt: the frame
    is never shorter than what is sent."""
    for part in parts:
        part.shown["text"] = ""
        part.shown["compressed"] = True


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


def fit(parts: list[Part], budget: int) -> Fitted:
    """Show every part whole, then compress them in the module's order until they are
    within `budget` characters."""
    fitted = Fitted(budget=budget)
    total = sum(len(p.text) for p in parts)
    fitted.original_chars = total
    for part in parts:
        part.shown["text"] = part.text
        part.shown["compressed"] = False
        part.lines_kept = None
    if total > budget:
        groups = [
            sorted((p for p in parts if p.tier in tiers), key=lambda p: (p.tier, p.order))
            for tiers in ((PEER_OLDER, OWN_OLDER), (PEER_LATEST,), (OWN_LATEST, EXCHANGE))
        ]
        last: Part | None = None
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
                fitted.compressed.append(f"{part.label} (first {first}, last {last_lines} lines)")
            else:
                fitted.whole.append(part.label)
    fitted.view_chars = total
    return fitted


def _widen(part: Part, total: int, budget: int) -> int:
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
