"""The MCP server: tools and resources over the same library calls as the CLI."""

from __future__ import annotations

from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import CallToolResult, Resource
from pydantic import Field

from dreamcontext_council.council_mcp import reading
from dreamcontext_council.council_mcp.arguments import (
    Attachments,
    CheckModel,
    CouncilServer,
    DebateId,
    HumanTimeout,
    KnowledgeName,
    MaxCalls,
    MaxCost,
    Model,
    Options,
    People,
    Personas,
    ReadDebateId,
    Rounds,
    Section,
    SynthModel,
    Topic,
)
from dreamcontext_council.council_mcp.hand_driven import add_persona_tools
from dreamcontext_council.council_mcp.results import (
    Board,
    DebateList,
    DebateStarted,
    DebateStatus,
    FinalReport,
    Promoted,
    ServerRun,
    answer,
    failure,
)
from dreamcontext_council.council_mcp.runs import BackgroundRun, BackgroundRuns, follow
from dreamcontext_council.council_mcp.starting import ServerSettings, start_debate
from dreamcontext_council.errors import CouncilError, NotFoundError
from dreamcontext_council.folder.paths import Root, require_root
from dreamcontext_council.rules import limits
from dreamcontext_council.rules.debate import MAX_ROUNDS

SERVER_NAME = "dreamcontext-council"
INSTRUCTIONS = (
    "Hold a council: personas debate a hard decision in rounds and a synthesizer writes a "
    "decision report that keeps the dissent. Start with council_start, follow it with "
    "council_wait (progress notifications) or council_status, then read council_report. "
    "Every file of a debate is a resource: council://<id>/<path>."
)
MAX_WAIT_SECONDS = 600
# Under the 60 s that common clients (Claude Desktop, the TypeScript SDK) give a request:
# a default wait returns before the client gives up on it.
DEFAULT_WAIT_SECONDS = 25


