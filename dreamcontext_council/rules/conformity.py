"""Conformity and novelty: did the debate change minds for reasons, and did it still add anything?

Measured from the folder alone, with no model call:

- a *flip* is a persona's stance changing from one round to the next; it is a *conformity
  flip* when the new stance is the previous round's majority and the answer brings no new
  claim (a claims-ledger claim the persona proposed that round; without a ledger, a
  normalised sentence no earlier answer held) and no research note (one of the persona's
  notes that this answer names and none of its earlier answers did);
- the *new-content share* of a round is the share of its normalised sentences that no
  earlier round held; a round after the first under 10% raises "diminishing returns";
- *anchoring*: the final verdict (the last round's leading stance) equals the round-1 majority;
  measured once the debate has a verdict (its planned rounds are done), never mid-round.

Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.verdicts import Verdict, Verdicts

DIMINISHING_SHARE = 0.10
"""A round after the first whose new-content share is under this raises the flag."""

_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^[ ]{0,3}#{1,6}\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NOT_WORD = re.compile(r"[^\w\s]+")
_SCORE_LINE = re.compile(r"^\W*score\W*\d{1,2}(?:\.\d+)?\W*/\W*10\W*$", re.I)
"""A cross-examination's `Score: N/10` line: every round-2 critic must write one, so it is
a mark of the protocol, not content."""


def normalised_sentences(text: str) -> set[str]:
    """The text's sentences, lower-cased, punctuation and markup dropped, spaces collapsed.

    Headings, fences and a critique's `Score: N/10` line are not sentences; neither is a
    fragment of fewer than three words."""
    found: set[str] = set()
    for line in text.split("\n"):
        if _HEADING.match(line) or _FENCE.match(line) or _SCORE_LINE.match(line):
            continue
        for piece in _SENTENCE_END.split(line.strip()):
            words = _NOT_WORD.sub(" ", piece.lower()).split()
            if len(words) >= 3:
                found.add(" ".join(words))
    return found


def majority(votes: Mapping[str, Verdict]) -> str | None:
    """The stance most personas hold; a tie goes to conviction, then the alphabet."""
    if not votes:
        return None
    counts: dict[str, int] = {}
    for verdict in votes.values():
        counts[verdict.stance] = counts.get(verdict.stance, 0) + 1
    totals = metrics.stance_totals(votes)
    return min(counts, key=lambda stance: (-counts[stance], -totals[stance], stance))


class Flip(NamedTuple):
    """One persona's stance change between round `round - 1` and `round`."""

    persona: str
    round: int
    before: str
    after: str
    conformity: bool
    """Toward the previous round's majority with no new claim or research note."""


class RoundNovelty(NamedTuple):
    """How much of a round's text no earlier round held."""

    round: int
    sentences: int
    new: int

    @property
    def share(self) -> float:
        return self.new / self.sentences if self.sentences else 0.0

    @property
    def diminishing(self) -> bool:
        return self.round > 1 and self.share < DIMINISHING_SHARE


@dataclass(frozen=True)
class DebateMeasures:
    """Flips, novelty and anchoring of one debate."""

    flips: list[Flip] = field(default_factory=list)
    novelty: list[RoundNovelty] = field(default_factory=list)
    round1_majority: str | None = None
    final_stance: str | None = None
    decided: bool = True
    """Whether the debate has its verdict (its planned rounds are done)."""

    @property
    def conformity_flips(self) -> list[Flip]:
        return [f for f in self.flips if f.conformity]

    @property
    def flippers(self) -> list[str]:
        return sorted({f.persona for f in self.flips})

    @property
    def anchored(self) -> bool | None:
        """Whether the final verdict is the round-1 majority; None before the verdict."""
        if not self.decided or self.round1_majority is None or self.final_stance is None:
            return None
        return self.final_stance == self.round1_majority

    @property
    def diminishing_rounds(self) -> list[int]:
        return [n.round for n in self.novelty if n.diminishing]

    def lines(self) -> list[str]:
        """The measures as short plain lines, for the board, the report and the dashboard;
        anchoring only once there is a verdict."""
        conformity = self.conformity_flips
        flips = f"Flips: {len(self.flips)}, conformity flips: {len(conformity)}"
        if self.flips:
            flips += " (" + ", ".join(_flip_text(f) for f in self.flips) + ")"
        novelty = "New content: " + (
            ", ".join(f"round {n.round} {round(100 * n.share)}%" for n in self.novelty)
            or "no answers yet"
        )
        if self.diminishing_rounds:
            rounds = ", ".join(str(r) for r in self.diminishing_rounds)
            novelty += f" — diminishing returns (under 10% new) in round {rounds}"
        if self.anchored is None:
            return [flips, novelty]
        if self.anchored:
            anchoring = (
                f"Anchoring: the verdict {self.final_stance} is the round-1 majority "
                "(debate did not change the outcome)"
            )
        else:
            anchoring = (
                f"Anchoring: none — the verdict {self.final_stance} differs from the round-1 "
                f"majority {self.round1_majority}"
            )
        return [flips, novelty, anchoring]

    def to_json(self) -> dict[str, Any]:
        return {
            "flips": [f._asdict() for f in self.flips],
            "conformity_flips": len(self.conformity_flips),
            "flippers": self.flippers,
            "novelty": [
                {**n._asdict(), "share": round(n.share, 4), "diminishing": n.diminishing}
                for n in self.novelty
            ],
            "diminishing_rounds": self.diminishing_rounds,
            "round1_majority": self.round1_majority,
            "final_stance": self.final_stance,
            "anchored": self.anchored,
        }


