"""Progress of a run: a live table on a terminal, plain lines elsewhere, or nothing."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from dreamcontext_council.engine.providers.base import RetryNotice
from dreamcontext_council.views.terminal import printable

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table
    from rich.text import Text


# A persona in one of these states is finished for the round.
FINAL_STATES = frozenset({"done", "failed", "skipped", "kept"})
# Characters of a call's latest text a row keeps, to find its last line in.
TAIL_KEPT = 400
# The most characters of that line a row shows: its end, where the text grows.
LAST_LINE_SHOWN = 60
# A person's seat while the run waits for its entry; timed like a call.
WAITING_FOR_YOU = "waiting for you"
# A running call whose answer text is arriving (the row's state word; "thinking" before).
STREAMING = "streaming"
# The header of the row's last column: the retry in waiting, the text arriving, or the outcome.
LATEST_HEADER = "latest"


@dataclass
class PersonaLine:
    """One call's row: its state, when it started, ended and last failed, and the
    characters of answer received so far with the end of that text (`tail`)."""

    state: str = "waiting"
    tokens: int = 0
    detail: str = ""
    started: float | None = None
    ended: float | None = None
    retry: RetryNotice | None = None
    retry_at: float = 0.0
    chars: int = 0
    tail: str = ""

    def last_line(self) -> str:
        """The last line of the text so far that holds something, cleaned and cut to its
        last `LAST_LINE_SHOWN` characters."""
        for line in reversed(self.tail.splitlines()):
            if line.strip():
                shown = printable(line.strip())
                if len(shown) > LAST_LINE_SHOWN:
                    return "…" + shown[-(LAST_LINE_SHOWN - 1) :]
                return shown
        return ""

    def shown_state(self) -> str:
        """The state as the row says it: a call whose answer text has begun to arrive is
        `streaming`, one still waiting for its first piece `thinking`."""
        if self.state == "thinking" and self.chars:
            return STREAMING
        return self.state

    def text(self, now: float) -> str:
        """The row's last cell: a retry in waiting, else the text arriving, else the detail."""
        if self.state == "thinking":
            return self.retry_text(now) or self.last_line() or self.detail
        return self.detail

    def elapsed(self, now: float) -> str:
        """Whole seconds since the call started (until it ended), or nothing before it."""
        if self.started is None:
            return ""
        return f"{int((self.ended if self.ended is not None else now) - self.started)} s"

    def retry_text(self, now: float) -> str:
        """`429 rate limited, retry 2/4 in 8 s`, counting down; then `retry 2/4 (…)`."""
        notice = self.retry
        if notice is None or self.state != "thinking":
            return ""
        left = notice.wait_s - (now - self.retry_at)
        if left > 0:
            return notice.text(math.ceil(left) if left >= 1 else left)
        return f"retry {notice.retry}/{notice.retries} after {notice.reason}"


class PlainProgress:
    """One line per event, for logs and pipes."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def note(self, message: str) -> None:
        print(printable(message), file=self.stream, flush=True)

    def round_started(self, number: int, title: str, personas: list[str]) -> None:
        self.note(f"Round {number} ({title}): {', '.join(personas)}")

    def persona(self, slug: str, state: str, tokens: int = 0, detail: str = "") -> None:
        if state == "thinking":
            return
        extra = f" · {tokens} tokens" if tokens else ""
        self.note(f"  {slug}: {state}{extra}{' · ' + detail if detail else ''}")

    def retrying(self, slug: str, notice: RetryNotice) -> None:
        """One line per retry: `  contrarian: 429 rate limited, retry 2/4 in 8 s`."""
        self.note(f"  {slug}: {notice.text()}")

    def seal_text(self, slugs: Collection[str]) -> None:
        """These seats' answers are sealed this round; lines never show answer text."""

    def call_started(self, slug: str) -> None:
        """A call begins; lines show only its outcome."""

    def streamed(self, slug: str, piece: str) -> None:
        """A piece of answer text arrived; lines never show it."""

    def call_ended(self, slug: str) -> None:
        """A call is over; its outcome is told by whoever made it."""


