"""Seating before synthesis: which answers the synthesizer reads verbatim, which compressed.

Under the gate nothing is compressed. Over it the answers are seated, one voice per
persona first, by the review score each persona's reviewed answer received (or roster
priority without reviews); when the answers mark each persona's final one (synthesis
does), the voices are those final answers, alternating between the majority and the
dissent; the strongest answer for a position other than the final majority's, of any
round, keeps one of the verbatim seats. The best seats stay verbatim and the rest give
way lowest seat first through `compression.compress_answer`, until the gate is filled.
Pure: dataclasses in, dataclasses out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum

from dreamcontext_council.engine.prompting.compression import (
    check_settings,
    compress_answer,
    widest_view,
)


@dataclass(frozen=True)
class Answer:
    """One persona's answer for one round, as the synthesizer would read it."""

    persona: str
    round: int
    text: str
    priority: int
    """The persona's index in the roster (0 = first)."""
    review_score: float | None = None
    """The total score this answer received from its reviewers, or None when unreviewed."""
    final: bool = False
    """The persona's last answer: what it holds after the critiques (the tested material)."""
    dissents: bool = False
    """A final answer whose stance is not the leading one of the final round."""
    minority: bool = False
    """An answer, of any round, for a position other than the final round's leading one."""
    conviction: int | None = None
    """The conviction of the verdict the answer was given with, when one was recorded."""

    def __post_init__(self) -> None:
        if self.review_score is not None and math.isnan(self.review_score):
            raise ValueError(f"review score of {self.persona} R{self.round} is not a number")


def _final_seat_order(answers: list[Answer]) -> list[int]:
    """Seat order when final answers are marked (the rules are in ``seat_answers``)."""
    best: dict[str, float] = {}
    for answer in answers:
        if answer.review_score is not None:
            best[answer.persona] = max(
                best.get(answer.persona, answer.review_score), answer.review_score
            )

    def rank(index: int) -> tuple[int, float, int, str]:
        answer = answers[index]
        score = best.get(answer.persona)
        return (score is None, -(score or 0.0), answer.priority, answer.persona)

    finals = sorted((i for i, a in enumerate(answers) if a.final), key=rank)
    groups = [
        [i for i in finals if not answers[i].dissents],
        [i for i in finals if answers[i].dissents],
    ]
    voices: list[int] = []
    turn = 0 if not finals or not answers[finals[0]].dissents else 1
    while groups[0] or groups[1]:
        if not groups[turn]:
            turn = 1 - turn
        voices.append(groups[turn].pop(0))
        turn = 1 - turn
    place = {answers[i].persona: n for n, i in enumerate(voices)}
    rest = sorted(
        (i for i, a in enumerate(answers) if not a.final),
        key=lambda i: (place.get(answers[i].persona, len(place)), *rank(i), -answers[i].round),
    )
    return voices + rest


def _strength(answer: Answer) -> tuple[int, int, float, int, str]:
    """Sort key, strongest minority answer first: the latest round (the position that faced
    the most critiques), then the conviction, the review score, the roster order."""
    score = answer.review_score if answer.review_score is not None else -1.0
    return (-answer.round, -(answer.conviction or 0), -score, answer.priority, answer.persona)


def _minority_seat(answers: list[Answer], order: list[int], keep_verbatim: int) -> list[int]:
    """``order`` with the strongest minority answer among the first ``keep_verbatim`` seats."""
    minority = [i for i in order if answers[i].minority]
    if keep_verbatim < 2 or not minority:
        return order
    strongest = min(minority, key=lambda i: _strength(answers[i]))
    top = order[:keep_verbatim]
    if strongest in top:
        return order
    rest = [i for i in order if i != strongest]
    held = [place for place, i in enumerate(top) if answers[i].minority]
    place = held[0] if held else keep_verbatim - 1
    return [*rest[:place], strongest, *rest[place:]]


def _seat_order(answers: list[Answer], keep_verbatim: int = 2) -> list[int]:
    """Indices of ``answers`` in seat order (the rules are in ``seat_answers``)."""
    return _minority_seat(answers, _ranked_order(answers), keep_verbatim)


