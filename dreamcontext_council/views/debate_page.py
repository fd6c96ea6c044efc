"""The debate page as data: header, board, matrix, transcripts, report cards, claims.

One pure function turns a snapshot into a `DebatePage`; the dashboard and the HTML export
render the same page. Every text that came from a model is rendered by `safe_markdown` or
left as plain text for the autoescaping templates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from dreamcontext_council.actions.snapshot import DebateSnapshot, PersonaSnapshot
from dreamcontext_council.errors import CouncilError, FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.names import check_slug, slugify
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import read_text
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.diversity import diversity
from dreamcontext_council.rules.markdown import normalize_title, sections
from dreamcontext_council.rules.report import RoundEntry
from dreamcontext_council.rules.usage import UsageTotals, usage_totals
from dreamcontext_council.views.board import board_figures
from dreamcontext_council.views.safe_markdown import (
    LinkTargets,
    cell_anchor,
    persona_anchor,
    render_markdown,
)

TONES = 8
_ROUND_SECTION = re.compile(r"round (\d+)\b.*")
_KNOWLEDGE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,200}\.md")


def is_inside(path: Path, boundary: Path) -> bool:
    """True when `path` resolves (symlinks followed) to somewhere under `boundary`."""
    try:
        return path.resolve().is_relative_to(boundary.resolve())
    except (OSError, RuntimeError):
        return False


@dataclass(frozen=True)
class Stance:
    """An option or stance as a coloured chip."""

    key: str
    label: str
    tone: int


@dataclass(frozen=True)
class BoardLine:
    slug: str
    anchor: str
    stance: Stance | None
    conviction: int | None
    headline: str | None
    shift: str


@dataclass(frozen=True)
class TallyLine:
    stance: Stance
    count: int
    conviction: int
    share: int  # percent of the round's conviction


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

    @property
    def latest_round(self) -> int | None:
        """The newest round this persona reported; its entry starts open."""
        return max((i.round or 0 for i in self.transcript if i.kind == "entry"), default=None)


@dataclass(frozen=True)
class ReportCard:
    title: str
    anchor: str
    html: Markup
    lead: bool
    collapsed: bool

    @property
    def wide(self) -> bool:
        """Tables need the full width of the page."""
        return "<table" in self.html


@dataclass(frozen=True)
class Claim:
    id: str
    html: Markup
    proposer: str | None
    round: str | None
    supporters: list[str]
    challengers: list[str]
    label: str | None
    research: list[str]


@dataclass(frozen=True)
class ClaimsLedger:
    claims: list[Claim]
    dropped: list[Markup]
    flags: list[Markup]


@dataclass(frozen=True)
class DebatePage:
    """Everything the debate page shows."""

    id: str
    topic: str
    status: str
    status_tone: str
    round: int
    current_round: int
    rounds_planned: int
    convergence: int
    leading: Stance | None
    delta: int | None
    usage: UsageTotals
    created_at: str | None
    updated_at: str | None
    flags: list[str]
    question: Markup
    facts: list[Markup]
    options: list[Stance]
    board: list[BoardLine]
    tally: list[TallyLine]
    columns: list[RoundColumn]
    matrix: list[MatrixRow]
    personas: list[PersonaView]
    report: list[ReportCard]
    claims: ClaimsLedger | None
    knowledge: str | None  # file name under knowledge/, when promoted and safe to link
    knowledge_path: str | None  # the recorded path, as text
    round_log: Markup
    persona_slugs: list[str] = field(default_factory=list)
    models: str = ""  # model diversity: providers and families on the council


def status_tone(status: str) -> str:
    """A CSS word for the status badge."""
    if status == "complete":
        return "done"
    if status.endswith("_running"):
        return "running"
    if status == "synthesizing":
        return "synth"
    if status.endswith("_complete"):
        return "paused"
    return "new"


class _Stances:
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


def _rounds(snapshot: DebateSnapshot) -> list[int]:
    last = max(
        [snapshot.debate.current_round, snapshot.verdicts.last_round()]
        + [e.round for p in snapshot.personas for e in p.entries],
        default=0,
    )
    return list(range(1, last + 1))


def _round_state(snapshot: DebateSnapshot, number: int) -> str:
    status = snapshot.debate.status
    if status.phase == "running" and status.round == number:
        return "running"
    return "complete" if number <= snapshot.debate.current_round else "not started"


def _entry_sections(entry: RoundEntry, targets: LinkTargets) -> list[Section]:
    found = sections(entry.body, 3)
    result = []
    preamble = "\n".join(entry.body.split("\n")[: found[0].start]) if found else entry.body
    if preamble.strip():
        result.append(Section("", render_markdown(preamble, targets)))
    for section in found:
        if normalize_title(section.title) != "executive summary":
            result.append(Section(section.title, render_markdown(section.body, targets)))
    return result


def _matrix(
    snapshot: DebateSnapshot, stances: _Stances, rounds: list[int], targets: LinkTargets
) -> list[MatrixRow]:
    verdicts = snapshot.verdicts
    rows = []
    for slug in _persona_slugs(snapshot):
        persona = snapshot.persona(slug)
        cells = []
        for number in rounds:
            verdict = verdicts.round(number).get(slug)
            previous = verdicts.round(number - 1).get(slug)
            entry = persona.entry(number) if persona else None
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
                    summary=render_markdown(summary, targets) if summary else None,
                    sections=_entry_sections(entry, targets) if entry else [],
                )
            )
        rows.append(MatrixRow(slug, persona_anchor(slug), cells))
    return rows


def _persona_slugs(snapshot: DebateSnapshot) -> list[str]:
    slugs = list(snapshot.debate.personas)
    for votes in snapshot.verdicts.rounds.values():
        slugs += [s for s in votes if s not in slugs]
    return slugs


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
        lines = read_text(path).split("\n")
        # Drop the note's own `# topic` and `_Added … by …_` lines: they are shown apart.
        while lines and (not lines[0].strip() or lines[0].startswith("# ")):
            lines.pop(0)
        if lines and lines[0].startswith("_Added"):
            lines.pop(0)
        notes.append(NoteText(name, topic, added, "\n".join(lines).strip("\n"), None))
    return notes


def _research(persona: PersonaSnapshot, snapshot: DebateSnapshot) -> list[ResearchNote]:
    return [
        ResearchNote(
            note.name,
            note.topic,
            note.added_at,
            render_markdown(note.body, None) if note.body is not None else None,
            note.problem,
            f"research-{persona.slug}-{i}",
        )
        for i, note in enumerate(research_notes(persona, snapshot))
    ]


def _transcript(
    persona: PersonaSnapshot, targets: LinkTargets
) -> tuple[Markup | None, list[TranscriptItem]]:
    context = persona.context
    items: list[TranscriptItem] = []
    persona_html = None
    by_round: dict[int, list[TranscriptItem]] = {}
    if context is not None:
        for n, section in enumerate(sections(context.body, 2)):
            title = normalize_title(section.title)
            html = render_markdown(section.body, targets)
            anchor = f"panel-{persona.slug}-{n}"
            if title == "persona":
                persona_html = html
                continue
            match = _ROUND_SECTION.fullmatch(title)
            if match:
                kind = "directives" if "directives" in title else "cross-context"
                item = TranscriptItem(kind, int(match.group(1)), section.title, html, anchor)
                by_round.setdefault(int(match.group(1)), []).append(item)
            else:
                items.append(TranscriptItem("note", None, section.title, html, anchor))
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
                    render_markdown(entry.body, targets),
                    f"entry-{persona.slug}-{number}",
                )
            )
    return persona_html, items


def _report(snapshot: DebateSnapshot, targets: LinkTargets) -> list[ReportCard]:
    text = snapshot.final_report()
    if text is None:
        return []
    try:
        _, body = frontmatter_io.parse(text, "final-report.md")
    except FormatError:
        body = text
    found = sections(body, 2)
    cards = []
    preamble = "\n".join(body.split("\n")[: found[0].start]) if found else body
    if preamble.strip():
        cards.append(
            ReportCard(
                "Report", "report-preamble", render_markdown(preamble, targets), False, False
            )
        )
    used: set[str] = set()
    for section in found:
        title = normalize_title(section.title)
        anchor = "report-" + (slugify(section.title, 60) or "section")
        while anchor in used:
            anchor += "-x"
        used.add(anchor)
        cards.append(
            ReportCard(
                section.title,
                anchor,
                render_markdown(section.body, targets),
                lead=title == "verdict",
                collapsed=title.startswith("appendix"),
            )
        )
    # The Verdict leads, whatever order the synthesizer wrote.
    return sorted(cards, key=lambda c: not c.lead)


def _names(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int | float)]
    if isinstance(value, str) and value:
        return [value]
    return []


def _text_of(value: Any) -> str:
    if isinstance(value, dict):
        main = value.get("claim") or value.get("text") or value.get("id") or ""
        reason = value.get("reason") or value.get("why")
        return f"{main} — {reason}" if reason else str(main)
    return str(value)


def _claims(snapshot: DebateSnapshot, targets: LinkTargets) -> ClaimsLedger | None:
    data = snapshot.json_file("claims.json")
    if not isinstance(data, dict):
        return None
    claims = []
    raw_claims = data.get("claims")
    for i, item in enumerate(raw_claims if isinstance(raw_claims, list) else []):
        if not isinstance(item, dict):
            continue
        number = item.get("round")
        claims.append(
            Claim(
                id=str(item.get("id", i + 1)),
                html=render_markdown(str(item.get("claim", "")), targets),
                proposer=str(item["proposer"]) if item.get("proposer") else None,
                round=str(number) if number is not None else None,
                supporters=_names(item.get("supporters")),
                challengers=_names(item.get("challengers")),
                label=str(item["label"]) if item.get("label") else None,
                research=_names(item.get("research")),
            )
        )

    def texts(key: str) -> list[Markup]:
        values = data.get(key)
        items = values if isinstance(values, list) else []
        return [render_markdown(_text_of(v), targets) for v in items]

    return ClaimsLedger(claims, texts("dropped"), texts("flags"))


def knowledge_file(snapshot: DebateSnapshot) -> Path | None:
    """The promoted knowledge doc, when recorded as knowledge/<name>.md inside the root."""
    recorded = snapshot.debate.promoted
    if not recorded:
        return None
    folder, _, name = recorded.replace("\\", "/").rpartition("/")
    if folder != "knowledge" or not _KNOWLEDGE_NAME.fullmatch(name):
        return None
    root = Root(snapshot.paths.folder.parent.parent)
    path = root.knowledge / name
    return path if path.is_file() and is_inside(path, root.knowledge) else None


def build_debate_page(snapshot: DebateSnapshot) -> DebatePage:
    """The debate page for a snapshot (pure apart from reading notes, report and claims)."""
    debate = snapshot.debate
    stances = _Stances(snapshot)
    rounds = _rounds(snapshot)
    slugs = _persona_slugs(snapshot)
    targets = LinkTargets.of(slugs, rounds)
    figures = board_figures(snapshot)
    votes_total = sum(t.conviction for t in figures.tally) or 1
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
    personas = []
    for persona in snapshot.personas:
        persona_html, transcript = _transcript(persona, targets)
        context = persona.context
        personas.append(
            PersonaView(
                slug=persona.slug,
                anchor=persona_anchor(persona.slug),
                model=context.model if context else None,
                aspects=list(context.aspects) if context else [],
                persona_html=persona_html,
                transcript=transcript,
                research=_research(persona, snapshot),
                rounds_reported=len(persona.entries),
            )
        )
    status = str(debate.status)
    created = debate.meta.get("created_at")
    updated = debate.meta.get("updated_at")
    return DebatePage(
        id=debate.id,
        topic=debate.topic,
        status=status,
        status_tone=status_tone(status),
        round=figures.round,
        current_round=debate.current_round,
        rounds_planned=debate.rounds_planned,
        convergence=figures.convergence,
        leading=stances.get(figures.leading),
        delta=figures.delta,
        usage=usage_totals(snapshot.usage_records()),
        models=diversity(snapshot.persona_models().values()).line() if snapshot.personas else "",
        created_at=str(created) if created else None,
        updated_at=str(updated) if updated else None,
        flags=debate.flags,
        question=render_markdown(debate.section("Question") or debate.topic, targets),
        facts=[render_markdown(fact, targets) for fact in debate.facts()],
        options=list(stances.by_key.values()),
        board=[
            BoardLine(
                row.slug,
                persona_anchor(row.slug),
                stances.get(row.stance),
                row.conviction,
                row.headline,
                row.shift,
            )
            for row in figures.rows
        ],
        tally=[
            TallyLine(
                stances.get(t.key) or Stance(t.key, t.label, 0),
                t.count,
                t.conviction,
                round(100 * t.conviction / votes_total),
            )
            for t in figures.tally
        ],
        columns=columns,
        matrix=_matrix(snapshot, stances, rounds, targets),
        personas=personas,
        report=_report(snapshot, targets),
        claims=_claims(snapshot, targets),
        knowledge=(found.name if (found := knowledge_file(snapshot)) else None),
        knowledge_path=debate.promoted,
        round_log=render_markdown(snapshot.log, None),
        persona_slugs=slugs,
    )
