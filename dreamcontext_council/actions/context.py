"""round-context: everything a persona sub-agent needs for its round, in one page."""

from __future__ import annotations

from dreamcontext_council import resources
from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.safe_read import inside
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.debate import bounded_round
from dreamcontext_council.rules.report import REQUIRED_SECTIONS


def _fact_round(fact: str) -> int | None:
    if fact.startswith("**[Interlude R"):
        digits = fact[len("**[Interlude R") :].split("]", 1)[0]
        return bounded_round(digits)
    return None


def round_context(root: Root, debate_id: str, slug: str) -> str:
    """The persona's round context: persona, panels, question, facts, options, landscape, directives."""
    snapshot = load_snapshot(root, debate_id, around_conflicts=True)
    debate = snapshot.debate
    from dreamcontext_council.actions.files import DebateFiles

    files = DebateFiles(root, debate_id)
    files.require_persona(debate, slug)
    persona = snapshot.persona(slug)
    assert persona is not None
    if persona.context is None:  # its own file holds conflict markers: nothing to stand on
        files.context(slug)  # raises ConflictMarkers, naming it
    assert persona.context is not None
    status = debate.status
    # A running round is this round; a closed debate has no next one, so it shows its last.
    in_round = status.phase in ("running", "synthesizing", "complete")
    number = debate.current_round if in_round else debate.current_round + 1
    last_finished = debate.current_round if status.phase != "running" else debate.current_round - 1
    votes = snapshot.verdicts.round(last_finished)
    landscape = [
        {"slug": s, "stance": v.stance, "conviction": v.conviction, "headline": v.headline}
        for s, v in votes.items()
    ]
    facts = debate.facts()
    new_facts = [f for f in facts if (r := _fact_round(f)) is not None and r >= last_finished > 0]
    panels = [
        {"round": r, "text": persona.context.panel(r) or ""}
        for r in sorted(persona.context.panel_rounds())
    ]
    attachments = []
    if snapshot.paths.attachments.is_dir():
        # Full paths: a persona sub-agent reads them from wherever it runs; a link out of
        # the debate is refused rather than handed to it.
        attachments = [
            {"path": str(p), "size": inside(p, snapshot.paths.folder).stat().st_size}
            for p in sorted(snapshot.paths.attachments.iterdir())
            if p.is_file() and not p.name.startswith(".")
        ]
    return resources.render(
        "views/round-context.md.j2",
        debate_id=debate.id,
        topic=debate.topic,
        round=max(number, 1),
        rounds_planned=debate.rounds_planned,
        status=str(status),
        persona={
            "slug": slug,
            "model": persona.context.model,
            "aspects": persona.context.aspects,
            "text": persona.context.persona_text,
        },
        question=debate.section("Question") or debate.topic,
        facts=facts,
        new_facts=new_facts,
        last_finished=last_finished,
        attachments=attachments,
        options=snapshot.verdicts.options or debate.options,
        landscape=landscape,
        convergence=metrics.convergence(votes),
        leading=metrics.leading(votes),
        panels=panels,
        directives=persona.context.directives(max(number, 1)),
        sections=REQUIRED_SECTIONS,
        conflicts=snapshot.conflicts,
    )