def _ranked_order(answers: list[Answer]) -> list[int]:
    if any(answer.final for answer in answers):
        return _final_seat_order(answers)
    scored = any(answer.review_score is not None for answer in answers)

    def key(index: int) -> tuple[int, float, int, int, str]:
        answer = answers[index]
        tie_break = (answer.priority, -answer.round, answer.persona)
        if not scored:
            return (0, 0.0, *tie_break)
        if answer.review_score is None:
            return (1, 0.0, *tie_break)
        return (0, -answer.review_score, *tie_break)

    leads: dict[str, int] = {}
    for index, answer in enumerate(answers):
        best = leads.get(answer.persona)
        if best is None or key(index) < key(best):
            leads[answer.persona] = index
    voices = sorted(leads.values(), key=key)
    rank = {answers[index].persona: place for place, index in enumerate(voices)}
    lead_indices = set(voices)
    rest = sorted(
        (index for index in range(len(answers)) if index not in lead_indices),
        key=lambda index: (rank[answers[index].persona], key(index)),
    )
    return voices + rest


def seat_answers(answers: list[Answer], keep_verbatim: int = 2) -> list[Answer]:
    """Seat the answers, best first, one voice per persona before any persona's second.

    Each persona is first represented by its leading answer. When any answer has a
    review score, that is its best-reviewed answer (the answer its critics scored),
    and the personas are ranked by that score, highest first, personas with no
    reviewed answer after all others. Without scores (compare mode), a persona's
    leading answer is its latest and the personas go by roster priority. Ties go to
    the lower roster priority, then to the later round, then to the persona slug;
    answers equal in all of these keep their given order. Every persona's other
    answers follow, in the order of their personas, each persona's answers best
    first (latest first when unreviewed). So the top two seats go to two different
    personas whenever the debate has two.

    When answers are marked ``final`` (synthesis marks each persona's last answer), the
    seats go first to the final answers, the tested material: the personas ranked by the
    best review score any of their answers received (unreviewed personas last, then
    roster priority), taken alternately from the majority and from the dissent (final
    answers marked ``dissents``), starting with the side of the best-ranked persona, so
    the top two seats hold the best-reviewed final answer and the best-reviewed final
    answer of the other side whenever there is a dissent. The earlier answers follow,
    by the same persona order, latest first.

    Whenever an answer of any round holds a position other than the final round's leading
    one (``minority``), the strongest of them (the latest round, then the highest
    conviction, the review score, the roster order) holds one of the first
    ``keep_verbatim`` seats (when there are at least two): it takes the seat a weaker
    minority answer held there, else the last of them (seed 002: a strong minority
    survives synthesis, even when its persona left it in the end).
    """
    return [answers[index] for index in _seat_order(answers, keep_verbatim)]


class Decision(StrEnum):
    """What compression did with one answer."""

    UNDER_GATE = "under-gate"
    """All answers together were under the gate: nothing was compressed."""
    VERBATIM_SEAT = "verbatim-seat"
    """Seated among the top answers that stay verbatim."""
    COMPRESSED = "compressed"
    """Compressed; ``view_text`` is the compressed view."""
    UNCHANGED = "unchanged"
    """Due for compression, but compression would not have made it shorter."""
    TIGHTENED = "tightened"
    """Still over the gate after the first pass: compressed again keeping fewer lines."""
    WHOLE = "whole"
    """Due for compression by its seat, but the lower seats brought the answers under the gate."""


# Still over the gate after the (15, 10) pass: keep fewer lines, lowest seats first.
TIGHTER_LINES = ((8, 5), (4, 3), (2, 1))


@dataclass(frozen=True)
class SeatedAnswer:
    """One answer with its seat and the text the synthesizer reads for it."""

    answer: Answer
    view_text: str
    """The compressed view when ``compressed``, else the answer's own text."""
    compressed: bool
    """True exactly when ``view_text`` differs from the answer's text."""
    original_chars: int
    view_chars: int
    seat: int
    """1 for the best-seated answer."""
    decision: Decision
    lines_kept: tuple[int, int] | None = None
    """(first, last) lines kept around the marker when compressed."""


@dataclass(frozen=True)
class SynthesisInput:
    """What compression decided for every answer, with the totals it worked from."""

    answers: list[SeatedAnswer]
    """In the order the answers were given."""
    original_chars: int
    view_chars: int
    gate_chars: int
    over_gate: bool
    """The original answers together were over the gate."""
    under_gate_after: bool
    """The views together are at or under the gate (False when code alone exceeds it)."""

    @property
    def seated(self) -> list[SeatedAnswer]:
        """The answers in seat order, best first."""
        return sorted(self.answers, key=lambda item: item.seat)


