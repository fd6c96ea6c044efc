"""round-context: what a persona driven by hand reads, built as `run`'s prompt is built.

The page holds the system prompt `run` sends (the persona and the answer contract: the
sections, the verdict block), then the user message `run` sends, whole
(engine/protocol/material.round_material and engine/prompts.persona_prompt: every round the
persona took part in, each as it was, the current one last: its answers, the peers'
answers, the critiques aimed at it, compressed by the same rules), then the command that
submits the answer. A person's seat is shown the current round's part only.
"""

from __future__ import annotations

from dreamcontext_council import resources
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.rounds import participants
from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.prompting.attachments import attachments_for_prompt
from dreamcontext_council.engine.prompting.synthesis_input import CompressionSettings
from dreamcontext_council.engine.protocol.material import round_material
from dreamcontext_council.engine.protocol.rounds import cross_exam_pairs
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.safe_read import inside
from dreamcontext_council.rules.debate import Debate, bounded_round
from dreamcontext_council.rules.run_settings import DEFAULT_WINDOW
from dreamcontext_council.rules.verdicts import Verdicts


def compression_of(debate: Debate) -> CompressionSettings:
    """The gate a debate's `run:` settings record (`--gate`, `--window`), else the default."""
    settings = debate.run_settings
    return CompressionSettings(
        gate_chars=settings.gate, window_chars=settings.window or DEFAULT_WINDOW
    )


def transcript_budget(settings: CompressionSettings) -> int:
    """The rebuttal transcript's budget: the synthesis gate (--gate, else 0.6 × --window)."""
    if settings.gate_chars is not None:
        return settings.gate_chars
    return int(settings.window_chars * settings.gate_ratio)


def _fact_round(fact: str) -> int | None:
    if fact.startswith("**[Interlude R"):
        digits = fact[len("**[Interlude R") :].split("]", 1)[0]
        return bounded_round(digits)
    return None


def page_round(debate: Debate) -> int:
    """The round a page is for: the running one; else the next (a closed debate: its last)."""
    status = debate.status
    in_round = status.phase in ("running", "synthesizing", "complete")
    return max(debate.current_round if in_round else debate.current_round + 1, 1)


def round_message(
    files: DebateFiles,
    debate: Debate,
    slug: str,
    number: int,
    verdicts: Verdicts | None = None,
    *,
    this_round: bool = False,
) -> tuple[str, str, str | None]:
    """The system prompt `run` would send `slug` in round N (the debate brief, its persona
    and the answer contract), the user message it would send (every round the persona took
    part in, round N's last), or with `this_round` only round N's part of it (what is new
    since the persona's last answer), and the peer it cross-examines, if any."""
    context = files.context(slug)
    material = round_material(
        files,
        debate,
        slug,
        number,
        participants(files, debate, number),
        context,
        verdicts if verdicts is not None else files.verdicts(),
        attachments=attachments_for_prompt(files),
        transcript_budget=transcript_budget(compression_of(debate)),
        pairs=cross_exam_pairs(files, debate, participants(files, debate, 2))
        if number >= 2
        else {},
    )
    prompt = prompts.persona_prompt(slug, context.persona_text, context.aspects, material)
    user = prompt.user
    if this_round:
        user = user[len(user) - len(prompts.round_parts(material)[-1]) :]
    peer = str(material.peer["slug"]) if material.peer else None
    return prompt.system.strip("\n"), user.strip("\n"), peer


def round_context(root: Root, debate_id: str, slug: str, *, this_round: bool = False) -> str:
    """The persona's page for its round: persona, the round's material, how to submit.
    With `this_round` the material is only what the round adds (a person's seat has read
    the earlier rounds as they came); else the whole message `run` sends."""
    files = DebateFiles(root, debate_id)
    debate = files.debate()
    files.require_persona(debate, slug)
    context = files.context(slug)  # its own file conflicted: nothing to stand on, named
    # A file a merge left conflict markers in is left out of the page and named at its top.
    snapshot = load_snapshot(root, debate_id, around_conflicts=True)
    number = page_round(debate)
    system, message, peer = round_message(
        files, debate, slug, number, snapshot.verdicts, this_round=this_round
    )
    status = debate.status
    last_finished = debate.current_round if status.phase != "running" else debate.current_round - 1
    new_facts = [
        f for f in debate.facts() if (r := _fact_round(f)) is not None and r >= last_finished > 0
    ]
    attachment_files = []
    if files.paths.attachments.is_dir():
        # Full paths: a persona sub-agent reads them from wherever it runs; a link out of
        # the debate is refused rather than handed to it.
        attachment_files = [
            {"path": str(p), "size": inside(p, files.paths.folder).stat().st_size}
            for p in sorted(files.paths.attachments.iterdir())
            if p.is_file() and not p.name.startswith(".")
        ]
    return resources.render(
        "views/round-context.md.j2",
        debate_id=debate.id,
        topic=debate.topic,
        round=number,
        rounds_planned=debate.rounds_planned,
        status=str(status),
        persona={"slug": slug, "model": context.model, "aspects": context.aspects},
        system=system,
        material=message,
        new_facts=new_facts,
        last_finished=last_finished,
        attachment_files=attachment_files,
        peer=peer,
        conflicts=snapshot.conflicts,
    )
