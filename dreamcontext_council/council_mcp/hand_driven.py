"""The tools an agent uses to sit on a hand-driven council as a persona: its round's
context, its verdict, its round entry, through the same library calls as the CLI's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from dreamcontext_council.council_mcp.arguments import (
    Concession,
    DebateId,
    EntryBody,
    Headline,
    PersonaSlug,
    RoundNumber,
    Stance,
)
from dreamcontext_council.council_mcp.results import (
    ReportAppended,
    RoundContext,
    VerdictRecorded,
    answer,
)
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.debate import MAX_ROUNDS


def add_persona_tools(server: MCPServer, root: Callable[[], Root]) -> None:
    """Register council_round_context, council_verdict and council_report_append."""

    @server.tool()
    async def council_round_context(
        debate_id: DebateId, persona: PersonaSlug
    ) -> Annotated[CallToolResult, RoundContext]:
        """For an agent sitting on a council as a persona: everything it needs this round
        (its persona, the question, peers' summaries, queued directives). Then record its
        verdict (council_verdict) and its round entry (council_report_append)."""

        def context() -> RoundContext:
            from dreamcontext_council.engine.protocol.round_page import round_context

            text = round_context(root(), debate_id, persona)
            return RoundContext(id=debate_id, persona=persona, text=text)

        return await answer(context)

    @server.tool()
    async def council_verdict(
        debate_id: DebateId,
        persona: PersonaSlug,
        round: RoundNumber,
        stance: Stance,
        conviction: Annotated[int, Field(ge=0, le=100, description="0-100: how sure.")],
        headline: Headline,
        concession: Concession = None,
    ) -> Annotated[CallToolResult, VerdictRecorded]:
        """Record a persona's verdict for round N, before its round entry."""

        def verdict() -> VerdictRecorded:
            from dreamcontext_council.actions import submissions

            result = submissions.record_verdict(
                root(),
                debate_id,
                persona,
                round,
                stance=stance,
                conviction=conviction,
                headline=headline,
                concession=concession,
            )
            return VerdictRecorded(
                id=debate_id, persona=persona, round=round, verdict=result.to_json()
            )

        return await answer(verdict)

    @server.tool()
    async def council_report_append(
        debate_id: DebateId,
        persona: PersonaSlug,
        body: EntryBody,
        round: Annotated[
            int | None, Field(ge=1, le=MAX_ROUNDS, description="The round (default: current).")
        ] = None,
    ) -> Annotated[CallToolResult, ReportAppended]:
        """Add a persona's round entry to its report.md (replacing its entry for that round)."""

        def append() -> ReportAppended:
            from dreamcontext_council.engine.protocol.cross_exam import append_entry

            result = append_entry(root(), debate_id, persona, body, number=round)
            return ReportAppended(
                id=debate_id,
                persona=persona,
                round=result.round,
                replaced=result.replaced,
                warnings=list(result.warnings),
            )

        return await answer(append)