@dataclass
class LiveProgress:
    """A rich live table: one row per persona with its state (`thinking` until its answer's
    first piece, then `streaming`), the seconds its call has taken, the characters of answer
    received, its tokens once done, and, under `latest`, the last line of text received,
    a retry in waiting (`429 rate limited, retry 2/4 in 8 s`) or the outcome.

    A call outside the round's table (the convergence check, the synthesis, the solo
    answer) gets a row of its own below it while it runs. The table is drawn again on
    every refresh (a few times a second, not per piece of text), so the seconds count
    while a call hangs; `clock` (monotonic seconds) is what they are counted by.
    """

    stream: TextIO | None = None
    lines: dict[str, PersonaLine] = field(default_factory=dict)
    title: str = ""
    clock: Callable[[], float] = time.monotonic
    # Rows of the calls running outside the round's table, by who is asked.
    calls: dict[str, PersonaLine] = field(default_factory=dict)
    # The round's seats whose text is counted, never shown (round 1 sealed for a person).
    sealed: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=self.stream or sys.stderr)
        self.live = Live(
            console=self.console,
            refresh_per_second=4,
            transient=False,
            get_renderable=self._shown,
        )

    def _shown(self) -> RenderableType:
        """What the live area holds: the running round's table and the calls outside it,
        or nothing between rounds."""
        from rich.console import Group
        from rich.text import Text

        shown: list[RenderableType] = []
        if self.lines:
            shown.append(self._table())
        calls = dict(self.calls)  # the refresh thread reads it while calls come and go
        if calls:
            shown.append(self._rows("", calls, "call"))
        return Group(*shown) if shown else Text("")

    def _table(self) -> Table:
        return self._rows(self.title, self.lines, "persona")

    def _rows(self, title: str, lines: dict[str, PersonaLine], who: str) -> Table:
        from rich.table import Table

        now = self.clock()
        table = Table(title=_cell(title) if title else None, expand=False)
        table.add_column(who)
        table.add_column("state")
        table.add_column("time", justify="right")
        table.add_column("chars", justify="right")
        table.add_column("tokens", justify="right")
        table.add_column(LATEST_HEADER, no_wrap=True, overflow="ellipsis")
        styles = {
            "waiting": "dim",
            "thinking": "yellow",
            STREAMING: "yellow",
            "done": "green",
            "failed": "red",
            "skipped": "dim",
            "kept": "cyan",
            "researching": "magenta",
            WAITING_FOR_YOU: "bold yellow",
        }
        for slug, line in list(lines.items()):  # the refresh thread reads it too
            table.add_row(
                _cell(slug),
                _cell(line.shown_state(), styles.get(line.shown_state(), "")),
                line.elapsed(now),
                f"{line.chars:,}" if line.chars else "",
                str(line.tokens or ""),
                _cell(line.text(now)),
            )
        return table

    def start(self) -> None:
        self.live.start()

    def stop(self) -> None:
        self.live.stop()

    def note(self, message: str) -> None:
        if self.lines and all(line.state in FINAL_STATES for line in self.lines.values()):
            # What follows a finished round (its check, the synthesis) reads below its table.
            self._close_round()
        self.live.console.print(_cell(message), highlight=False)

    def round_started(self, number: int, title: str, personas: list[str]) -> None:
        self._close_round()
        self.title = f"Round {number} — {title}"
        self.lines = {p: PersonaLine() for p in personas}
        self.sealed = frozenset()
        self.live.refresh()

    def _close_round(self) -> None:
        """Print the round's table for good and empty the live area."""
        if not self.lines:
            return
        self.live.console.print(self._table())
        self.lines, self.title = {}, ""
        self.live.refresh()

    def persona(self, slug: str, state: str, tokens: int = 0, detail: str = "") -> None:
        line = self.lines.setdefault(slug, PersonaLine())
        if state in ("thinking", WAITING_FOR_YOU):
            line.started, line.ended, line.retry = self.clock(), None, None
            line.chars, line.tail = 0, ""
        elif state in FINAL_STATES and line.started is not None:
            line.ended = self.clock()
        line.state, line.detail = state, detail
        line.tokens = tokens or line.tokens
        self.live.refresh()

    def retrying(self, slug: str, notice: RetryNotice) -> None:
        """Show the retry in the call's row (its text starts over); a call with no row
        gets a line."""
        line = self._running(slug)
        if line is None:
            self.note(f"{slug}: {notice.text()}")
            return
        line.retry, line.retry_at = notice, self.clock()
        line.chars, line.tail = 0, ""
        self.live.refresh()

    def call_started(self, slug: str) -> None:
        """A call of a persona in the round's table shows in its row; any other gets a row
        below the table until it ends (a finished round's table is printed first)."""
        line = self.lines.get(slug)
        if line is not None:  # a repair call starts the row's text over
            line.chars, line.tail = 0, ""
            return
        if self.lines and all(line.state in FINAL_STATES for line in self.lines.values()):
            self._close_round()
        self.calls[slug] = PersonaLine(state="thinking", started=self.clock())
        self.live.refresh()

    def seal_text(self, slugs: Collection[str]) -> None:
        """These seats' answers are sealed this round: their rows count the characters
        received and show none of the text."""
        self.sealed = frozenset(slugs)

    def streamed(self, slug: str, piece: str) -> None:
        """Count a piece of answer text in the call's row; the next refresh shows it."""
        line = self.calls.get(slug) or self.lines.get(slug)
        if line is not None:
            line.chars += len(piece)
            if slug not in self.sealed or slug in self.calls:
                line.tail = (line.tail + piece)[-TAIL_KEPT:]

    def call_ended(self, slug: str) -> None:
        """A call outside the round's table is over: its row goes."""
        if self.calls.pop(slug, None) is not None:
            self.live.refresh()

    def _running(self, slug: str) -> PersonaLine | None:
        line = self.calls.get(slug) or self.lines.get(slug)
        return line if line is not None and line.state == "thinking" else None


def _cell(text: str, style: str = "") -> Text:
    """Text for the live table as it is: never read as rich markup, control characters shown."""
    from rich.text import Text

    return Text(printable(text), style=style)


class QuietProgress(PlainProgress):
    """Nothing but what the caller prints at the end."""

    def note(self, message: str) -> None:
        pass


Progress = PlainProgress | LiveProgress


def make_progress(*, quiet: bool, tty: bool, stream: TextIO | None = None) -> Progress:
    """The progress display that fits the output."""
    if quiet:
        return QuietProgress(stream)
    if tty:
        return LiveProgress(stream)
    return PlainProgress(stream)
