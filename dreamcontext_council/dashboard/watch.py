"""`council watch`: the board in the terminal, redrawn when the debate's files change.

On a terminal the calls in progress show below the board (who is asked, the characters
received, the seconds so far), redrawn as their in-flight files change and once a second
while any runs, so the seconds count; nothing is redrawn while nothing runs or changes.
Written to a pipe or a log, a board is written again only when the debate's record
changes: the calls' text would write it several times a second.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.live import Live
from rich.text import Text

from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.dashboard.changes import in_flight_of
from dreamcontext_council.dashboard.watches import Watches
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.views.board import WIDTH, fitted_width, render_board
from dreamcontext_council.views.board_extras import board_extra_lines
from dreamcontext_council.views.listing import in_flight_lines
from dreamcontext_council.views.terminal import printable, terminal_columns

DEBOUNCE_S = 0.1
CLOCK_S = 1.0  # while a call runs, its seconds are redrawn this often


def board_text(root: Root, debate_id: str, width: int = WIDTH) -> str:
    """The board with usage and flags, `width` cells wide, ready for a terminal (control
    characters shown as escapes); a debate that does not parse says so instead."""
    return watched_board(root, debate_id, width)[0]


def watched_board(
    root: Root, debate_id: str, width: int = WIDTH, *, in_flight: bool = False
) -> tuple[str, int]:
    """`board_text`, with `in_flight` the calls in progress below it, and how many run."""
    try:
        snapshot = load_snapshot(root, debate_id, around_conflicts=True)
    except CouncilError as exc:
        return printable(f"Cannot read {debate_id} right now: {exc}"), 0
    banner = "".join(f"Shown without it: {line}\n" for line in snapshot.conflicts)
    board = printable(banner + render_board(snapshot, None, board_extra_lines(snapshot), width))
    calls = [call.to_json() for call in snapshot.in_flight()] if in_flight else []
    # `in_flight_lines` cleans what it shows.
    return board + "".join("\n" + line for line in in_flight_lines(calls)), len(calls)


def watch_board(
    root: Root,
    debate_id: str,
    console: Console,
    *,
    stop: threading.Event | None = None,
    write: Callable[[str], None] | None = None,
) -> None:
    """Show the board until Ctrl-C (or `stop`); redraw on change.

    On a terminal the board is redrawn in place; otherwise (a pipe, a log) each changed
    board is written once, after a blank line, through `write`.
    """
    root.existing_debate(debate_id)
    stop = stop or threading.Event()
    with _ctrl_c_sets(stop):
        _watch(root, debate_id, console, stop, write)


@contextlib.contextmanager
def _ctrl_c_sets(stop: threading.Event) -> Iterator[None]:
    """Ctrl-C ends the watch by setting `stop`, seen between two waits: as an exception it
    could land inside the terminal library while it writes a frame, and leave the display
    half torn down. Only the main thread receives signals; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, lambda _signal, _frame: stop.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _watch(
    root: Root,
    debate_id: str,
    console: Console,
    stop: threading.Event,
    write: Callable[[str], None] | None,
) -> None:
    changed = threading.Event()
    live = console.is_terminal

    def notify(key: str) -> None:
        if key == debate_id or (live and in_flight_of(key) == debate_id):
            changed.set()

    # Only this debate's folder is watched (or polled, past the kernel's watch limit).
    watches = Watches(root, notify)
    watches.start()
    watches.acquire(debate_id)

    def next_change(running: bool = False) -> bool:
        """Wait for a change (or, while calls run, the next second); False once stopped."""
        waited = 0.0
        while not stop.is_set():
            if changed.wait(0.25):
                time.sleep(DEBOUNCE_S)  # let a burst of writes land before re-reading
                changed.clear()
                return True
            waited += 0.25
            if running and waited >= CLOCK_S:
                return True
        return False

    try:
        if live:
            _live(root, debate_id, console, next_change)
        else:
            out = write or _writer(console)
            width = fitted_width(terminal_columns())
            last = board_text(root, debate_id, width)
            out(last + "\n")
            while next_change():
                board = board_text(root, debate_id, width)
                if board != last:
                    out("\n" + board + "\n")
                    last = board
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a watch ends (off the main thread, or before the handler)
    finally:
        watches.stop()


def _writer(console: Console) -> Callable[[str], None]:
    def write(text: str) -> None:
        console.file.write(text)
        console.file.flush()

    return write


def _live(
    root: Root, debate_id: str, console: Console, next_change: Callable[[bool], bool]
) -> None:
    running = False

    def frame() -> Text:
        nonlocal running
        # Fitted to the terminal as it is now, so a resized window gets a whole board.
        board, calls = watched_board(root, debate_id, fitted_width(console.width), in_flight=True)
        running = calls > 0
        text = Text(board, no_wrap=True, overflow="crop")
        stamp = time.strftime("%H:%M:%S")
        text.append(f"\nwatching {debate_id} · updated {stamp} · Ctrl-C to stop", style="dim")
        return text

    live = Live(console=console, auto_refresh=False, transient=False)
    try:
        # Not `with Live(...)`: a Ctrl-C while the first frame is written must still
        # stop the display and show the cursor again.
        live.start()
        live.update(frame(), refresh=True)
        while next_change(running):
            live.update(frame(), refresh=True)
    finally:
        try:
            live.stop()
        finally:
            console.show_cursor(True)