def build_server(settings: ServerSettings, runs: BackgroundRuns | None = None) -> MCPServer:
    """The server with every tool and the `council://` resources registered."""
    runs = runs if runs is not None else BackgroundRuns()

    def root() -> Root:
        return require_root(settings.root)

    def recent() -> list[Resource]:
        return [
            Resource(uri=uri, name=name, description=topic, mime_type=reading.mime_type(uri))
            for uri, name, topic in reading.recent_debate_files(root())
        ]

    server: MCPServer = CouncilServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        version=package_version(),
        recent=recent,
        log_level="INFO" if settings.verbose else "WARNING",
    )

    def chosen(debate_id: str) -> str:
        """The id read: the one given, or for `@last` the newest debate's."""
        from dreamcontext_council.actions.newest import choose_debate

        return choose_debate(root(), debate_id).id

    def status_of(debate_id: str) -> DebateStatus:
        from dreamcontext_council.actions.snapshot import load_snapshot
        from dreamcontext_council.views.listing import show_data

        current = root()
        snapshot = load_snapshot(current, chosen(debate_id), around_conflicts=True)
        debate = snapshot.debate
        details = show_data(snapshot)  # the in-flight calls read once, for both fields
        return DebateStatus(
            id=debate.id,
            topic=debate.topic,
            status=str(debate.status),
            current_round=debate.current_round,
            rounds_planned=debate.rounds_planned,
            has_final_report=snapshot.paths.final_report.is_file(),
            server_run=_server_run(runs.get(debate.id)),
            in_flight=details["in_flight"],
            details=details,
            files=reading.debate_file_uris(current, debate.id),
            conflicts=snapshot.conflicts,
        )

    @server.tool()
    async def council_start(
        topic: Topic = None,
        debate_id: Annotated[
            str | None,
            Field(
                max_length=limits.MAX_NAME_CHARS,
                description="Resume this debate where it stopped instead (no topic then).",
            ),
        ] = None,
        options: Options = None,
        personas: Personas = "cognitive",
        rounds: Rounds = 3,
        attachments: Attachments = [],  # noqa: B006 — the SDK builds the schema from this default; never mutated
        model: Model = None,
        check_model: CheckModel = None,
        synth_model: SynthModel = None,
        compact: Annotated[
            bool, Field(description="Stop after round 2 without a convergence check.")
        ] = False,
        max_cost: MaxCost = None,
        max_calls: MaxCalls = None,
        skip_question_check: Annotated[
            bool, Field(description="Skip the pre-flight guard on the question (like --yes).")
        ] = False,
        human: People = [],  # noqa: B006 — as `attachments`
        human_timeout: HumanTimeout = None,
    ) -> Annotated[CallToolResult, DebateStarted]:
        """Start a council debate on a question and return its id at once; the run goes on
        in the server. Follow it with council_wait (progress notifications per round and
        per call) or council_status, then read council_report. With no API key the server
        runs the offline scripted provider (a deterministic stand-in, not a model). A
        `command:` model runs only if the user allowed it in the server's configuration."""
        try:
            run = await start_debate(
                settings,
                runs,
                topic=topic,
                debate_id=debate_id,
                options=options,
                personas=personas,
                rounds=rounds,
                attachments=attachments,
                models=(model, check_model, synth_model),
                compact=compact,
                max_cost=max_cost,
                max_calls=max_calls,
                yes=skip_question_check,
                people=(human, human_timeout),
            )
        except (CouncilError, OSError) as exc:
            return failure(exc)
        return await answer(
            lambda: DebateStarted(
                id=run.debate_id or "",
                state=run.state,
                message=run.last_message(),
                resources=reading.resource_uri(run.debate_id or ""),
                stopped=run.stopped,
                reason=run.reason,
            )
        )

    @server.tool()
    async def council_wait(
        debate_id: DebateId,
        ctx: Context,
        timeout_seconds: Annotated[
            float,
            Field(
                gt=0,
                le=MAX_WAIT_SECONDS,
                description="Return after this long at most. Keep it under the client's "
                "request timeout (often 60 s).",
            ),
        ] = DEFAULT_WAIT_SECONDS,
    ) -> Annotated[CallToolResult, DebateStatus]:
        """Follow a debate this server is running until its run stops (complete, paused at an
        interlude, failed) or the timeout passes, sending a progress notification for each
        round and each persona call, and about once a second the calls in progress with the
        characters received so far (`round 1: contrarian 1,234 chars; waiting for alice`);
        then return its status. Call it again to keep following."""
        run = runs.get(debate_id)
        if run is not None and run.state == "running":
            await follow(run, ctx, timeout_seconds, root().debate(debate_id).folder)
        return await answer(lambda: status_of(debate_id))

    @server.tool()
    async def council_status(
        debate_id: ReadDebateId,
    ) -> Annotated[CallToolResult, DebateStatus]:
        """Where a debate stands: status, round, this server's run of it, the calls in
        progress, usage and round log, and every file of it as a council:// resource URI.
        @last reads the newest debate."""
        return await answer(lambda: status_of(debate_id))

    @server.tool()
    async def council_board(
        debate_id: ReadDebateId,
        round: Annotated[
            int | None,
            Field(
                ge=1, le=MAX_ROUNDS, description="This round (default: the latest with verdicts)."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, Board]:
        """The chamber board of a debate: convergence meter, one row per persona (stance,
        conviction, headline), options tally; as `dreamcontext council board --json`.
        @last reads the newest debate."""

        def board() -> Board:
            from dreamcontext_council.actions.snapshot import load_snapshot
            from dreamcontext_council.views.board import board_figures
            from dreamcontext_council.views.board_extras import board_extra_data

            snapshot = load_snapshot(root(), chosen(debate_id), around_conflicts=True)
            data = board_figures(snapshot, round).to_json() | board_extra_data(snapshot)
            return Board(id=snapshot.debate.id, board=data, conflicts=snapshot.conflicts)

        return await answer(board)

    @server.tool()
    async def council_report(
        debate_id: ReadDebateId,
        section: Section = None,
    ) -> Annotated[CallToolResult, FinalReport]:
        """The final decision report of a debate (final-report.md), whole or one ## section,
        with the list of its section titles. @last reads the newest debate."""

        def report() -> FinalReport:
            from dreamcontext_council.actions.snapshot import load_snapshot
            from dreamcontext_council.rules.final_report import final_report_part

            snapshot = load_snapshot(root(), chosen(debate_id), around_conflicts=True)
            text = snapshot.final_report()
            if text is None:
                raise reading.missing_report(snapshot.debate.id)
            part, titles = final_report_part(text, snapshot.debate.id, section)
            return FinalReport(id=snapshot.debate.id, section=section, sections=titles, text=part)

        return await answer(report)

    @server.tool()
    async def council_list(
        which: Annotated[
            Literal["active", "unpromoted", "all"],
            Field(description="active (not complete), unpromoted (complete), or all."),
        ] = "active",
        evals: Annotated[
            bool, Field(description="Also list the debates council eval made (like --evals).")
        ] = False,
    ) -> Annotated[CallToolResult, DebateList]:
        """Debates of the project, newest first, each with its status and run state."""

        def listed() -> DebateList:
            from dreamcontext_council.actions.decisions import with_decisions
            from dreamcontext_council.actions.index import load_index
            from dreamcontext_council.actions.run_state import with_run_states
            from dreamcontext_council.views import listing
            from dreamcontext_council.views.eval_names import eval_debates

            current = root()
            entries = listing.filter_debates(load_index(current), which)
            left_out = 0
            if not evals:
                entries, left_out = listing.without_evals(entries, eval_debates(current))
            debates = with_decisions(current, with_run_states(current, entries))
            return DebateList(debates=debates, evals_left_out=left_out)

        return await answer(listed)

    add_persona_tools(server, root)

    @server.tool()
    async def council_promote(
        debate_id: DebateId,
        to: KnowledgeName = None,
        force: Annotated[
            bool, Field(description="Rewrite a doc promoted before (or another debate's, with to).")
        ] = False,
    ) -> Annotated[CallToolResult, Promoted]:
        """Copy a complete debate's verdict and load-bearing sections into a knowledge doc."""

        def promote() -> Promoted:
            from dreamcontext_council.actions import closing

            result = closing.promote(root(), debate_id, to=to, force=force)
            return Promoted(id=debate_id, path=str(result.path), changed=result.changed)

        return await answer(promote)

    @server.resource(
        reading.resource_uri("{debate_id}", "{+path}"),
        name="debate-file",
        description="A file of a debate, read-only: debate.md, round-log.md, verdicts.json, "
        "final-report.md, <persona>/report.md, ... (council_status lists them); "
        "council://@last/<path> reads the newest debate's.",
    )
    def debate_file(debate_id: str, path: str) -> str:
        try:
            return reading.read_debate_file(root(), chosen(debate_id), path)
        except NotFoundError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except CouncilError as exc:
            raise ResourceError(str(exc)) from None

    return server


def package_version() -> str:
    """The installed package's version, for serverInfo."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dreamcontext-council")
    except PackageNotFoundError:
        return "unknown"


def _server_run(run: BackgroundRun | None) -> ServerRun | None:
    if run is None:
        return None
    return ServerRun(
        state=run.state,
        message=run.last_message(),
        events=run.progress.count,
        stopped=run.stopped,
        reason=run.reason,
    )


async def serve(settings: ServerSettings) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    runs = BackgroundRuns()
    try:
        await build_server(settings, runs).run_stdio_async()
    finally:
        # The client went away: runs still going stop here (run.json says the server shut
        # down) and end before the event loop does.
        with anyio.CancelScope(shield=True):
            await runs.close()
