"""Progress of a run: a live table on a terminal, plain lines elsewhere, or nothing."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from dreamcontext_council.views.terminal import printable

if TYPE_CHECKING:
    from rich.text import Text


# A persona in one of these states is finished for the round.
FINAL_STATES = frozenset({"done", "failed", "skipped", "kept"})


@dataclass
class PersonaLine:
    state: str = "waiting"
    tokens: int = 0
    detail: str = ""


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


@dataclass
class LiveProgress:
    """A rich live table: one row per persona with state and tokens so far."""

    stream: TextIO | None = None
    lines: dict[str, PersonaLine] = field(default_factory=dict)
    title: str = ""

    def __post_init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=self.stream or sys.stderr)
        self.live = Live(console=self.console, refresh_per_second=8, transient=False)

    def _table(self) -> object:
        from rich.table import Table

        table = Table(title=_cell(self.title), expand=False)
        table.add_column("persona")
        table.add_column("state")
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
        }
        for slug, line in self.lines.items():
            table.add_row(
                _cell(slug),
                _cell(line.state, styles.get(line.state, "")),
                str(line.tokens or ""),
                _cell(line.detail),
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
        self.live.update(self._table(), refresh=True)  # type: ignore[arg-type]

    def _close_round(self) -> None:
        """Print the round's table for good and empty the live area."""
        if not self.lines:
            return
        from rich.text import Text

        self.live.console.print(self._table())
        self.lines, self.title = {}, ""
        self.live.update(Text(""), refresh=True)

    def persona(self, slug: str, state: str, tokens: int = 0, detail: str = "") -> None:
        line = self.lines.setdefault(slug, PersonaLine())
        line.state, line.detail = state, detail
        line.tokens = tokens or line.tokens
        self.live.update(self._table(), refresh=True)  # type: ignore[arg-type]


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
