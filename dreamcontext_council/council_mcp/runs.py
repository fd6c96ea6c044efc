"""Runs the server holds: `launch` in a background task, its progress kept for whoever waits."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamcontext_council.engine.model_calls.progress import PlainProgress
from dreamcontext_council.engine.setup.launch import STOPS, launch, stopped_result
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.errors import CouncilError, RunStopped, StateError
from dreamcontext_council.folder.in_flight import read_in_flight
from dreamcontext_council.views.in_flight import progress_line

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

# The last events a run keeps for a client that starts waiting late.
KEPT_EVENTS = 200
# How often a waiting client is told the calls in progress, when they changed (seconds).
IN_FLIGHT_EVERY_S = 1.0


class ForwardedProgress(PlainProgress):
    """The engine's progress as events: one per round and one per call's change of state.

    The engine calls it synchronously from the server's event loop; each event goes to
    every listener's queue, and the MCP tool that waits turns it into a progress
    notification on its own request.
    """

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.count = 0
        self.recent: list[tuple[int, str]] = []
        self.listeners: set[asyncio.Queue[tuple[int, str]]] = set()
        self.started = asyncio.Event()

    def start(self) -> None:
        self.started.set()

    def note(self, message: str) -> None:
        self.count += 1
        self.recent = [*self.recent[-(KEPT_EVENTS - 1) :], (self.count, message)]
        for queue in self.listeners:
            queue.put_nowait((self.count, message))

    def persona(self, slug: str, state: str, tokens: int = 0, detail: str = "") -> None:
        if state == "waiting":
            return
        super().persona(slug, state, tokens, detail)  # "thinking" is skipped there too


@dataclass
class BackgroundRun:
    """One `launch` going on in the server."""

    progress: ForwardedProgress
    task: asyncio.Task[dict[str, Any]] | None = None
    debate_id: str | None = None
    state: str = "running"
    message: str = "Starting."
    stopped: str | None = None
    reason: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def last_message(self) -> str:
        if self.state != "running":
            return self.message
        return self.progress.recent[-1][1] if self.progress.recent else self.message


class BackgroundRuns:
    """Every run this server started, by debate id; they end with the server."""

    def __init__(self) -> None:
        self.by_id: dict[str, BackgroundRun] = {}

    def get(self, debate_id: str) -> BackgroundRun | None:
        return self.by_id.get(debate_id)

    async def close(self) -> None:
        """Stop every run still going and wait for each to record why it stopped; their
        outcome is kept on the run (see `_finish`), so nothing is left unretrieved."""
        going = [run.task for run in self.by_id.values() if run.task and not run.task.done()]
        for task in going:
            task.cancel()
        await asyncio.gather(*going, return_exceptions=True)

    async def start(self, request: Launch) -> BackgroundRun:
        """Start the run; return once its debate exists and every check passed.

        An error before that (a bad option, a refused program, a missing key) is raised
        here, so the caller gets it as the tool's error; later ones end the run as failed.
        """
        run = BackgroundRun(ForwardedProgress())
        created: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def on_created(debate_id: str) -> None:
            run.debate_id = debate_id
            if not created.done():
                created.set_result(debate_id)

        if request.debate_id:
            previous = self.by_id.get(request.debate_id)
            if previous is not None and previous.state == "running":
                raise StateError(
                    f"{request.debate_id} is already running in this server; "
                    "call council_wait to follow it."
                )
            run.debate_id = request.debate_id
        request = replace(request, progress=run.progress, on_created=on_created, tty=False)
        task = asyncio.create_task(launch(request, echo=run.progress.note))
        run.task = task
        task.add_done_callback(lambda finished: _finish(run, finished))
        started = asyncio.ensure_future(run.progress.started.wait())
        try:
            waited: set[asyncio.Future[Any]] = {created, started, task}
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        finally:
            started.cancel()
        early = not created.done() and not run.progress.started.is_set()
        if task.done() and not task.cancelled() and task.exception() is not None and early:
            task.result()  # refused before anything ran: the tool's own error
        if run.debate_id is None:
            run.debate_id = str(task.result().get("id") or "")
        self.by_id[run.debate_id] = run
        return run


def _finish(run: BackgroundRun, task: asyncio.Task[dict[str, Any]]) -> None:
    if task.cancelled():
        run.state, run.message = "failed", "The server stopped before the run ended."
    elif (error := task.exception()) is not None:
        run.state = "stopped" if isinstance(error, RunStopped) else "failed"
        if isinstance(error, RunStopped):
            run.stopped, run.reason = stopped_result(error)["stopped"], error.reason
        if isinstance(error, CouncilError):
            run.message = str(error)
        else:
            run.message = (
                f"The run failed unexpectedly ({type(error).__name__}); see the server log."
            )
            print(f"council run failed: {error!r}", file=sys.stderr)
    else:
        result = task.result()
        run.stopped = result.get("stopped")
        run.state = "stopped" if run.stopped in STOPS else "finished"
        run.message = str(result.get("message", ""))
        run.reason = str(result.get("reason") or "") or None
    run.progress.note(run.message)  # the last event says how it ended
    run.done.set()


async def follow(
    run: BackgroundRun,
    ctx: Context,
    timeout: float,
    folder: Path | None = None,
    every: float = IN_FLIGHT_EVERY_S,
) -> None:
    """Send the run's events as progress notifications on this request until it stops.

    Between them, every `every` seconds, the calls in progress in the debate's `folder`
    (its in-flight files) as one line, when it changed: `round 1: contrarian 1,234 chars,
    pragmatist 880 chars; waiting for alice`. Its progress value lies between the events'
    counts, so the values still only go up.
    """
    queue: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
    run.progress.listeners.add(queue)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    calls = _CallsLine(folder)
    try:
        # The events so far first (the last KEPT_EVENTS), for a client that comes in late.
        for count, message in list(run.progress.recent):
            await ctx.report_progress(count, None, message)
        sent = run.progress.recent[-1][0] if run.progress.recent else 0
        await calls.report(ctx, sent)
        check = loop.time() + every
        while not run.done.is_set():
            now = loop.time()
            left = deadline - now
            if left <= 0:
                return
            if folder is not None and now >= check:
                await calls.report(ctx, sent)
                check = now + every
            wait = min(left, check - now) if folder is not None else left
            try:
                count, message = await asyncio.wait_for(queue.get(), wait)
            except TimeoutError:
                continue
            if count > sent:
                await ctx.report_progress(count, None, message)
                sent = count
                calls.after_event()
    finally:
        run.progress.listeners.discard(queue)


class _CallsLine:
    """The line of calls in progress a waiting client was last told, and how many such
    lines followed the last event (their progress values: count + n / (n + 1))."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.said = ""
        self.since_event = 0

    def after_event(self) -> None:
        self.since_event = 0

    async def report(self, ctx: Context, sent: int) -> None:
        if self.folder is None:
            return
        line = progress_line(await asyncio.to_thread(read_in_flight, self.folder))
        if not line or line == self.said:
            return
        self.said = line
        self.since_event += 1
        await ctx.report_progress(sent + self.since_event / (self.since_event + 1), None, line)
