"""run.json: what the last `council run` of a debate left (ours; the Node tool ignores it).

A run writes its pid, host and start time when it takes the debate's run lock, records
why when it stops cleanly, and removes the file when it finishes or pauses for the
interlude. A run killed outright (SIGKILL, a crash) leaves the file as it was written
at the start: a reader tells that apart from a live run by whether its process still
runs.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.live import now_iso
from dreamcontext_council.folder.storage import atomic_write_json, read_text

RUN_RECORD_NAME = "run.json"


@dataclass(frozen=True)
class RunRecord:
    """One run of a debate as its run.json tells it."""

    pid: int
    host: str
    started_at: str
    process_start: int | None = None  # the kernel's start time of `pid`, to spot a reused pid
    stopped_reason: str | None = None
    stopped_at: str | None = None
    stopped_status: str | None = None  # debate.md's status when the run stopped

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "pid": self.pid,
            "host": self.host,
            "started_at": self.started_at,
            "process_start": self.process_start,
        }
        if self.stopped_reason is not None:
            data["stopped"] = {
                "reason": self.stopped_reason,
                "at": self.stopped_at,
                "status": self.stopped_status,
            }
        return data


def this_host() -> str:
    """This machine's name as socket.gethostname() gives it (uname's nodename on POSIX, where
    reading a board need not import socket)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def run_record_path(folder: Path) -> Path:
    """Where a debate folder keeps its run record."""
    return folder / RUN_RECORD_NAME


def begin_run(folder: Path, *, within: Path) -> RunRecord:
    """Record that this process now drives the debate in `folder` of the root `within`."""
    pid = os.getpid()
    record = RunRecord(pid, this_host(), now_iso(), process_start(pid))
    atomic_write_json(run_record_path(folder), record.to_json(), within=within)
    return record


def record_stop(folder: Path, record: RunRecord, reason: str, status: str, *, within: Path) -> None:
    """Record that the run stopped before the debate was done, and why."""
    stopped = RunRecord(
        record.pid,
        record.host,
        record.started_at,
        record.process_start,
        stopped_reason=reason,
        stopped_at=now_iso(),
        stopped_status=status,
    )
    atomic_write_json(run_record_path(folder), stopped.to_json(), within=within)


def end_run(folder: Path) -> None:
    """The run finished or paused as planned: nothing is left to report."""
    with contextlib.suppress(FileNotFoundError):
        run_record_path(folder).unlink()


def read_run_record(folder: Path) -> RunRecord | None:
    """The folder's run record; None without one, or when it does not parse (never fatal)."""
    path = run_record_path(folder)
    try:
        data = json.loads(read_text(path, within=folder))
    except (OSError, ValueError, CouncilError):  # a link out of the folder reads as none
        return None
    if not isinstance(data, dict):
        return None
    pid, host, started = data.get("pid"), data.get("host"), data.get("started_at")
    if not isinstance(pid, int) or not isinstance(host, str) or not isinstance(started, str):
        return None
    start = data.get("process_start")
    stopped = data.get("stopped")
    if not isinstance(stopped, dict):
        stopped = {}
    return RunRecord(
        pid,
        host,
        started,
        start if isinstance(start, int) else None,
        stopped_reason=_text(stopped.get("reason")),
        stopped_at=_text(stopped.get("at")),
        stopped_status=_text(stopped.get("status")),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def process_start(pid: int) -> int | None:
    """The kernel's start time of a process (Linux /proc), None where it cannot be read."""
    fields = _proc_stat(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def still_running(record: RunRecord) -> bool:
    """Whether the process that wrote `record` still runs.

    A record from another host cannot be checked from here and counts as running.
    """
    if record.host != this_host():
        return True
    if record.pid == os.getpid():
        return True
    fields = _proc_stat(record.pid)
    if fields is not None:
        if fields[0] in ("Z", "X"):  # a zombie has ended; only its exit code waits
            return False
        return record.process_start is None or process_start(record.pid) == record.process_start
    if os.name == "nt":  # os.kill cannot probe there; trust the record
        return True
    try:
        os.kill(record.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OSError:
        return False
    return True


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()
