"""Progress of a run: a live table on a terminal, plain lines elsewhere, or nothing."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
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
# A person's seat while the run waits for its entry; timed like a call.
WAITING_FOR_YOU = "waiting for you"


@dataclass
class PersonaLine:
    """One persona's row: its state, and when its call started, ended and last failed."""

    state: str = "waiting"
    tokens: int = 0
    detail: str = ""
    started: float | None = None
    ended: float | None = None
    retry: RetryNotice | None = None
    retry_at: float = 0.0

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


@dataclass
class LiveProgress:
    """A rich live table: one row per persona with its state, the seconds its call has
    taken, tokens so far, and a retry in waiting (`429 rate limited, retry 2/4 in 8 s`).

    The table is drawn again on every refresh, so the seconds count while a call hangs;
    `clock` (monotonic seconds) is what they are counted by.
    """

    stream: TextIO | None = None
    lines: dict[str, PersonaLine] = field(default_factory=dict)
    title: str = ""
    clock: Callable[[], float] = time.monotonic

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
        """What the live area holds: the running round's table, or nothing between rounds."""
        from rich.text import Text

        return self._table() if self.lines else Text("")

    def _table(self) -> Table:
        from rich.table import Table

        now = self.clock()
        table = Table(title=_cell(self.title), expand=False)
        table.add_column("persona")
        table.add_column("state")
        table.add_column("time", justify="right")
        table.add_column("tokens", justify="right")
        table.add_column("")
        styles = {
            "waiting": "dim",
            "thinking": "yellow",
            "done": "green",
            "failed": "red",
            "skipped": "dim",
            "kept": "cyan",
            "researching": "magenta",
            WAITING_FOR_YOU: "bold yellow",
        }
        for slug, line in list(self.lines.items()):  # the refresh thread reads it too
            table.add_row(
                _cell(slug),
                _cell(line.state, styles.get(line.state, "")),
                line.elapsed(now),
                str(line.tokens or ""),
                _cell(line.retry_text(now) or line.detail),
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
        elif state in FINAL_STATES and line.started is not None:
            line.ended = self.clock()
        line.state, line.detail = state, detail
        line.tokens = tokens or line.tokens
        self.live.refresh()

    def retrying(self, slug: str, notice: RetryNotice) -> None:
        """Show the retry in the persona's row; a call outside the table gets a line."""
        line = self.lines.get(slug)
        if line is None or line.state != "thinking":
            self.note(f"{slug}: {notice.text()}")
            return
        line.retry, line.retry_at = notice, self.clock()
        self.live.refresh()


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
