"""`council watch` and `council serve` as real processes: redraw on change, clean Ctrl-C."""

from __future__ import annotations

import contextlib
import io
import queue
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
from debate_story import as_from_a_terminal, council_argv, council_environment, spawn
from in_flight_writer import Writer
from rich.console import Console

from dreamcontext_council.dashboard.watch import board_text, watch_board
from dreamcontext_council.folder.paths import Root

from .conftest import REFERENCE_ID, Council, give_verdict, new_running_debate


class Lines:
    """A process's stdout, line by line, with timeouts."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert process.stdout is not None
        stream = process.stdout

        def pump() -> None:
            for raw in iter(stream.readline, b""):
                self.lines.put(raw.decode("utf-8", "replace"))

        threading.Thread(target=pump, daemon=True).start()

    def until(self, found: Callable[[str], bool], seconds: float = 10) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(line)
            if found(line):
                return line
        raise AssertionError("not seen in time; output so far:\n" + "".join(self.seen))


def stop(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, err.decode("utf-8", "replace")


def test_watch_prints_the_board_again_when_a_verdict_lands(
    tmp_path: Path, council: Callable[[Root], Council]
) -> None:
    root = Root(tmp_path / "_dream_context")
    run = council(root)
    debate_id = new_running_debate(run, "Watch this?", ("risk-auditor", "growth-cfo"))
    process = spawn(["watch", debate_id], root.path, tmp_path)
    try:
        out = Lines(process)
        out.until(lambda line: "risk-auditor" in line and "no verdict yet" in line)
        out.until(lambda line: line.startswith("╰"))
        time.sleep(0.3)  # the observer is watching by the time the first board is out
        give_verdict(run, debate_id, "risk-auditor", "A", 80, "Ops cost halves")
        out.until(lambda line: '"Ops cost halves"' in line, seconds=5)
    finally:
        code, err = stop(process)
    assert code == 0, err
    assert "Traceback" not in err


@contextlib.contextmanager
def watching(root: Root, console: Console, **options: object) -> Iterator[None]:
    """`watch_board` of the reference debate in a thread, stopped (and checked to have
    stopped) when the block ends."""
    done = threading.Event()
    thread = threading.Thread(
        target=watch_board,
        args=(root, REFERENCE_ID, console),
        kwargs={"stop": done, **options},
    )
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=5)
    assert not thread.is_alive()


def test_watch_on_a_terminal_redraws_in_place_and_stops_cleanly(reference_root: Root) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, color_system=None)
    with watching(reference_root, console):
        time.sleep(0.5)
        verdicts = reference_root.debate(REFERENCE_ID).verdicts
        verdicts.write_text(
            verdicts.read_text().replace("user-advocate says B in R2", "Changed my mind")
        )
        deadline = time.monotonic() + 5
        while "Changed my mind" not in screen.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    drawn = screen.getvalue()
    assert "user-advocate says B in R2" in drawn and "Changed my mind" in drawn
    assert "watching council_lwVpZDlF" in drawn


def _until(screen: io.StringIO, seen: Callable[[str], bool]) -> str:
    """The last frame drawn once `seen` holds for it (within five seconds)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        frame = screen.getvalue().rsplit("\x1b[2K", 1)[-1].split("╭", 1)[-1]
        if "watching" in frame and seen(frame):
            return frame
        time.sleep(0.05)
    raise AssertionError(f"never drawn; the last frame was:\n{frame}")


def test_watch_on_a_terminal_shows_the_calls_in_progress_until_they_end(
    reference_root: Root,
) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, color_system=None)
    with watching(reference_root, console):
        _until(screen, lambda frame: "in flight" not in frame)
        with Writer(reference_root.path, REFERENCE_ID, "outsider") as writer:
            writer.send("add", "x" * 1234)
            first = _until(screen, lambda frame: "1,234 chars" in frame)
            assert "in flight:" in first and "outsider  round r1" in first
            # Nothing changes on disk, and the seconds go on counting.
            _until(screen, lambda frame: re.search(r"1,234 chars  [1-9]\d* s", frame) is not None)
            writer.send("add", "\x1b[31m" + "y" * 1000)
            _until(screen, lambda frame: "2,239 chars" in frame)
            writer.send("end")
            _until(screen, lambda frame: "in flight" not in frame)
    assert "\x1b[31m" not in screen.getvalue()


