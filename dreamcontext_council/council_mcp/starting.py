"""Starting a run for an MCP client: its arguments checked as an agent's, then `launch`."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field

import anyio.to_thread

from dreamcontext_council.actions import convene
from dreamcontext_council.council_mcp import agent_input
from dreamcontext_council.council_mcp.runs import BackgroundRun, BackgroundRuns
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.folder.names import check_slug
from dreamcontext_council.rules.grounding import check_attachments
from dreamcontext_council.rules.roster import PRESETS, check_roster_size, load_roster


@dataclass
class ServerSettings:
    """What the user configured for the server (its command line), not what an agent asks."""

    root: str | None = None
    allow_commands: set[str] = field(default_factory=set)
    # Log each request (the server's and its HTTP clients') to stderr; else warnings only,
    # since MCP clients show whatever reaches the server's stderr as errors.
    verbose: bool = False


async def start_debate(
    settings: ServerSettings,
    runs: BackgroundRuns,
    *,
    topic: str | None,
    debate_id: str | None,
    options: str | None,
    personas: str,
    rounds: int,
    attachments: list[str],
    models: tuple[str | None, str | None, str | None],
    compact: bool,
    max_cost: float | None,
    max_calls: int | None,
    yes: bool,
    people: tuple[list[str], float | None] = ([], None),
) -> BackgroundRun:
    """`council run`'s launch for a tool call: after the checks that apply to an agent
    (programs it names, files outside the project), started in the background.

    The checks read files and parse what the agent sent, so they run on a worker
    thread: the server goes on answering other calls meanwhile."""
    roster, attached = await anyio.to_thread.run_sync(
        functools.partial(
            checked_request,
            settings,
            topic=topic,
            options=options,
            personas=personas,
            attachments=attachments,
            models=models,
        )
    )
    model, check_model, synth_model = models
    humans, human_timeout = people
    request = Launch(
        debate_id=debate_id,
        topic=topic,
        personas_spec=roster,
        options_spec=options,
        rounds=rounds,
        attach=attached,
        compact=compact,
        model=model,
        allow_commands=sorted(settings.allow_commands),
        check_model=check_model,
        synth_model=synth_model,
        max_cost=max_cost,
        max_calls=max_calls,
        yes=yes,
        humans=[check_slug(slug) for slug in humans],
        human_timeout=human_timeout,
        root=settings.root,
        env=dict(os.environ),
        cancelled_as="the MCP server shut down",
    )
    return await runs.start(request)


def checked_request(
    settings: ServerSettings,
    *,
    topic: str | None,
    options: str | None,
    personas: str,
    attachments: list[str],
    models: tuple[str | None, str | None, str | None],
) -> tuple[str, list[str]]:
    """The roster and attachments as absolute paths inside the project, once everything
    `launch` checks before writing has passed here: the topic, the options, the roster's
    size, the attachments, and the programs the agent names."""
    project = agent_input.workspace(settings.root)
    attached = [agent_input.project_file(a, project, "Attachment") for a in attachments]
    roster = personas
    if topic and personas not in ("auto", *PRESETS):
        roster = agent_input.project_file(personas, project, "The roster file")
    agent_input.require_allowed(
        models,
        agent_input.roster_commands(roster) if topic else set(),
        settings.allow_commands,
    )
    if topic:
        convene.check_topic(topic)
        convene.parse_options(options)
        check_attachments(attached)
        if roster != "auto":
            check_roster_size(load_roster(roster), f"--personas {personas}")
    return roster, attached
