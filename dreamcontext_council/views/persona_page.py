"""A persona on the debate page: its transcript (injected panels and round entries in
round order) and its research notes, read only from inside the debate folder."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markupsafe import Markup

from dreamcontext_council.actions.snapshot import DebateSnapshot, PersonaSnapshot
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.names import check_slug
from dreamcontext_council.folder.storage import read_text
from dreamcontext_council.rules.debate import bounded_round
from dreamcontext_council.rules.markdown import normalize_title, sections
from dreamcontext_council.rules.tool_note import CallFacts, call_facts
from dreamcontext_council.views.contained import is_inside
from dreamcontext_council.views.safe_markdown import (
    ENTRY_HEADING_FLOOR,
    LinkTargets,
    render_markdown,
)

_ROUND_SECTION = re.compile(r"round (\d+)\b.*")


@dataclass(frozen=True)
class TranscriptItem:
    """A step of a persona's transcript: an injected panel or a round entry."""

    kind: str  # cross-context | directives | entry | note
    round: int | None
    title: str
    html: Markup
    anchor: str


@dataclass(frozen=True)
class ResearchNote:
    name: str
    topic: str
    added_at: str
    html: Markup | None
    problem: str | None
    anchor: str
    call: CallFacts | None = None
    """The tool call the note records (round, outcome); None for a note written by hand."""


@dataclass(frozen=True)
class PersonaView:
    slug: str
    anchor: str
    model: str | None
    aspects: list[str]
    persona_html: Markup | None
    transcript: list[TranscriptItem]
    research: list[ResearchNote]
    rounds_reported: int
    person: bool = False  # a person answers this seat (`model: human`): a person chip, no model

    @property
    def latest_round(self) -> int | None:
        """The newest round this persona reported; its entry starts open."""
        return max((i.round or 0 for i in self.transcript if i.kind == "entry"), default=None)


@dataclass(frozen=True)
class NoteText:
    """A research note as markdown, or why it could not be read."""

    name: str
    topic: str
    added_at: str
    body: str | None
    problem: str | None


def research_notes(persona: PersonaSnapshot, snapshot: DebateSnapshot) -> list[NoteText]:
    """The persona's research notes from its index; unsafe names are listed, never opened."""
    notes = []
    for item in persona.research:
        name = str(item.get("slug", ""))
        topic = str(item.get("topic", name))
        added = str(item.get("added_at", ""))
        try:
            check_slug(name, "research note name")
        except CouncilError:
            notes.append(NoteText(name, topic, added, None, "not a safe file name; not read"))
            continue
        path = snapshot.paths.folder / persona.slug / "researches" / f"{name}.md"
        if not path.is_file() or not is_inside(path, snapshot.paths.folder):
            notes.append(NoteText(name, topic, added, None, "note file missing"))
            continue
        lines = read_text(path, within=snapshot.paths.folder).split("\n")
        # Drop the note's own `# topic` and `_Added … by …_` lines: they are shown apart.
        while lines and (not lines[0].strip() or lines[0].startswith("# ")):
            lines.pop(0)
        if lines and lines[0].startswith("_Added"):
            lines.pop(0)
        notes.append(NoteText(name, topic, added, "\n".join(lines).strip("\n"), None))
    return notes


def research_views(persona: PersonaSnapshot, snapshot: DebateSnapshot) -> list[ResearchNote]:
    """Research notes rendered for the page."""
    return [
        ResearchNote(
            note.name,
            note.topic,
            note.added_at,
            render_markdown(note.body, None) if note.body is not None else None,
            note.problem,
            f"research-{persona.slug}-{i}",
            call_facts(note.body) if note.body is not None else None,
        )
        for i, note in enumerate(research_notes(persona, snapshot))
    ]


def transcript(
    persona: PersonaSnapshot, targets: LinkTargets, *, render: bool = True
) -> tuple[Markup | None, list[TranscriptItem]]:
    """The persona text, then panels and round entries in round order; without `render`
    the steps are listed with empty bodies (the page loads them on demand)."""

    def rendered(text: str) -> Markup:
        if not render:
            return Markup("")
        return render_markdown(text, targets, heading_floor=ENTRY_HEADING_FLOOR)

    context = persona.context
    items: list[TranscriptItem] = []
    persona_html = None
    by_round: dict[int, list[TranscriptItem]] = {}
    if context is not None:
        for n, section in enumerate(sections(context.body, 2)):
            title = normalize_title(section.title)
            anchor = f"panel-{persona.slug}-{n}"
            if title == "persona":
                persona_html = render_markdown(
                    section.body, targets, heading_floor=ENTRY_HEADING_FLOOR
                )
                continue
            match = _ROUND_SECTION.fullmatch(title)
            number = bounded_round(match.group(1)) if match else None
            if number is not None:
                kind = "directives" if "directives" in title else "cross-context"
                item = TranscriptItem(kind, number, section.title, rendered(section.body), anchor)
                by_round.setdefault(number, []).append(item)
            else:
                items.append(
                    TranscriptItem("note", None, section.title, rendered(section.body), anchor)
                )
    entries = {e.round: e for e in persona.entries}
    for number in sorted(set(by_round) | set(entries)):
        items += by_round.get(number, [])
        entry = entries.get(number)
        if entry is not None:
            title = f"Round {number}" + (f" — {entry.date}" if entry.date else "")
            items.append(
                TranscriptItem(
                    "entry",
                    number,
                    title,
                    rendered(entry.body),
                    f"entry-{persona.slug}-{number}",
                )
            )
    return persona_html, items
