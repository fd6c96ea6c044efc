"""The critique exchanges: each cross-examination followed round by round, turn by turn.

NiraNexus Council (seed 002): "Three rounds forces each attack to face a rebuttal." A
critique opens an exchange between its critic and its target. The target answers it in a
later round (its `### Reactions to peers` names the critic: accepted, partly accepted or
rejected); from the round after that answer the critic reads it and presses or drops each
point (its reactions name the target); a pressed point is the target's to answer again.
Each turn is the first reaction of the side whose turn it is, in a round after the other
side's last turn: the two write a round in parallel, so a reaction written beside the
other side's turn has not read it. A critic that drops its points settles the exchange.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting.reviews import load_reviews
from dreamcontext_council.rules.reactions import DROPPED, reaction_to
from dreamcontext_council.rules.report import RoundEntry


@dataclass(frozen=True)
class Turn:
    """One side's reaction in an exchange."""

    round: int
    by: str
    word: str | None
    text: str


@dataclass
class Exchange:
    """A critique and the turns that followed it, up to a round."""

    critic: str
    target: str
    round: int
    """The cross-examination round the critique was written in."""
    score: str | None
    critique: str
    turns: list[Turn] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        """The critic dropped its points."""
        return (
            bool(self.turns) and self.turns[-1].by == self.critic and self.turns[-1].word == DROPPED
        )

    @property
    def owed_by(self) -> str | None:
        """Whose turn it is: the target after the critique or a press, the critic after an
        answer; None once the critic has dropped its points."""
        if self.settled:
            return None
        if not self.turns or self.turns[-1].by == self.critic:
            return self.target
        return self.critic

    def answered_in(self) -> int | None:
        """The round the target first answered the critique, or None."""
        return next((t.round for t in self.turns if t.by == self.target), None)

    def shown(self, reader: str) -> dict[str, Any]:
        """The exchange as a prompt shows it to `reader` (its critic or its target)."""
        return {
            "critic": self.critic,
            "target": self.target,
            "round": self.round,
            "score": self.score,
            "text": self.critique,
            "turns": [
                {
                    "round": t.round,
                    "by": t.by,
                    "word": t.word,
                    "text": t.text,
                    "yours": t.by == reader,
                }
                for t in self.turns
            ],
            "answered_in": self.answered_in(),
            "owed": self.owed_by == reader,
            "settled": self.settled,
            "last_round": self.turns[-1].round if self.turns else self.round,
        }


def _entry(entries: Sequence[RoundEntry], number: int) -> RoundEntry | None:
    return next((e for e in entries if e.round == number), None)


def follow(
    exchange: Exchange, entries: Mapping[str, Sequence[RoundEntry]], before: int
) -> Exchange:
    """Fill in the exchange's turns from the rounds after the critique and before `before`."""
    turns: list[Turn] = []
    speaker, other = exchange.target, exchange.critic
    for number in range(exchange.round + 1, before):
        entry = _entry(entries.get(speaker, ()), number)
        reaction = reaction_to(entry.section("Reactions to peers") if entry else None, other)
        if reaction is None:
            continue
        turns.append(Turn(number, speaker, reaction.word, reaction.text))
        if speaker == exchange.critic and reaction.word == DROPPED:
            break
        speaker, other = other, speaker
    exchange.turns = turns
    return exchange


def exchanges_before(
    files: DebateFiles,
    number: int,
    entries: Mapping[str, Sequence[RoundEntry]] | None = None,
) -> list[Exchange]:
    """Every exchange of the latest cross-examination before round `number`, followed up to it."""
    reviewed = load_reviews(files)["rounds"]
    earlier = sorted((int(r) for r in reviewed if int(r) < number), reverse=True)
    if not earlier:
        return []
    latest = earlier[0]
    found = []
    cache: dict[str, Sequence[RoundEntry]] = dict(entries or {})
    for critic, review in reviewed[str(latest)].items():
        target = str(review.get("target", "?"))
        for slug in (critic, target):
            if slug not in cache:
                cache[slug] = files.entries(slug)
        entry = _entry(cache[critic], latest)
        text = entry.section("Cross-examination") if entry else None
        if not text:
            continue
        score = review.get("score")
        shown = f"{score:g}" if isinstance(score, int | float) else None
        exchange = Exchange(critic, target, latest, shown, text)
        found.append(follow(exchange, cache, number))
    return found
