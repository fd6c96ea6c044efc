"""Orchestrator commands: new, agent, round, inject, question, synthesize, complete, promote."""

from __future__ import annotations

import os

import click

from dreamcontext_council.actions import closing, convene, interlude, rounds
from dreamcontext_council.actions.files import read_body
from dreamcontext_council.cli.base import (
    ROUND_NUMBER,
    current_root,
    echo,
    emit,
    explicit_root,
    json_option,
    read_stdin_bytes,
    root_option,
    warn,
)
from dreamcontext_council.cli.completion import complete_debate_id, complete_persona
from dreamcontext_council.folder.paths import Root, root_for_new
from dreamcontext_council.rules.grounding import check_attachments
from dreamcontext_council.rules.roster import PersonaSpec, load_roster


def register_orchestrator(council: click.Group) -> None:
    """Add the orchestrator commands to the `council` group."""
    council.add_command(new)
    council.add_command(new, name="create")
    council.add_command(agent)
    council.add_command(round_group)
    council.add_command(inject)
    council.add_command(question)
    council.add_command(synthesize)
    council.add_command(complete)
    council.add_command(promote)


@click.command()
@click.argument("topic", nargs=-1, required=True)
@click.option(
    "--rounds",
    type=int,
    help=f"Rounds planned (1-10; default {convene.DEFAULT_ROUNDS}, "
    f"{convene.GROUNDED_ROUNDS} with --attach).",
)
@click.option(
    "--options", "options_spec", help='Registered options, as "A=Migrate now,B=Stay on Redis".'
)
@click.option("--interrupt", is_flag=True, help="Stop for interludes between rounds.")
@click.option(
    "--personas", "personas_spec", help="A preset name (cognitive, engineering) or a roster file."
)
@click.option(
    "--attach",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A text file the council must read (repeatable).",
)
@click.option(
    "--tools",
    type=click.Path(dir_okay=False),
    help="MCP servers the personas may call when the debate is run (docs/mcp.md).",
)
@root_option
@json_option
def new(
    topic: tuple[str, ...],
    rounds: int | None,
    options_spec: str | None,
    interrupt: bool,
    personas_spec: str | None,
    attach: tuple[str, ...],
    tools: str | None,
    as_json: bool,
) -> None:
    """Create a debate folder; its id is printed alone on the last line.

    \b
    Example:
      dreamcontext council new "Should we migrate the session store to Postgres?" \\
        --options "A=Migrate now,B=Stay on Redis" --rounds 2
    """
    question = convene.check_topic(" ".join(topic))
    options = convene.parse_options(options_spec)
    if rounds is not None:
        convene.check_rounds(rounds)
    roster = load_roster(personas_spec) if personas_spec else None
    attachments = check_attachments(list(attach))
    tools_plan = None
    if tools:
        from dreamcontext_council.actions.files import DebateFiles
        from dreamcontext_council.engine.research import session as research
        from dreamcontext_council.rules.debate import RUN_KEY

        tools_plan = research.plan(tools, None)
    root, created = root_for_new(explicit_root())  # only once the input is known to be good
    debate = convene.new_debate(
        root,
        question,
        rounds=rounds,
        options=options,
        interrupt=interrupt,
        personas=roster,
        attachments=attachments,
        extra={RUN_KEY: {"tools": str(tools_plan.path)}} if tools_plan else None,
        research=tools_plan is not None,
    )
    if roster:
        _allow_named_models(root, debate.id, [p.model for p in roster])
    if tools_plan:
        # Naming the tools file here was the consent for its servers in this debate.
        research.allow(DebateFiles(root, debate.id), tools_plan, dict(os.environ))
    if as_json:
        emit(
            {
                "id": debate.id,
                "topic": debate.topic,
                "root": str(root.path),
                "personas": debate.personas,
            },
            True,
            "",
        )
        return
    if created:
        echo(f"Created {root.path} (no _dream_context/ was found here or above).")
    echo(f"Debate created: {debate.topic}")
    if debate.personas:
        echo(f"Personas: {', '.join(debate.personas)}")
    echo(
        f"Next: dreamcontext council agent create {debate.id} <slug> --body ...  then  round start {debate.id} 1"
    )
    echo(debate.id)


@click.group()
def agent() -> None:
    """Seat personas and list the roster."""


