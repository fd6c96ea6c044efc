"""What each MCP tool returns: typed models, so every tool publishes an output schema, and
the tool result or tool error that carries them."""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from dreamcontext_council.errors import CouncilError

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


class DebateStarted(BaseModel):
    """A run that goes on in the server's background."""

    id: str = Field(description="The debate id: pass it to council_status, council_wait, ...")
    state: str = Field(description="`running` while the run goes on, else how it ended.")
    message: str = Field(description="What happened, in one line.")
    resources: str = Field(description="The URI prefix of the debate's files.")
    stopped: str | None = Field(
        default=None,
        description="Where a run that already ended stopped: complete, ..., or budget, "
        "failure (stopped before the end, resumable).",
    )
    reason: str | None = Field(
        default=None, description="Why a run stopped before the end (a limit, a failure)."
    )


class ServerRun(BaseModel):
    """A run this server started (or resumed) for a debate."""

    state: str = Field(
        description="`running`; `finished` (see `stopped`); `stopped` before the end (a "
        "limit, every persona failing: council_start with debate_id resumes it); `failed`."
    )
    message: str = Field(description="The last progress line, or how the run ended.")
    events: int = Field(description="How many progress events the run has sent so far.")
    stopped: str | None = Field(
        default=None,
        description="Where the run ended: complete, interlude, answered when `finished`; "
        "budget or failure when `stopped`.",
    )
    reason: str | None = Field(
        default=None,
        description="Why a `stopped` run stopped, as the debate's status shows it "
        "(e.g. `budget: --max-calls 3 reached after 3 calls`).",
    )


CONFLICTS = (
    "One line per file of the debate holding git conflict markers, left out of the rest "
    "(as `dreamcontext council show` warns): resolve them, or run `council doctor`."
)


class DebateStatus(BaseModel):
    """Where a debate stands, with this server's run of it if any."""

    id: str
    topic: str
    status: str = Field(description="The debate's status in debate.md.")
    current_round: int
    rounds_planned: int
    has_final_report: bool
    server_run: ServerRun | None = Field(
        default=None, description="The run this server holds for the debate, if any."
    )
    in_flight: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The calls a run is making right now (any run, this server's or not): "
        "persona (or `(synthesis)`, `(orchestrator)`), phase, round, state (`streaming`, "
        "`retrying`, `waiting` for the person a seat belongs to), chars received so far, "
        "elapsed_s, detail.",
    )
    details: dict[str, Any] = Field(
        description="What `dreamcontext council show --json` prints: run state, usage, round log."
    )
    files: list[str] = Field(description="The debate's files as council:// resource URIs.")
    conflicts: list[str] = Field(default_factory=list, description=CONFLICTS)


class Board(BaseModel):
    """The chamber board: `dreamcontext council board --json`."""

    id: str
    board: dict[str, Any]
    conflicts: list[str] = Field(default_factory=list, description=CONFLICTS)


class FinalReport(BaseModel):
    """The final report of a debate, whole or one `##` section."""

    id: str
    section: str | None = Field(description="The section returned, or null for the whole report.")
    sections: list[str] = Field(description="Every `##` section title of the report.")
    text: str


class DebateList(BaseModel):
    """Debates, newest first, as `dreamcontext council list --json` prints them."""

    debates: list[dict[str, Any]]
    evals_left_out: int = 0  # debates `council eval` made, left out unless asked for


class RoundContext(BaseModel):
    """Everything a persona needs this round: `dreamcontext council round-context`."""

    id: str
    persona: str
    text: str


class VerdictRecorded(BaseModel):
    """A persona's verdict for a round, as recorded."""

    id: str
    persona: str
    round: int
    verdict: dict[str, Any]


class ReportAppended(BaseModel):
    """A persona's round entry, added to its report.md."""

    id: str
    persona: str
    round: int
    replaced: bool
    warnings: list[str]


class Promoted(BaseModel):
    """The knowledge doc the verdict went to."""

    id: str
    path: str
    changed: bool


async def answer(build: Callable[[], BaseModel]) -> CallToolResult:
    """The tool's typed result, or a tool error carrying the library's one-line message.

    `build` reads and writes files, so it runs on a worker thread: a slow disk or a
    large debate never holds up the other calls the server is answering."""
    try:
        result = await anyio.to_thread.run_sync(build)
    except (CouncilError, OSError) as exc:
        return failure(exc)
    return CallToolResult(
        content=[TextContent(type="text", text=result.model_dump_json(indent=2))],
        structured_content=result.model_dump(mode="json"),
    )


def failure(exc: CouncilError | OSError) -> CallToolResult:
    """A tool error with the line the CLI prints after `Error:` for the same failure."""
    if isinstance(exc, CouncilError):
        message = str(exc)
    else:
        where = f" ({exc.filename})" if exc.filename else ""
        then = " Free some space and try again." if exc.errno in _NO_SPACE else ""
        message = f"{exc.strerror or exc}{where}; nothing was changed.{then}"
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
