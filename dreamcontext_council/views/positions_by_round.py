"""Positions by round on the debate page: the matrix of personas × rounds.

Its column heads (each round's state, convergence and leading option), one row per persona
of cells with the verdict and the entry, each entry's sections as a cell shows them when
opened, and the stances that the matrix, the board and the tally show as coloured chips.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from markupsafe import Markup

from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.debate import MAX_ROUNDS
from dreamcontext_council.rules.markdown import normalize_title, sections
from dreamcontext_council.rules.report import RoundEntry
from dreamcontext_council.rules.sealing import SEALED_ROUND
from dreamcontext_council.views.persona_page import ResearchNote
from dreamcontext_council.views.safe_markdown import (
    ENTRY_HEADING_FLOOR,
    LinkTargets,
    cell_anchor,
    persona_anchor,
    render_markdown,
)

TONES = 8


@dataclass(frozen=True)
class Stance:
    """An option or stance as a coloured chip."""

    key: str
    label: str
    tone: int


@dataclass(frozen=True)
class Section:
    title: str
    html: Markup


@dataclass(frozen=True)
class MatrixCell:
    slug: str
    round: int
    anchor: str
    stance: Stance | None
    conviction: int | None
    headline: str | None
    concession: str | None
    shift: str
    date: str | None
    summary: Markup | None
    sections: list[Section]
    tool_calls: list[ResearchNote] = field(default_factory=list)
    """The persona's tool calls of this round, oldest first, as their research notes."""
    sealed: bool = False
    """Answered, in round 1 while it is sealed for a person's seat: nothing of it is shown."""


@dataclass(frozen=True)
class MatrixRow:
    slug: str
    anchor: str
    cells: list[MatrixCell]


@dataclass(frozen=True)
class RoundColumn:
    number: int
    state: str
    convergence: int | None
    leading: Stance | None


class Stances:
    def __init__(self, snapshot: DebateSnapshot) -> None:
        verdicts = snapshot.verdicts
        options = verdicts.options or snapshot.debate.options
        keys = [str(o["key"]) for o in options]
        seen = {v.stance for votes in verdicts.rounds.values() for v in votes.values()}
        keys += sorted(seen - set(keys))
        labels = {str(o["key"]): str(o["label"]) for o in options}
        self.by_key = {
            key: Stance(key, labels.get(key, verdicts.label(key)), i % TONES)
            for i, key in enumerate(keys)
        }

    def get(self, key: str | None) -> Stance | None:
        if key is None:
            return None
        return self.by_key.get(key) or Stance(key, key, len(self.by_key) % TONES)


def round_numbers(snapshot: DebateSnapshot) -> list[int]:
    last = max(
        [snapshot.debate.current_round, snapshot.verdicts.last_round()]
        + [e.round for p in snapshot.personas for e in p.entries],
        default=0,
    )
    return list(range(1, min(last, MAX_ROUNDS) + 1))


def _round_state(snapshot: DebateSnapshot, number: int) -> str:
    status = snapshot.debate.status
    if status.phase == "running" and status.round == number:
        return "running"
    return "complete" if number <= snapshot.debate.current_round else "not started"


def round_columns(
    snapshot: DebateSnapshot, stances: Stances, rounds: list[int]
) -> list[RoundColumn]:
    """The matrix's column heads: each round's state, convergence and leading option."""
    columns = []
    for number in rounds:
        votes = snapshot.verdicts.round(number)
        lead = metrics.leading(votes)
        columns.append(
            RoundColumn(
                number,
                _round_state(snapshot, number),
                metrics.convergence(votes) if votes else None,
                stances.get(lead),
            )
        )
    return columns


def _entry_markdown(text: str, targets: LinkTargets) -> Markup:
    return render_markdown(text, targets, heading_floor=ENTRY_HEADING_FLOOR)


def _entry_sections(entry: RoundEntry, targets: LinkTargets) -> list[Section]:
    found = sections(entry.body, 3)
    result = []
    preamble = "\n".join(entry.body.split("\n")[: found[0].start]) if found else entry.body
    if preamble.strip():
        result.append(Section("", _entry_markdown(preamble, targets)))
    for section in found:
        if normalize_title(section.title) != "executive summary":
            result.append(Section(section.title, _entry_markdown(section.body, targets)))
    return result


def link_targets(snapshot: DebateSnapshot) -> LinkTargets:
    """What citations and mentions on this debate's page may link to."""
    return LinkTargets.of(persona_slugs(snapshot), round_numbers(snapshot))


def entry_sections(snapshot: DebateSnapshot, slug: str, number: int) -> list[Section]:
    """One persona's whole entry for one round, as the matrix cell shows it when opened."""
    persona = snapshot.persona(slug)
    entry = persona.entry(number) if persona else None
    return _entry_sections(entry, link_targets(snapshot)) if entry else []


def matrix(
    snapshot: DebateSnapshot,
    stances: Stances,
    rounds: list[int],
    targets: LinkTargets,
    *,
    whole: bool,
    research: Mapping[str, list[ResearchNote]],
) -> list[MatrixRow]:
    verdicts = snapshot.verdicts
    rows = []
    for slug in persona_slugs(snapshot):
        persona = snapshot.persona(slug)
        cells = []
        for number in rounds:
            verdict = verdicts.round(number).get(slug)
            previous = verdicts.round(number - 1).get(slug)
            sealed = number == SEALED_ROUND and slug in snapshot.sealed
            # A sealed answer's entry says only that it is sealed, as the cell's head does.
            entry = persona.entry(number) if persona and not sealed else None
            summary = entry.executive_summary if entry else None
            cells.append(
                MatrixCell(
                    slug=slug,
                    round=number,
                    anchor=cell_anchor(slug, number),
                    stance=stances.get(verdict.stance) if verdict else None,
                    conviction=verdict.conviction if verdict else None,
                    headline=verdict.headline if verdict else None,
                    concession=verdict.concession if verdict else None,
                    shift=metrics.shift(previous, verdict) if verdict else "·",
                    date=entry.date if entry else None,
                    summary=_entry_markdown(summary, targets) if summary else None,
                    sections=_entry_sections(entry, targets) if entry and whole else [],
                    tool_calls=[
                        note
                        for note in reversed(research.get(slug, []))
                        if note.call is not None and note.call.round == number
                    ],
                    sealed=sealed,
                )
            )
        rows.append(MatrixRow(slug, persona_anchor(slug), cells))
    return rows


def persona_slugs(snapshot: DebateSnapshot) -> list[str]:
    slugs = list(snapshot.debate.personas)
    for votes in snapshot.verdicts.rounds.values():
        slugs += [s for s in votes if s not in slugs]
    return slugs
