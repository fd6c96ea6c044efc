"""One call while it runs: its answer's text, as it arrives, goes to the call's in-flight
file (for `show --json`, the dashboard and MCP) and to the run's progress.

The work per piece of text is an append. One timer per event loop, every `WRITE_EVERY_S`
seconds while calls run, writes what changed in every call that has run that long: a call
answered within the first interval never touches the disk, and a thousand pieces in an
interval make one write. The writes stay on the loop (about a fifth of a millisecond of
CPU each): a write thread saved no CPU and added switches of the interpreter lock. A
retry starts the text over and says so in the file until the next attempt begins. The text so far is only ever shown,
never stored as an answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from dreamcontext_council.engine.model_calls.progress import Progress
from dreamcontext_council.engine.providers.base import RetryNotice
from dreamcontext_council.folder.in_flight import RETRYING, STREAMING, WRITE_EVERY_S, InFlightCall


class _Writes:
    """The calls running on one event loop whose files a shared timer keeps written."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.calls: dict[LiveCall, None] = {}  # in the order they began
        self.timer: asyncio.TimerHandle | None = None

    def join(self, call: LiveCall) -> None:
        self.calls[call] = None
        if self.timer is None:
            self.timer = self.loop.call_later(WRITE_EVERY_S, self.tick)

    def leave(self, call: LiveCall) -> None:
        self.calls.pop(call, None)
        if not self.calls:
            if self.timer is not None:
                self.timer.cancel()
            _writes.pop(self.loop, None)

    def tick(self) -> None:
        now = self.loop.time()
        for call in list(self.calls):
            if now - call.began >= WRITE_EVERY_S:
                call.file.flush()
        self.timer = self.loop.call_later(WRITE_EVERY_S, self.tick)


_writes: dict[asyncio.AbstractEventLoop, _Writes] = {}


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
        self._attempt: asyncio.TimerHandle | None = None
        self._writes: _Writes | None = None
        self.began = 0.0

    def begin(self) -> None:
        """The call starts: its row shows, its file follows once the first interval is over."""
        self.progress.call_started(self.persona)
        self.file.begin()
        loop = asyncio.get_running_loop()
        self.began = loop.time()
        self._writes = _writes.get(loop) or _writes.setdefault(loop, _Writes(loop))
        self._writes.join(self)

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
        if self._attempt is not None:
            self._attempt.cancel()
            self._attempt = None
        if self._writes is not None:
            self._writes.leave(self)
            self._writes = None
        self.file.end()
        self.progress.call_ended(self.persona)

    def _streaming_again(self) -> None:
        if self._retrying:
            self._retrying = False
            self.file.set_state(STREAMING)
