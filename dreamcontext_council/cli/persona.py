"""Persona commands: what a persona sub-agent runs each round."""

from __future__ import annotations

import click

from dreamcontext_council.actions import submissions
from dreamcontext_council.actions.files import read_body
from dreamcontext_council.cli.base import (
    ROUND_NUMBER,
    current_root,
    echo,
    emit,
    json_option,
    optional_debate_id,
    read_stdin_bytes,
    root_option,
    warn,
)
from dreamcontext_council.cli.completion import complete_debate_id, complete_persona


def register_persona(council: click.Group) -> None:
    """Add the persona commands to the `council` group."""
    council.add_command(round_context_command)
    council.add_command(verdict)
    council.add_command(report)
    council.add_command(research)


@click.command("round-context")
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("slug", shell_complete=complete_persona)
@root_option
def round_context_command(debate_id: str, slug: str) -> None:
    """Everything the persona needs this round, including all queued directives.

    \b
    Example:
      dreamcontext council round-context council_AbC12345 risk-auditor
    """
    from dreamcontext_council.engine.protocol.round_page import round_context

    echo(round_context(current_root(), debate_id, slug).rstrip("\n"))


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("slug", shell_complete=complete_persona)
@click.argument("number", type=ROUND_NUMBER)
@click.option(
    "--stance",
    required=True,
    help="An option key (or label); free text when no options are registered.",
)
@click.option("--conviction", required=True, help="0-100: how sure the persona is.")
@click.option("--headline", required=True, help="One line that sums up the stance.")
@click.option("--concession", help="What the persona grants a peer this round.")
@root_option
@json_option
def verdict(
    debate_id: str,
    slug: str,
    number: int,
    stance: str,
    conviction: str,
    headline: str,
    concession: str | None,
    as_json: bool,
) -> None:
    """Record or correct the persona's verdict for round N.

    An answer given to `report append` with its ```verdict block at the end records the
    verdict already; this command corrects it.

    \b
    Example:
      dreamcontext council verdict council_AbC12345 risk-auditor 1 --stance A \\
        --conviction 60 --headline "Migrate, with a rollback plan"
    """
    result = submissions.record_verdict(
        current_root(),
        debate_id,
        slug,
        number,
        stance=stance,
        conviction=conviction,
        headline=headline,
        concession=concession,
    )
    emit(
        result.to_json() | {"persona": slug, "round": number},
        as_json,
        f"Verdict recorded: {slug} R{number} {result.stance} {result.conviction}.",
    )


@click.group()
def report() -> None:
    """The debate's final report (show) and the personas' round entries (append)."""


@report.command("show")
@optional_debate_id
@click.option(
    "--section",
    metavar="TITLE",
    help="Print only this `##` section (e.g. Verdict, Why, Open risks).",
)
@click.option("--raw", is_flag=True, help="Print the file as it is, its YAML frontmatter too.")
@root_option
@json_option
def report_show(debate_id: str | None, section: str | None, raw: bool, as_json: bool) -> None:
    """The final report (final-report.md), whole or one section, once synthesis wrote it.

    The report is printed without the YAML frontmatter at its top (--raw keeps it; --json
    gives the file whole in `text`). Without an id (or with @last) it shows the newest
    debate's report, named on stderr.

    \b
    Examples:
      dreamcontext council report show
      dreamcontext council report show council_AbC12345 --section Verdict
    """
    from dreamcontext_council.cli.base import read_debate
    from dreamcontext_council.errors import StateError
    from dreamcontext_council.rules.final_report import (
        final_report_part,
        verdict_statement,
        without_frontmatter,
    )

    snapshot = read_debate(debate_id)
    debate = snapshot.debate
    text = snapshot.final_report()
    if text is None:
        raise StateError(
            f"{debate.id} has no final report yet (status: {debate.status}); run "
            f"`dreamcontext council run {debate.id}` to finish the debate, or "
            f"`dreamcontext council show {debate.id}` to see where it stands."
        )
    part, titles = final_report_part(text, debate.id, section)
    statement = verdict_statement(text)
    data = {
        "id": debate.id,
        "section": section,
        "sections": titles,
        "verdict": statement.to_json() if statement else None,
        "text": part,
    }
    emit(data, as_json, part if raw or section else without_frontmatter(part))


@report.command("append")
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("slug", shell_complete=complete_persona)
@click.option("--round", "number", type=ROUND_NUMBER, help="The round (default: the current one).")
@click.option("--body", help="The round entry (else read from stdin).")
@root_option
@json_option
def report_append(
    debate_id: str, slug: str, number: int | None, body: str | None, as_json: bool
) -> None:
    """Add the persona's round entry; it must have every required ### section.

    An entry that ends with its ```verdict block (stance, conviction, headline, concession
    lines, as `run` asks a model for) records the verdict with it, or neither.

    \b
    Required: Executive Summary, Position, Reasoning, Reactions to peers, Open questions
    Round 2, with a cross-examination assignment: Cross-examination, ending `Score: N/10`

    \b
    Example:
      dreamcontext council report append council_AbC12345 risk-auditor --round 1 < answer.md
    """
    text = read_body(body, read_stdin_bytes(body), "report")
    from dreamcontext_council.engine.protocol.cross_exam import append_entry

    result = append_entry(current_root(), debate_id, slug, text, number=number)
    for message in result.warnings:
        warn(message)
    verb = "replaced" if result.replaced else "added"
    message = f"Round {result.round} entry {verb} for {slug}."
    if result.verdict is not None:
        message += f" Verdict recorded: {result.verdict['stance']} {result.verdict['conviction']}."
    emit(result.__dict__, as_json, message)


@click.group()
def research() -> None:
    """Persona research notes."""


@research.command("add")
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("slug", shell_complete=complete_persona)
@click.argument("topic", nargs=-1, required=True)
@click.option("--body", help="The note (else read from stdin).")
@root_option
@json_option
def research_add(
    debate_id: str, slug: str, topic: tuple[str, ...], body: str | None, as_json: bool
) -> None:
    """Add a research note under the persona's researches/.

    \b
    Example:
      dreamcontext council research add council_AbC12345 risk-auditor postgres write throughput \\
        --body "Postgres 16 handles 40k small writes/s on the platform cluster."
    """
    text = read_body(body, read_stdin_bytes(body), "research note")
    note = submissions.add_research(current_root(), debate_id, slug, " ".join(topic), text)
    emit(note.__dict__, as_json, f"Research note {note.slug} added for {slug}.")


@research.command("list")
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("slug", shell_complete=complete_persona)
@root_option
@json_option
def research_list(debate_id: str, slug: str, as_json: bool) -> None:
    """The persona's research notes, newest first.

    \b
    Example:
      dreamcontext council research list council_AbC12345 risk-auditor
    """
    notes = submissions.list_research(current_root(), debate_id, slug)
    emit(
        notes,
        as_json,
        lambda: (
            "\n".join(f"{n['added_at']}  {n['slug']}  {n['topic']}" for n in notes)
            or "No research notes."
        ),
    )
