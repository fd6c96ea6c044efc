"""What the tools accept: every argument bounded (rules/limits.py), nothing else accepted.

An agent names arguments by guesswork as often as by the schema. An argument a tool does
not take (`base_url`, say) would be dropped by the SDK without a word, and the agent
would believe it set it; so it is refused with one line naming it and the arguments the
tool takes. Every string, list and number has the CLI's limit in the input schema, so a
40 MB string is refused by its length before any check reads it; a refusal is one line
naming the argument and its limit.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, Resource, Tool
from pydantic import Field, ValidationError

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.rules import limits

SHOWN_UNKNOWN = 10  # unknown arguments named in a refusal; the rest are counted

DebateId = Annotated[
    str,
    Field(
        max_length=limits.MAX_NAME_CHARS,
        description="The debate id, as council_start or council_list give it.",
    ),
]
ReadDebateId = Annotated[
    str,
    Field(
        max_length=limits.MAX_NAME_CHARS,
        description="The debate id, as council_start or council_list give it, or @last for "
        "the newest debate (the result's `id` says which).",
    ),
]
PersonaSlug = Annotated[
    str,
    Field(
        max_length=limits.MAX_NAME_CHARS,
        description="The persona's slug, as in the debate's roster.",
    ),
]
RoundNumber = Annotated[int, Field(ge=1, le=limits.MAX_ROUNDS, description="The round number.")]
Topic = Annotated[
    str | None,
    Field(
        max_length=limits.MAX_TOPIC_CHARS,
        description="The question to debate; creates a new debate.",
    ),
]
Options = Annotated[
    str | None,
    Field(
        max_length=limits.MAX_OPTIONS_CHARS,
        description=f'Registered options, as "A=Migrate now,B=Stay" (at most {limits.MAX_OPTIONS}).',
    ),
]
Personas = Annotated[
    str,
    Field(
        max_length=limits.MAX_PATH_CHARS,
        description="A preset (cognitive, engineering), auto, or a roster file inside the "
        f"project of {limits.MIN_PERSONAS}-{limits.MAX_PERSONAS} personas (docs/personas.md).",
    ),
]
Rounds = Annotated[int, Field(ge=1, le=limits.MAX_ROUNDS, description="Rounds planned.")]
Attachments = Annotated[
    list[Annotated[str, Field(max_length=limits.MAX_PATH_CHARS)]],
    Field(
        max_length=limits.MAX_ATTACHMENTS,
        description="Files inside the project the council must read.",
    ),
]


Model = Annotated[
    str | None,
    Field(
        max_length=limits.MAX_MODEL_CHARS,
        description="Model for personas that name none, as provider:model.",
    ),
]
CheckModel = Annotated[
    str | None,
    Field(max_length=limits.MAX_MODEL_CHARS, description="Model for the convergence check."),
]
SynthModel = Annotated[
    str | None,
    Field(max_length=limits.MAX_MODEL_CHARS, description="Model for the synthesizer."),
]
MaxCost = Annotated[
    float | None,
    Field(ge=0, le=limits.MAX_COST_USD, description="Stop before spending more dollars than this."),
]
MaxCalls = Annotated[
    int | None,
    Field(ge=0, le=limits.MAX_CALLS, description="Stop before making more calls than this."),
]
People = Annotated[
    list[Annotated[str, Field(max_length=limits.MAX_NAME_CHARS)]],
    Field(
        max_length=limits.MAX_PERSONAS,
        description="Persona slugs whose seats a person answers, like `run --human`: the run "
        "never calls a model for them and waits each round for the entry, recorded with "
        "council_verdict and council_report_append (council_round_context gives the round).",
    ),
]
HumanTimeout = Annotated[
    float | None,
    Field(
        gt=0,
        le=limits.MAX_HUMAN_TIMEOUT_S,
        description="Seconds to wait for a person's entry before the seat is recorded missing "
        "for the round (like --human-timeout); default: as long as it takes.",
    ),
]
Section = Annotated[
    str | None,
    Field(
        max_length=limits.MAX_SECTION_CHARS,
        description="One ## section by title (e.g. Verdict); default: the whole report.",
    ),
]
Stance = Annotated[
    str,
    Field(
        max_length=limits.MAX_STANCE_CHARS,
        description="An option key (or label); free text when no options exist.",
    ),
]
Headline = Annotated[
    str,
    Field(max_length=limits.MAX_HEADLINE_CHARS, description="One line that sums up the stance."),
]
Concession = Annotated[
    str | None,
    Field(
        max_length=limits.MAX_CONCESSION_CHARS,
        description="What the persona grants a peer this round.",
    ),
]
EntryBody = Annotated[
    str,
    Field(
        max_length=limits.MAX_ENTRY_CHARS,
        description="The round entry in markdown with the ### sections Executive "
        "Summary, Position, Reasoning, Reactions to peers, Open questions "
        "(in round 2, with an assignment, Cross-examination ending `Score: N/10`).",
    ),
]
KnowledgeName = Annotated[
    str | None,
    Field(
        max_length=limits.MAX_NAME_CHARS,
        description="Write knowledge/<to>.md instead of knowledge/decision-<topic>.md.",
    ),
]


class CouncilServer(MCPServer):
    """The SDK's server, strict about arguments: unknown ones and invalid ones are a
    one-line tool error naming them. Tool descriptions are the docstrings without their
    source indentation; `recent` adds resources to resources/list (read when asked)."""

    def __init__(
        self, *args: Any, recent: Callable[[], list[Resource]] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._accepted: dict[str, list[str]] | None = None
        self._recent = recent

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [
            tool.model_copy(update={"description": inspect.cleandoc(tool.description)})
            if tool.description
            else tool
            for tool in tools
        ]

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        if self._recent is None:
            return listed
        try:
            return listed + await anyio.to_thread.run_sync(self._recent)
        except (CouncilError, OSError):
            return listed  # no root, or an index that cannot be read: the template still works

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        accepted = (await self._accepted_arguments()).get(name)
        if accepted is not None:
            refuse_unknown(name, arguments, accepted)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(refused_values(name, exc.__cause__)) from exc.__cause__
            raise

    async def _accepted_arguments(self) -> dict[str, list[str]]:
        if self._accepted is None:
            self._accepted = {
                tool.name: list(tool.input_schema.get("properties", {}))
                for tool in await self.list_tools()
            }
        return self._accepted


def refuse_unknown(tool: str, arguments: dict[str, Any], accepted: list[str]) -> None:
    """ToolError naming every argument `tool` does not take, and the ones it takes."""
    unknown = [str(key) for key in arguments if key not in accepted]
    if not unknown:
        return
    named = ", ".join(f"`{_shown(key)}`" for key in unknown[:SHOWN_UNKNOWN])
    if len(unknown) > SHOWN_UNKNOWN:
        named += f" and {len(unknown) - SHOWN_UNKNOWN:,} more"
    plural = "arguments" if len(unknown) > 1 else "argument"
    raise ToolError(
        f"{tool} takes no {plural} {named}; nothing was done. It takes: {', '.join(accepted)}."
    )


def refused_values(tool: str, error: ValidationError) -> str:
    """One line naming each argument that failed its schema and why (never its value)."""
    problems = []
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"`{_shown(where)}`: {' '.join(str(item['msg']).split())}")
    return f"{tool} refused its arguments; nothing was done. " + "; ".join(problems) + "."


def _shown(name: str) -> str:
    """An argument name as the client sent it, on one line and short."""
    text = name if name.isprintable() else repr(name)
    return text if len(text) <= limits.MAX_NAME_CHARS else text[: limits.MAX_NAME_CHARS] + "…"