def _flip_text(flip: Flip) -> str:
    kind = ", conformity" if flip.conformity else ""
    return f"{flip.persona} {flip.before}→{flip.after} in round {flip.round}{kind}"


def measure(
    verdicts: Verdicts,
    answers: Mapping[str, Mapping[int, str]],
    research: Mapping[str, Sequence[str]] | None = None,
    ledger: Iterable[Mapping[str, Any]] | None = None,
    *,
    decided: bool = True,
) -> DebateMeasures:
    """The measures of a debate.

    `answers`: persona → round → report entry text; `research`: persona → the topics and
    slugs of its research notes; `ledger`: the claims of claims.json (kept and dropped),
    or None when the debate has no ledger yet; `decided`: False while the debate has no
    verdict yet (a round still being answered), when anchoring is not measured."""
    research = research or {}
    ledger_claims = None if ledger is None else list(ledger)
    last = verdicts.last_round()
    rounds = sorted({r for r, v in verdicts.rounds.items() if v} | _answer_rounds(answers))
    seen: set[str] = set()
    novelty = []
    round_new: dict[int, set[str]] = {}
    for number in rounds:
        sentences: set[str] = set()
        for per_round in answers.values():
            sentences |= normalised_sentences(per_round.get(number, ""))
        fresh = sentences - seen
        round_new[number] = fresh
        novelty.append(RoundNovelty(number, len(sentences), len(fresh)))
        seen |= sentences
    flips = []
    for number in rounds:
        if number < 2:
            continue
        before, now = verdicts.round(number - 1), verdicts.round(number)
        lead = majority(before)
        for slug in sorted(now):
            if slug not in before or before[slug].stance == now[slug].stance:
                continue
            toward = now[slug].stance == lead
            brings = _new_claim(slug, number, answers, round_new, ledger_claims) or _new_note(
                slug, number, answers, research.get(slug, ())
            )
            flips.append(
                Flip(slug, number, before[slug].stance, now[slug].stance, toward and not brings)
            )
    return DebateMeasures(
        flips,
        novelty,
        majority(verdicts.round(1)),
        metrics.leading(verdicts.round(last)) if last else None,
        decided,
    )


def _answer_rounds(answers: Mapping[str, Mapping[int, str]]) -> set[int]:
    return {number for per_round in answers.values() for number in per_round}


def _new_claim(
    slug: str,
    number: int,
    answers: Mapping[str, Mapping[int, str]],
    round_new: Mapping[int, set[str]],
    ledger: list[Mapping[str, Any]] | None,
) -> bool:
    if ledger is not None:
        return any(c.get("proposer") == slug and c.get("round") == number for c in ledger)
    own = normalised_sentences(answers.get(slug, {}).get(number, ""))
    return bool(own & round_new.get(number, set()))


def _new_note(
    slug: str, number: int, answers: Mapping[str, Mapping[int, str]], names: Sequence[str]
) -> bool:
    own = answers.get(slug, {})
    text = own.get(number, "").lower()
    earlier = " ".join(own.get(r, "") for r in own if r < number).lower()
    return any(name.lower() in text and name.lower() not in earlier for name in names if name)