def compress_for_synthesis(
    answers: list[Answer],
    *,
    gate_chars: int | None = None,
    window_chars: int = 100_000,
    gate_ratio: float = 0.6,
    keep_verbatim: int = 2,
    head: int = 15,
    tail: int = 10,
    key_lines: int = 3,
    key_width: int = 60,
    tighten: bool = True,
) -> SynthesisInput:
    """Decide, for every answer, whether the synthesizer reads it verbatim or compressed.

    The gate is ``gate_chars``, or ``int(window_chars * gate_ratio)`` (60,000 by
    default). When all answers together have at most that many characters, nothing
    is compressed. Over it, the answers are seated (``seat_answers``); the first
    ``keep_verbatim`` seated answers stay verbatim, and the others give way lowest
    seat first: each goes through ``compress_answer`` with the given settings until
    the answers are under the gate, and the answer that brought them under it takes
    back as many lines as still fit (``compression.widest_view``), so the gate is
    filled rather than undershot; the seats above it stay whole (``Decision.WHOLE``).
    If every such answer is compressed and the views are still over the gate and
    ``tighten`` is set, the lowest seats are compressed again keeping fewer lines
    (``TIGHTER_LINES``) in the same way; code is never cut in either pass.
    """
    check_settings(head, tail, key_lines, key_width)
    if keep_verbatim < 0:
        raise ValueError("keep_verbatim must not be negative")
    if gate_chars is None:
        if window_chars <= 0 or not 0 < gate_ratio <= 1:
            raise ValueError("window_chars must be positive and gate_ratio in (0, 1]")
        gate_chars = int(window_chars * gate_ratio)
    if gate_chars < 0:
        raise ValueError("gate_chars must not be negative")

    original_chars = sum(len(answer.text) for answer in answers)
    over_gate = original_chars > gate_chars
    seats = {index: seat for seat, index in enumerate(_seat_order(answers, keep_verbatim), start=1)}
    decided = []
    for index, answer in enumerate(answers):
        seat = seats[index]
        if not over_gate:
            decision = Decision.UNDER_GATE
        elif seat <= keep_verbatim:
            decision = Decision.VERBATIM_SEAT
        else:
            decision = Decision.WHOLE
        decided.append(
            SeatedAnswer(
                answer=answer,
                view_text=answer.text,
                compressed=False,
                original_chars=len(answer.text),
                view_chars=len(answer.text),
                seat=seat,
                decision=decision,
            )
        )
    if over_gate:
        steps = [(head, tail), *(TIGHTER_LINES if tighten else ())]
        decided = _give_way(decided, gate_chars, steps, key_lines, key_width)
    view_chars = sum(item.view_chars for item in decided)
    return SynthesisInput(
        answers=decided,
        original_chars=original_chars,
        view_chars=view_chars,
        gate_chars=gate_chars,
        over_gate=over_gate,
        under_gate_after=view_chars <= gate_chars,
    )


def _give_way(
    decided: list[SeatedAnswer],
    gate_chars: int,
    steps: list[tuple[int, int]],
    key_lines: int,
    key_width: int,
) -> list[SeatedAnswer]:
    """Compress the seats below the verbatim ones, lowest first and one step at a time,
    until the views are under the gate; the last one compressed then fills the gate."""
    result = list(decided)
    total = sum(item.view_chars for item in result)
    order = sorted(
        (i for i, item in enumerate(result) if item.decision is Decision.WHOLE),
        key=lambda i: -result[i].seat,
    )
    last: int | None = None
    for step, (head, tail) in enumerate(steps):
        for index in order:
            if total <= gate_chars:
                break
            item = result[index]
            view = compress_answer(
                item.answer.text, head=head, tail=tail, key_lines=key_lines, key_width=key_width
            )
            if len(view) >= item.view_chars:
                if item.decision is Decision.WHOLE:
                    result[index] = replace(item, decision=Decision.UNCHANGED)
                continue
            total -= item.view_chars - len(view)
            result[index] = replace(
                item,
                view_text=view,
                compressed=True,
                view_chars=len(view),
                decision=Decision.COMPRESSED if step == 0 else Decision.TIGHTENED,
                lines_kept=(head, tail),
            )
            last = index
        if total <= gate_chars:
            break
    if last is not None and total <= gate_chars:
        item = result[last]
        assert item.lines_kept is not None
        room = gate_chars - (total - item.view_chars)
        head, tail = item.lines_kept
        widest = widest_view(
            item.answer.text, room, head=head, tail=tail, key_lines=key_lines, key_width=key_width
        )
        if widest is not None and len(widest[0]) > item.view_chars:
            view, kept = widest
            whole = view == item.answer.text
            result[last] = replace(
                item,
                view_text=view,
                compressed=not whole,
                view_chars=len(view),
                decision=Decision.WHOLE if whole else item.decision,
                lines_kept=None if whole else kept,
            )
    return result