@agent.command("create")
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("slug")
@click.option(
    "--model",
    default="",
    help="Model for this persona, e.g. sonnet, openai:gpt-4o, command:'claude -p'.",
)
@click.option("--aspects", default="", help="Comma-separated aspects the persona obsesses over.")
@click.option("--body", help="The persona text (else read from stdin).")
@click.option(
    "--force",
    is_flag=True,
    help="Replace the persona text of an existing persona; reports are kept.",
)
@root_option
@json_option
def agent_create(
    debate_id: str,
    slug: str,
    model: str,
    aspects: str,
    body: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Add a persona to a debate.

    \b
    Example:
      dreamcontext council agent create council_AbC12345 risk-auditor --model sonnet \\
        --aspects "risk,rollback" --body "You are the risk auditor ..."
    """
    root = current_root()
    text = read_body(body, read_stdin_bytes(body), "persona text")
    spec = PersonaSpec(slug, text, model, [a.strip() for a in aspects.split(",") if a.strip()])
    result = convene.create_agent(root, debate_id, spec, force=force)
    _allow_named_models(root, debate_id, [model])
    verb = "added to" if result.created else "updated in"
    emit(
        {"debate": debate_id, "slug": result.slug, "created": result.created},
        as_json,
        f"Persona {result.slug} {verb} {debate_id}.",
    )


def _allow_named_models(root: Root, debate_id: str, models: list[str]) -> None:
    """A `command:` model the user typed (or put in the roster file they named) may run."""
    from dreamcontext_council.actions.files import DebateFiles
    from dreamcontext_council.engine.providers.consent import allow_named_models

    allow_named_models(DebateFiles(root, debate_id), models, dict(os.environ))


@agent.command("list")
@click.argument("debate_id", shell_complete=complete_debate_id)
@root_option
@json_option
def agent_list(debate_id: str, as_json: bool) -> None:
    """The roster with model, aspects and rounds reported.

    A persona file with git conflict markers is named on stderr and its row shown without it.

    \b
    Example:
      dreamcontext council agent list council_AbC12345
    """
    rows = convene.list_agents(current_root(), debate_id)
    for row in rows:
        for line in row.conflicts:
            warn(f"{line} Shown without it.")
    data = [r.__dict__ for r in rows]

    def text() -> str:
        if not rows:
            return f"No personas yet; add one with `dreamcontext council agent create {debate_id} <slug>`."
        width = max(len(r.slug) for r in rows)
        return "\n".join(
            f"{r.slug:<{width}}  {'person' if r.person else r.model or '-':<16}  rounds {','.join(map(str, r.rounds_reported)) or '-':<8}  {', '.join(r.aspects)}"
            for r in rows
        )

    emit(data, as_json, text)


@click.group("round")
def round_group() -> None:
    """Start, end and extend rounds."""


def _round_result(change: rounds.RoundChange, as_json: bool) -> None:
    emit(change.__dict__, as_json, change.message)


@round_group.command("start")
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("number", type=ROUND_NUMBER)
@root_option
@json_option
def round_start(debate_id: str, number: int, as_json: bool) -> None:
    """Start round N; from round 2 inject the cross-context panel into every persona (once).

    Round 1 records the cross-examination seed; round 2 pairs each persona with the peer it
    cross-examines (recorded in debate.md, queued as a directive), as `run` does.

    \b
    Example:
      dreamcontext council round start council_AbC12345 1
    """
    from dreamcontext_council.engine.protocol.cross_exam import open_round

    _round_result(open_round(current_root(), debate_id, number), as_json)


@round_group.command("end")
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("number", type=ROUND_NUMBER)
@click.option(
    "--excuse", multiple=True, help="A persona whose missing report is accepted (repeatable)."
)
@click.option(
    "--early-stop",
    is_flag=True,
    help="End the debating when this round and the last reach 90% convergence (as run --early-stop).",
)
@root_option
@json_option
def round_end(
    debate_id: str, number: int, excuse: tuple[str, ...], early_stop: bool, as_json: bool
) -> None:
    """Close round N; fails naming every persona whose report is missing.

    \b
    Example:
      dreamcontext council round end council_AbC12345 1
    """
    if not early_stop:
        _round_result(rounds.end_round(current_root(), debate_id, number, excused=excuse), as_json)
        return
    from dreamcontext_council.engine.protocol.by_hand import close_round

    ended = close_round(current_root(), debate_id, number, excused=excuse, early_stop=True)
    message = ended.change.message
    if ended.early_stop:
        message += (
            " Early stop: 90% convergence or more in two rounds running; run "
            f"`dreamcontext council synthesize {debate_id}`."
        )
    else:
        message += " No early stop: convergence is not 90% or more in two rounds running."
    emit(ended.change.__dict__ | {"early_stop": ended.early_stop}, as_json, message)


@round_group.command("extend")
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.option("--by", type=int, default=1, show_default=True, help="How many rounds to add.")
@root_option
@json_option
def round_extend(debate_id: str, by: int, as_json: bool) -> None:
    """Raise rounds_planned (escalation: one more round).

    \b
    Example:
      dreamcontext council round extend council_AbC12345 --by 1
    """
    _round_result(rounds.extend_rounds(current_root(), debate_id, by), as_json)


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("fact", nargs=-1, required=True)
@root_option
@json_option
def inject(debate_id: str, fact: tuple[str, ...], as_json: bool) -> None:
    """Append a fact to Constraints & Known Facts for every persona to see.

    \b
    Example:
      dreamcontext council inject council_AbC12345 "Postgres is already run by the platform team"
    """
    added = interlude.inject_fact(current_root(), debate_id, " ".join(fact))
    emit(
        {"debate": debate_id, "added": added},
        as_json,
        "Fact added." if added else "That fact is already recorded.",
    )


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("slug", shell_complete=complete_persona)
@click.argument("text", nargs=-1, required=True)
@root_option
@json_option
def question(debate_id: str, slug: str, text: tuple[str, ...], as_json: bool) -> None:
    """Queue a directive (a question, a steelman swap) for a persona's next round.

    \b
    Example:
      dreamcontext council question council_AbC12345 growth-cfo "What does the migration cost in engineer-weeks?"
    """
    number, added = interlude.queue_directive(current_root(), debate_id, slug, " ".join(text))
    message = (
        f"Directive queued for {slug}, round {number}."
        if added
        else f"{slug} already has that directive for round {number}."
    )
    emit({"debate": debate_id, "persona": slug, "round": number, "added": added}, as_json, message)


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@root_option
@json_option
def synthesize(debate_id: str, as_json: bool) -> None:
    """Move to synthesizing, write synthesis-input.md and print what the synthesizer reads.

    synthesis-input.md is the synthesizer's prompt as `run` sends it: its instructions and
    every answer, compressed over the gate by the same rules. The report it asks for ends
    with a ```claims block, which `complete` turns into the claims ledger.

    \b
    Example:
      dreamcontext council synthesize council_AbC12345
    """
    from dreamcontext_council.engine.protocol.by_hand import synthesize as begin

    manifest = begin(current_root(), debate_id)

    def text() -> str:
        lines = [
            f"{debate_id} is synthesizing. The synthesizer reads synthesis-input.md: the "
            "instructions and the record `run` sends its synthesizer, every answer compressed "
            "over the gate. It writes final-report.md as they ask, ending with the ```claims "
            "block; then run `dreamcontext council complete " + debate_id + "`. The record's "
            "files, relative to the debate folder:"
        ]
        lines += [f"  {f}" for f in manifest.files]
        return "\n".join(lines)

    emit(manifest.__dict__, as_json, text)


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@root_option
@json_option
def complete(debate_id: str, as_json: bool) -> None:
    """Mark the debate complete (needs final-report.md with its Verdict and Appendix).

    A report the synthesizer wrote by hand, ending with its ```claims block, is first
    assembled as `run` assembles its synthesizer's: claims.json, the claims ledger, the
    dissent flags, the position timeline and the debate measures.

    \b
    Example:
      dreamcontext council complete council_AbC12345
    """
    from dreamcontext_council.engine.protocol.by_hand import complete as finish

    done = finish(current_root(), debate_id)
    for message in done.warnings:
        warn(message)
    assembled = " final-report.md was assembled with its claims ledger." if done.assembled else ""
    emit(
        {"debate": debate_id, "changed": done.changed, "assembled": done.assembled},
        as_json,
        (f"{debate_id} is complete." if done.changed else f"{debate_id} was already complete.")
        + assembled,
    )


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.option(
    "--to",
    "to",
    metavar="KNOWLEDGE-SLUG",
    help="Write knowledge/KNOWLEDGE-SLUG.md instead of knowledge/decision-<topic>.md.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Rewrite the knowledge doc even if it was promoted before; with --to, overwrite a "
    "doc another debate promoted.",
)
@root_option
@json_option
def promote(debate_id: str, to: str | None, force: bool, as_json: bool) -> None:
    """Copy the verdict and the load-bearing sections into a knowledge doc and record it.

    \b
    Examples:
      dreamcontext council promote council_AbC12345
      dreamcontext council promote council_AbC12345 --to session-store
    """
    result = closing.promote(current_root(), debate_id, to=to, force=force)
    message = (
        f"Promoted to {result.path}."
        if result.changed
        else f"Already promoted to {result.path} (pass --force to rewrite)."
    )
    emit({"debate": debate_id, "path": result.path, "changed": result.changed}, as_json, message)
