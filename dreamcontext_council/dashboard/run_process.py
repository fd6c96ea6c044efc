"""`council run` started from the dashboard: a real process of its own, stopped by signal.

A run the page asks for is the command a user types, `python -m dreamcontext_council
council run …`, started in its own session (Ctrl-C on `serve` does not reach it, and it
goes on when the page or the server is gone) in the project folder, with the server's
environment: the same keys, settings files and pre-flight as in the user's shell. Its
output goes to a file nobody else can read, unlinked as soon as the server has read what
it needed: the new debate's id (the line `Debate <id> created`), or, when the run stops
before that, its error lines for the form.

Stop sends SIGINT, as Ctrl-C does, to the process a debate's run.json names, and only
when that process is this user's running `council run` started at the recorded moment
(a pid reused since, or a folder's record naming some other program, is never signalled).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.run_record import read_run_record, still_running
from dreamcontext_council.views.terminal import printable

_CREATED = re.compile(r"^Debate (council_[A-Za-z0-9]{1,60}) created in ", re.M)
# What of a failed start is shown: its last lines, this much at most.
SHOWN_BYTES = 8 * 1024
# How long a start may take before the page goes on without its id (pre-flight asks
# servers and programs; each has its own timeout well under this).
START_WAIT_S = 120.0
_POLL_S = 0.05


@dataclass(frozen=True)
class Started:
    """What a started run said before the page moves on: the debate it made or resumed,
    or the lines it stopped with (its exit code beside them)."""

    debate_id: str | None
    error: str | None = None
    code: int | None = None


def run_command(root: Root, args: Sequence[str]) -> list[str]:
    """The `council run` command line for this root, as a user would type it."""
    return [
        sys.executable,
        "-m",
        "dreamcontext_council",
        "council",
        "run",
        *args,
        "--root",
        str(root.path),
    ]


async def start_run(
    root: Root, args: Sequence[str], env: Mapping[str, str], *, resumed: str | None = None
) -> Started:
    """Start `council run ARGS` as its own process and wait until it made its debate (or,
    for `resumed`, took it), or stopped: then its error lines are returned."""
    fd, log_path = tempfile.mkstemp(prefix="council-run-", suffix=".log")
    try:
        process = subprocess.Popen(
            run_command(root, args),
            cwd=str(root.path.parent),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(fd)
    # The process is ours to reap: a waiting thread keeps it from lingering as a zombie.
    threading.Thread(target=process.wait, daemon=True).start()
    try:
        return await _first_word(process, Path(log_path), root, resumed)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(log_path)


async def _first_word(
    process: subprocess.Popen[bytes], log: Path, root: Root, resumed: str | None
) -> Started:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_WAIT_S
    while True:
        code = process.poll()
        text = _read(log)
        found = _CREATED.search(text)
        if found is not None:
            return Started(found.group(1))
        if resumed is not None and _driving(root, resumed, process.pid):
            return Started(resumed)
        if code is not None:
            if resumed is not None and code == 0:
                return Started(resumed)
            return Started(None, _error_lines(text, code), code)
        if loop.time() > deadline:
            return Started(resumed)
        await asyncio.sleep(_POLL_S)


def _driving(root: Root, debate_id: str, pid: int) -> bool:
    record = read_run_record(root.council / debate_id)
    return record is not None and record.pid == pid and record.stopped_reason is None


def _read(log: Path) -> str:
    with contextlib.suppress(OSError), open(log, "rb") as stream:
        return stream.read(256 * 1024).decode("utf-8", "replace")
    return ""


def _error_lines(text: str, code: int) -> str:
    """What the run said before it stopped, as plain printable text."""
    tail = text[-SHOWN_BYTES:].strip()
    lines = [printable(line) for line in tail.split("\n") if line.strip()]
    said = "\n".join(lines) or f"`council run` stopped with exit code {code} before it began."
    return said


def stop_run(root: Root, debate_id: str) -> str:
    """Send Ctrl-C's signal to the run driving the debate; what was done, in one line."""
    folder = root.council / debate_id
    record = read_run_record(folder)
    if record is None or record.stopped_reason is not None or not still_running(record):
        return f"No run drives {debate_id} now; nothing to stop."
    if record.process_start is None or not _is_our_run(record.pid):
        return (
            f"The run of {debate_id} (pid {record.pid}) cannot be stopped from here; stop it "
            "where it runs (Ctrl-C)."
        )
    try:
        os.kill(record.pid, signal.SIGINT)
    except OSError as exc:
        return f"The run of {debate_id} could not be stopped ({exc.strerror or exc})."
    return f"Asked the run of {debate_id} (pid {record.pid}) to stop, as Ctrl-C does."


def _is_our_run(pid: int) -> bool:
    """Whether `pid` is this user's process running `council run` of this package."""
    try:
        owner = os.stat(f"/proc/{pid}").st_uid
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if owner != os.getuid():
        return False
    for at in range(len(words) - 1):
        if words[at] == b"council" and words[at + 1] == b"run":
            return any(b"dreamcontext" in word for word in words[:at])
    return False
