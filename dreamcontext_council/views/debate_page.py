"""The debate page as data: header, board, matrix, transcripts, report cards, claims.

One pure function turns a snapshot into a `DebatePage`; the dashboard and the HTML export
render the same page. Every text that came from a model is rendered by `safe_markdown` or
left as plain text for the autoescaping templates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from dreamcontext_council.actions.snapshot import DebateSnapshot, PersonaSnapshot
from dreamcontext_council.rules.diversity import diversity
from dreamcontext_council.rules.sealing import SEALED
from dreamcontext_council.rules.usage import UsageTotals, usage_totals
from dreamcontext_council.views.board import board_figures
from dreamcontext_council.views.persona_page import (
    PersonaView,
    research_views,
    transcript,
)
from dreamcontext_council.views.positions_by_round import (
    MatrixRow,
    RoundColumn,
    Stance,
    Stances,
    link_targets,
    matrix,
    persona_slugs,
    round_columns,
    round_numbers,
)
from dreamcontext_council.views.report_page import (
    ClaimsLedger,
    Elsewhere,
    ReportCard,
    claims_ledger,
    knowledge_file,
    report_cards,
)
from dreamcontext_council.views.safe_markdown import (
    LinkTargets,
    persona_anchor,
    render_markdown,
)

# Past this much entry text the live page leaves whole entries and transcripts out and
# loads them on demand: a 10-persona, 4-round debate of 20 KB entries is about 800 KB.
ON_DEMAND_BYTES = 200_000


@dataclass(frozen=True)
class BoardLine:
    slug: str
    anchor: str
    stance: Stance | None
    conviction: int | None
    headline: str | None
    shift: str
    person: bool = False  # a person answers this seat
    sealed: bool = False  # answered round 1, which is sealed for a person's seat


@dataclass(frozen=True)
class TallyLine:
    stance: Stance
    count: int
    conviction: int
    share: int  # percent of the round's conviction


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
    outcome: list[ReportCard]  # the Verdict and the decision card: what the page opens with
    report: list[ReportCard]  # the report's other sections
    claims: ClaimsLedger | None
    knowledge: str | None  # file name under knowledge/, when promoted and safe to link
    knowledge_path: str | None  # the recorded path, as text
    round_log: Markup
    persona_slugs: list[str] = field(default_factory=list)
    models: str = ""  # model diversity: providers and families on the council
    run_state: str = ""  # `running` or `stopped` while a `council run` drives it or stopped short
    waiting: str = ""  # `waiting for alice` while the live run waits on a person's seat
    run_line: str = ""  # `stopped: <reason>, resume with dreamcontext council run <id>`
    on_demand: bool = False  # whole entries and transcripts are fetched when opened
    measures: list[str] = field(default_factory=list)  # flips, new content, anchoring
    solo: str = ""  # solo answer vs council verdict (`run --baseline`)
    solo_lacking: list[str] = field(default_factory=list)  # ledger claims the solo answer lacks
    conflicts: list[str] = field(default_factory=list)  # files left out: git conflict markers
    sealed: str = SEALED  # what a sealed round-1 answer shows in place of its verdict

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def status_label(self) -> str:
        """The status badge: `stopped` for a run that stopped short, `waiting for alice`
        while the live run waits on a person, else the status."""
        if self.run_state == "stopped":
            return "stopped"
        return self.waiting or self.status


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


def run_tone(state: str, waiting: str, status: str) -> str:
    """The badge's CSS word when a run's state says more than the status: `stopped`,
    `waiting` (on a person's seat), else the status's own tone."""
    if state == "stopped":
        return "stopped"
    return "waiting" if waiting else status_tone(status)


def is_long(snapshot: DebateSnapshot) -> bool:
    """Whether the debate's entries are long enough to load on demand on the live page."""
    return sum(len(e.body) for p in snapshot.personas for e in p.entries) > ON_DEMAND_BYTES


def persona_transcript(snapshot: DebateSnapshot, slug: str) -> PersonaView | None:
    """One persona with its whole transcript rendered, for the on-demand part of the page."""
    persona = snapshot.persona(slug)
    return _persona_view(persona, snapshot, link_targets(snapshot)) if persona else None


def _persona_view(
    persona: PersonaSnapshot, snapshot: DebateSnapshot, targets: LinkTargets, *, render: bool = True
) -> PersonaView:
    persona_html, steps = transcript(persona, targets, render=render)
    context = persona.context
    return PersonaView(
        slug=persona.slug,
        anchor=persona_anchor(persona.slug),
        model=context.model if context else None,
        aspects=list(context.aspects) if context else [],
        persona_html=persona_html,
        transcript=steps,
        research=research_views(persona, snapshot),
        rounds_reported=len(persona.entries),
        person=persona.person,
    )


def build_debate_page(snapshot: DebateSnapshot, *, on_demand: bool = False) -> DebatePage:
    """The debate page for a snapshot (pure apart from reading notes, report and claims).

    `on_demand` leaves whole entries and transcripts out: the live page fetches them
    (`positions_by_round.entry_sections`, `persona_transcript`) when they are opened."""
    debate = snapshot.debate
    stances = Stances(snapshot)
    rounds = round_numbers(snapshot)
    slugs = persona_slugs(snapshot)
    targets = LinkTargets.of(slugs, rounds)
    figures = board_figures(snapshot)
    votes_total = sum(t.conviction for t in figures.tally) or 1
    columns = round_columns(snapshot, stances, rounds)
    personas = [
        _persona_view(persona, snapshot, targets, render=not on_demand)
        for persona in snapshot.personas
    ]
    claims = claims_ledger(snapshot, targets)
    measures = snapshot.measures()
    elsewhere = Elsewhere(
        diversity=bool(snapshot.personas),  # the Models stat
        measures=bool(measures.novelty),  # the measures under the stats
        flags=bool(claims and claims.flags),  # the claims ledger's Flags
    )
    cards = report_cards(snapshot, targets, elsewhere)
    status = str(debate.status)
    run = snapshot.run_state()
    created = debate.meta.get("created_at")
    updated = debate.meta.get("updated_at")
    return DebatePage(
        id=debate.id,
        topic=debate.topic,
        status=status,
        status_tone=run_tone(run.state if run else "", run.waiting if run else "", status),
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
        conflicts=snapshot.conflicts,
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
                row.person,
                row.sealed,
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
        matrix=matrix(
            snapshot,
            stances,
            rounds,
            targets,
            whole=not on_demand,
            research={p.slug: p.research for p in personas},
        ),
        personas=personas,
        outcome=[card for card in cards if card.lead or card.decision],
        # One claims ledger: claims.json's, with its flags, when the engine wrote it.
        report=[
            card
            for card in cards
            if not (card.lead or card.decision or (claims is not None and card.ledger))
        ],
        claims=claims,
        knowledge=(found.name if (found := knowledge_file(snapshot)) else None),
        knowledge_path=debate.promoted,
        round_log=render_markdown(snapshot.log, None),
        persona_slugs=slugs,
        run_state=run.state if run else "",
        run_line=run.line() if run else "",
        waiting=run.waiting if run else "",
        on_demand=on_demand,
        measures=measures.lines() if measures.novelty else [],
        solo=solo.line() if (solo := snapshot.solo_comparison()) else "",
        solo_lacking=solo.lacking if solo else [],
    )