def test_watch_to_a_pipe_leaves_the_calls_in_progress_out(reference_root: Root) -> None:
    written: list[str] = []
    console = Console(file=io.StringIO(), force_terminal=False)
    with (
        watching(reference_root, console, write=written.append),
        Writer(reference_root.path, REFERENCE_ID, "outsider") as writer,
    ):
        writer.send("burst", 20)
        time.sleep(0.6)  # time for a redraw, were one made for the calls
        verdicts = reference_root.debate(REFERENCE_ID).verdicts
        verdicts.write_text(
            verdicts.read_text().replace("user-advocate says B in R2", "Changed my mind")
        )
        deadline = time.monotonic() + 5
        while not any("Changed my mind" in text for text in written):
            assert time.monotonic() < deadline, "the changed board was not written"
            time.sleep(0.05)
    assert len(written) == 2, "the first board, then the one the record's change made"
    assert not any("in flight" in text for text in written)


def test_watch_says_so_when_the_debate_cannot_be_read(reference_root: Root) -> None:
    reference_root.debate(REFERENCE_ID).verdicts.write_text("{")
    assert "Cannot read council_lwVpZDlF right now" in board_text(reference_root, REFERENCE_ID)


def test_watch_of_an_unknown_debate_fails_plainly(
    reference_root: Root, council: Callable[[Root], Council]
) -> None:
    done = council(reference_root)("watch", "council_00000000")
    assert done.code == 1 and "No debate council_00000000" in done.err


def test_serve_prints_its_url_serves_pages_and_stops_on_ctrl_c(
    reference_root: Root, tmp_path: Path
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = spawn(["serve", "--port", str(port)], reference_root.path, tmp_path)
    try:
        line = Lines(process).until(lambda text: "http://" in text)
        url = f"http://127.0.0.1:{port}/"
        assert url in line
        deadline = time.monotonic() + 10
        while True:
            try:
                response = httpx.get(url + f"d/{REFERENCE_ID}", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert response.status_code == 200 and "Migrate now" in response.text
        assert httpx.post(url, timeout=2).status_code == 405
        # A name that is not this machine's (DNS rebinding) is refused.
        assert httpx.get(url, headers={"host": "rebound.example"}, timeout=2).status_code == 400
    finally:
        code, err = stop(process)
    assert code == 0, err
    assert "Traceback" not in err


def test_serve_on_a_busy_port_says_which_option_to_change(
    reference_root: Root, council: Callable[[Root], Council]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = council(reference_root)("serve", "--port", str(port))
    assert done.code == 1
    assert f"Port {port} on 127.0.0.1 is already in use; pass --port" in done.err


def test_watch_on_a_real_terminal_exits_0_on_ctrl_c_and_restores_the_cursor(
    reference_root: Root, tmp_path: Path
) -> None:
    import os
    import pty
    import select

    controller, terminal = pty.openpty()
    env = council_environment(reference_root.path, {"TERM": "xterm-256color", "COLUMNS": "120"})
    process = subprocess.Popen(
        council_argv("watch", REFERENCE_ID),
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=tmp_path,
        env=env,
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )
    os.close(terminal)
    seen = b""

    def read_until(marker: bytes, seconds: float) -> None:
        nonlocal seen
        deadline = time.monotonic() + seconds
        while marker not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.1)
            if ready:
                try:
                    seen += os.read(controller, 65536)
                except OSError:
                    break

    try:
        read_until(b"Ctrl-C to stop", 15)
        assert b"user-advocate says B in R2" in seen
        assert b"\x1b[?25l" in seen  # the cursor is hidden while the board is live
        process.send_signal(signal.SIGINT)
        read_until(b"\x1b[?25h", 10)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    assert b"\x1b[?25h" in seen  # and shown again on the way out
    assert b"Traceback" not in seen and b"Aborted" not in seen


def test_watch_on_an_80_column_terminal_draws_a_whole_board(reference_root: Root) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=80, color_system=None)
    with watching(reference_root, console):
        deadline = time.monotonic() + 5
        while "watching" not in screen.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())

    frame = [line for line in drawn.splitlines() if line[:1] in ("╭", "│", "╰")]
    assert frame[0].startswith("╭") and frame[0].endswith("╮")
    assert frame[-1] == "╰" + "─" * 78 + "╯"
    assert all(len(line) == 80 and line.endswith(("│", "╮", "╯")) for line in frame)
    assert any('"user-advocate says B in R2"' in line for line in frame)
