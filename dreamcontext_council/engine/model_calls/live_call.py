"""One call while it runs: its answer's text, as it arrives, goes to the call's in-flight
file (for `show --json`, the dashboard and MCP) and to the run's progress.

The work per piece of text is an append; a timer every `WRITE_EVERY_S` seconds takes what
changed and hands the write to a thread of its own (a write is a few system calls that
would hold up every other call on the event loop), so a call answered within the first
interval never touches the disk, and a thousand pieces in an interval make one write. A
retry starts the text over and says so in the file until the next attempt begins. The
text so far is only ever shown, never stored as an answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from functools import cache
from pathlib import Path

from dreamcontext_council.engine.model_calls.progress import Progress
from dreamcontext_council.engine.providers.base import RetryNotice
from dreamcontext_council.folder.in_flight import RETRYING, STREAMING, InFlightCall


@cache
def _writer() -> concurrent.futures.ThreadPoolExecutor:
    """One thread for the in-flight files of the process: their writes never queue behind
    an answer being saved, nor an answer behind them."""
    return concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="council-in-flight")


class LiveCall:
    """The in-flight file and progress row of one call, from `begin` to `end`.

    `text` and `retry` are the prompt's `on_text` and `on_retry`; they run on the event
    loop, as the providers call them there.
    """

    def __init__(
        self,
        folder: Path,
        *,
        within: Path,
        progress: Progress,
        persona: str,
        phase: str,
        round: int,
    ) -> None:
        self.file = InFlightCall(folder, within=within, persona=persona, phase=phase, round=round)
        self.progress = progress
        self.persona = persona
        self._retrying = False
        self._timer: asyncio.TimerHandle | None = None
        self._attempt: asyncio.TimerHandle | None = None
        self._writing: concurrent.futures.Future[None] | None = None

    def begin(self) -> None:
        """The call starts: its row shows, its file follows once the first interval is over."""
        self.progress.call_started(self.persona)
        self.file.begin()
        self._timer = asyncio.get_running_loop().call_later(self.file.every, self._tick)

    def text(self, piece: str) -> None:
        """A piece of the answer arrived."""
        if self._retrying:
            self._streaming_again()
        self.file.keep(piece)
        self.progress.streamed(self.persona, piece)

    def retry(self, notice: RetryNotice) -> None:
        """An attempt failed and will be tried again after `notice.wait_s`: its text is
        dropped, and the file says why until the next attempt starts."""
        self.progress.retrying(self.persona, notice)
        self.file.set_state(RETRYING, notice.text())
        self.file.restart()
        self._retrying = True
        if self._attempt is not None:
            self._attempt.cancel()
        loop = asyncio.get_running_loop()
        self._attempt = loop.call_later(notice.wait_s, self._streaming_again)

    def end(self) -> None:
        """The call is over (answered, failed or cancelled): its file and row go."""
        for handle in (self._timer, self._attempt):
            if handle is not None:
                handle.cancel()
        self._timer = self._attempt = None
        self.file.end()
        self.progress.call_ended(self.persona)

    def _streaming_again(self) -> None:
        if self._retrying:
            self._retrying = False
            self.file.set_state(STREAMING)

    def _tick(self) -> None:
        # A write still under way is not queued behind: the next tick takes what changed.
        if self._writing is None or self._writing.done():
            due = self.file.due()
            if due is not None:
                self._writing = _writer().submit(self.file.put, due)
        self._timer = asyncio.get_running_loop().call_later(self.file.every, self._tick)
