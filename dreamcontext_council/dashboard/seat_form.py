"""A person's seat answered from the debate page: the round's page and the entry's form.

While a round runs, each person's seat (`model: human`) without its entry for the round
gets the page `round-context` prints (the answer contract included) and a form: stance,
conviction, headline, concession, and one field per section (round 2's critic adds its
cross-examination and score). The form is put together as the answer `run` asks a model
for, the sections then the ```verdict block, and recorded by `report append`'s own
function (engine/protocol/cross_exam.append_entry): the same checks, the verdict and the
entry together or neither. A refusal names the fields it is about; the page shows it
beside them with every word kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.rounds import participants
from dreamcontext_council.dashboard.write_path import bounded
from dreamcontext_council.engine.protocol.cross_exam import append_entry
from dreamcontext_council.engine.protocol.round_page import round_context
from dreamcontext_council.engine.protocol.rounds import cross_exam_pairs
from dreamcontext_council.engine.protocol.seat_watch import entry_landed
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.names import check_slug
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules import limits
from dreamcontext_council.rules.seats import is_person


@dataclass(frozen=True)
class Field:
    """One field of the entry's form: its `name`, its label, the section it fills (None:
    a verdict line) and its most characters."""

    name: str
    label: str
    section: str | None
    limit: int
    lines: int = 1


VERDICT_FIELDS = (
    Field("stance", "Stance", None, limits.MAX_STANCE_CHARS),
    Field("conviction", "Conviction (0-100)", None, 3),
    Field("headline", "Headline", None, limits.MAX_HEADLINE_CHARS),
    Field("concession", "Concession (optional)", None, limits.MAX_CONCESSION_CHARS),
)
SECTION_FIELDS = (
    Field("executive_summary", "Executive Summary", "Executive Summary", limits.MAX_ENTRY_CHARS, 4),
    Field("position", "Position", "Position", limits.MAX_ENTRY_CHARS, 3),
    Field("reasoning", "Reasoning", "Reasoning", limits.MAX_ENTRY_CHARS, 8),
    Field(
        "reactions_to_peers", "Reactions to peers", "Reactions to peers", limits.MAX_ENTRY_CHARS, 4
    ),
)
CROSS_FIELDS = (
    Field("cross_examination", "Cross-examination", "Cross-examination", limits.MAX_ENTRY_CHARS, 6),
    Field("score", "Score (1-10)", None, 4),
)
LAST_FIELDS = (
    Field("open_questions", "Open questions", "Open questions", limits.MAX_ENTRY_CHARS, 3),
)
# Words of a refusal that point at a field, besides its section's title.
_MENTIONS = {
    "stance": ("stance", "option"),
    "conviction": ("conviction",),
    "headline": ("headline",),
    "concession": ("concession",),
    "score": ("score",),
}


@dataclass(frozen=True)
class Seat:
    """A person's seat waiting for its entry in the running round, as the page shows it."""

    debate_id: str
    slug: str
    round: int
    peer: str | None
    options: tuple[tuple[str, str], ...]
    context: str
    fields: tuple[Field, ...]
    values: Mapping[str, str] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)
    problem: str | None = None

    @property
    def key(self) -> str:
        """Which seat and round the form is for: a draft is kept under it."""
        return f"{self.debate_id}/{self.slug}/{self.round}"


def read_values(form: Mapping[str, str]) -> dict[str, str]:
    """The entry's fields of a posted form, each bounded by its limit (413 past it)."""
    every = (*VERDICT_FIELDS, *SECTION_FIELDS, *CROSS_FIELDS, *LAST_FIELDS)
    return {f.name: bounded(form, f.name, f.limit, f"The field {f.label}") for f in every}


def form_fields(peer: str | None) -> tuple[Field, ...]:
    """The form's fields in the entry's order; a round-2 critic's add its cross-examination."""
    return (*VERDICT_FIELDS, *SECTION_FIELDS, *(CROSS_FIELDS if peer else ()), *LAST_FIELDS)


def open_seats(root: Root, debate_id: str) -> list[Seat]:
    """The person's seats of the running round that have yet to give their entry."""
    files = DebateFiles(root, debate_id)
    debate = files.debate()
    if debate.status.phase != "running":
        return []
    number = debate.current_round
    seats = []
    for slug in participants(files, debate, number):
        if not is_person(files.context(slug).model) or entry_landed(files, slug, number):
            continue
        seats.append(seat_of(files, slug, number))
    return seats


def seat_of(files: DebateFiles, slug: str, number: int) -> Seat:
    """One seat's page and empty form for round `number`."""
    debate = files.debate()
    peer = None
    if number == 2:
        peer = cross_exam_pairs(files, debate, participants(files, debate, 2)).get(slug)
    registered = debate.options or files.verdicts().options
    options = tuple((o["key"], o.get("label", "")) for o in registered)
    context = round_context(files.root, files.id, slug, this_round=True)
    return Seat(files.id, slug, number, peer, options, context, form_fields(peer))


def answer_text(seat: Seat, values: Mapping[str, str]) -> str:
    """The answer as `run` asks a model for it: each section, then the ```verdict block.

    A section left empty stays empty, so the check names it."""
    parts = []
    for item in seat.fields:
        if item.section is None:
            continue
        text = values.get(item.name, "").strip()
        if item.name == "cross_examination":
            score = values.get("score", "").strip()
            text = f"{text}\n\nScore: {score}/10" if score else text
        parts.append(f"### {item.section}\n{text}\n")
    concession = " ".join(values.get("concession", "").split()) or "none"
    verdict = [
        "```verdict",
        f"stance: {' '.join(values.get('stance', '').split())}",
        f"conviction: {values.get('conviction', '').strip()}",
        f"headline: {' '.join(values.get('headline', '').split())}",
        f"concession: {concession}",
        "```",
    ]
    return "\n".join(parts) + "\n" + "\n".join(verdict) + "\n"


def record_seat(root: Root, debate_id: str, slug: str, values: Mapping[str, str]) -> Seat | None:
    """Record the form as the seat's entry and verdict for the running round, as `report
    append` does; None when recorded, else the seat again with the values kept and the
    refusal beside the fields it names."""
    check_slug(slug)
    seat = next((s for s in open_seats(root, debate_id) if s.slug == slug), None)
    if seat is None:
        raise CouncilError(
            f"{slug} has no round waiting for an entry in {debate_id}: its entry is recorded "
            "already, or no round runs."
        )
    kept = {f.name: values.get(f.name, "") for f in seat.fields}
    try:
        append_entry(root, debate_id, slug, answer_text(seat, kept), number=seat.round)
    except CouncilError as refusal:
        message = str(refusal)
        errors = {f.name: message for f in seat.fields if _names(message, f)}
        return Seat(
            seat.debate_id,
            seat.slug,
            seat.round,
            seat.peer,
            seat.options,
            seat.context,
            seat.fields,
            kept,
            errors,
            None if errors else message,
        )
    return None


def _names(message: str, item: Field) -> bool:
    """Whether a refusal is about this field: it names its section or its verdict line."""
    lowered = message.lower()
    if item.section is not None and f"### {item.section}".lower() in lowered:
        return True
    if item.section == "Cross-examination" and "cross-examination" in lowered:
        return True
    return any(word in lowered for word in _MENTIONS.get(item.name, ()))
