"""In-flight calls: what a run is asking right now, with the answer's text so far.

A run keeps one machine-local file per call it is making, and per seat it waits on, in
`council/<id>/.in-flight/<pid>-<n>.json`: who is asked (a persona's slug, `(synthesis)`,
`(orchestrator)`), in which phase and round, since when, and the text received so far.
Other processes (`show --json`, the dashboard, the MCP server) read these files to show a
round in progress. The file is written a few times a second at most, whatever the number
of chunks; it goes when the call ends. A file whose writer no longer runs is stale: readers
skip it and `remove_leftover_in_flight` deletes it. Git never sees these files (the
root's `.gitignore`, see `machine_local`), and the Node tool never needs them.

A file is read as untrusted input (a cloned repository may carry one): every field is
checked (known states, finite numbers in range, bounded strings), and one that fails is
left out. The writer's pid is checked on this host only; a file from another host is
shown as such (`from host <name>, not checked`), never counts as a seat waited on, and is
left out, and swept, once it has not been written for `OTHER_HOST_FRESH_S`. The folder
itself is never listed nor swept through a link.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.run_record import (
    RunRecord,
    process_start,
    still_running,
    this_host,
)
from dreamcontext_council.folder.safe_read import read_bytes
from dreamcontext_council.folder.safe_write import no_link_at
from dreamcontext_council.folder.storage import atomic_write_json

IN_FLIGHT_DIR = ".in-flight"
# The states a file can tell: a model answering, a retry being waited out, a person's turn.
STREAMING, RETRYING, WAITING = "streaming", "retrying", "waiting"
STATES = (STREAMING, RETRYING, WAITING)
# At most this often a call's file is written again (seconds).
WRITE_EVERY_S = 0.25
# Characters of text a file keeps: the end of the answer so far.
TEXT_KEPT = 24_000
# A file is never bigger than its text and a few fields; a bigger one is not read.
MAX_BYTES = 256 * 1024
# `<pid>-<n>.json`: the writer's pid first, so a leftover of a dead writer is told apart.
_NAME = re.compile(r"(?P<pid>[1-9][0-9]{0,8})-[0-9]{1,9}\.json")
# A file from another host cannot be checked from here: it counts while it was written in
# the last this many seconds (its modification time, which its content cannot forge).
OTHER_HOST_FRESH_S = 900.0
# What a field may hold; a file past a bound is not one this tool wrote, and is left out.
MAX_NAME = 100  # persona, phase
MAX_HOST = 255
MAX_DETAIL = 500  # longer is cut
MAX_ROUND = 1000
MAX_CHARS = 10**12
MAX_STARTED = 2.0**34  # seconds since the epoch: the year 2514
_numbers = itertools.count(1)


def in_flight_dir(folder: Path) -> Path:
    """Where the debate in `folder` keeps its in-flight files."""
    return folder / IN_FLIGHT_DIR


@dataclass(frozen=True)
class InFlight:
    """One call in progress as its file tells it.

    `chars` counts the characters received so far (all of them, though `text` keeps only
    the last `TEXT_KEPT`); `elapsed_s` runs from `started` (seconds since the epoch) to
    when the file was read. `state` is one of `STATES`. `other_host` names the host of a
    file written elsewhere, whose writer could not be checked (`detail` says so too).
    """

    persona: str
    phase: str
    round: int
    state: str
    chars: int
    text: str
    started: float
    elapsed_s: float
    detail: str = ""
    other_host: str = ""  # the host that wrote the file, when it is not this one

    def to_json(self) -> dict[str, Any]:
        """The entry `show --json` and the MCP tools give for this call."""
        return {
            "persona": self.persona,
            "phase": self.phase,
            "round": self.round,
            "state": self.state,
            "chars": self.chars,
            "elapsed_s": round(self.elapsed_s, 1),
            "detail": self.detail,
        }

    @property
    def last_line(self) -> str:
        """The last line of text received that holds something."""
        for line in reversed(self.text.splitlines()):
            if line.strip():
                return line.strip()
        return ""


class InFlightCall:
    """The file of one call this process is making, kept up to date as text arrives.

    `start` writes it (`begin` leaves the first write to `add` or `flush`); `add` appends a
    piece of text and writes again when `every` seconds have passed since the last write
    (`keep` only appends, for an owner whose own timer calls `flush`); `restart` drops the
    text (a retry starts over) and `set_state` tells a retry or a wait; `end` removes the
    file. Writing never fails the call: a file that cannot be written just is not there to
    read.
    """

    def __init__(
        self,
        folder: Path,
        *,
        within: Path,
        persona: str,
        phase: str,
        round: int,
        state: str = STREAMING,
        every: float = WRITE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        pid = os.getpid()
        self.path = in_flight_dir(folder) / f"{pid}-{next(_numbers)}.json"
        self.within = within
        self.persona, self.phase, self.round = persona, phase, round
        self.state, self.detail = state, ""
        self.every, self.clock = every, clock
        self.started = time.time()
        self.chars = 0
        self._pieces: list[str] = []
        self._kept = 0
        self._written_at: float | None = None
        self._dirty = False
        self._on_disk = False  # whether a write was tried, so `end` has a file to remove
        self._owner = _owner(pid)

    @property
    def text(self) -> str:
        """The text so far (its last `TEXT_KEPT` characters)."""
        return "".join(self._pieces)[-TEXT_KEPT:]

    def start(self) -> None:
        """Write the file for the first time."""
        self._write()

    def begin(self) -> None:
        """Count from now, writing nothing yet: the first write is due `every` seconds on,
        by `add` or `flush`, so a call answered sooner never touches the disk."""
        self._written_at, self._dirty = self.clock(), True

    def add(self, piece: str) -> None:
        """Take a piece of the answer; the file follows within `every` seconds of text."""
        if not piece:
            return
        self.keep(piece)
        if self._written_at is None or self.clock() - self._written_at >= self.every:
            self._write()

    def keep(self, piece: str) -> None:
        """Take a piece of the answer without writing: the next `flush` writes it."""
        if not piece:
            return
        self.chars += len(piece)
        self._pieces.append(piece)
        self._kept += len(piece)
        if self._kept > 2 * TEXT_KEPT:  # keep memory bounded on a very long answer
            joined = "".join(self._pieces)[-TEXT_KEPT:]
            self._pieces, self._kept = [joined], len(joined)
        self._dirty = True

    def restart(self) -> None:
        """Forget the text so far: the attempt that sent it failed and is tried again."""
        self.chars, self._pieces, self._kept = 0, [], 0
        self._write()

    def set_state(self, state: str, detail: str = "") -> None:
        """Tell another state (`RETRYING` with why, `STREAMING` again, `WAITING`)."""
        self.state, self.detail = state, detail
        self._write()

    def flush(self) -> None:
        """Write the text not yet on disk, if any."""
        if self._dirty:
            self._write()

    def end(self) -> None:
        """The call is over: its file goes."""
        if not self._on_disk:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _write(self) -> None:
        data = {
            "persona": self.persona,
            "phase": self.phase,
            "round": self.round,
            "state": self.state,
            "detail": self.detail,
            "chars": self.chars,
            "started": self.started,
            "text": self.text,
            **self._owner,
        }
        self._written_at, self._dirty, self._on_disk = self.clock(), False, True
        with contextlib.suppress(OSError, CouncilError):
            atomic_write_json(self.path, data, within=self.within, durable=False)


_owners: dict[str, Any] = {}


def _owner(pid: int) -> dict[str, Any]:
    """Who writes: the pid, the host and the process's start (read once per process)."""
    if _owners.get("pid") != pid:  # a forked child is another writer
        _owners.clear()
        _owners.update(pid=pid, host=this_host(), process_start=process_start(pid))
    return dict(_owners)


def read_in_flight(folder: Path, *, now: float | None = None) -> list[InFlight]:
    """The calls in progress in the debate `folder`, oldest first; stale files are skipped.

    Never fails: a file that is missing, unreadable, too big, malformed, holds a field out
    of its bounds or is a link out of the folder is left out, and so is every file when
    the in-flight folder itself is a link.
    """
    directory = in_flight_dir(folder)
    if not _real_folder(directory):
        return []
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    moment = time.time() if now is None else now
    calls: list[InFlight] = []
    for name in names:
        match = _NAME.fullmatch(name)
        if match is None:
            continue
        call = _read_one(directory / name, folder, int(match["pid"]), moment)
        if call is not None:
            calls.append(call)
    calls.sort(key=lambda call: (call.started, call.persona))
    return calls


def _real_folder(directory: Path) -> bool:
    """Whether `directory` is a folder and not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(directory).st_mode)
    except OSError:
        return False


def _read_one(path: Path, folder: Path, pid: int, now: float) -> InFlight | None:
    data = _data(path, folder)
    if data is None or data.get("pid") != pid:  # the name's pid is the one a sweep checks
        return None
    call = _checked(data, now)
    if call is None:
        return None
    if not call.other_host:
        return call if _written_by_a_live_process(data) else None
    return call if _fresh(path, now) else None


def _checked(data: dict[str, Any], now: float) -> InFlight | None:
    """The call a file's fields tell, each checked against what a writer writes; None when
    one is missing, of another type or out of its bounds."""
    persona, phase, state = data.get("persona"), data.get("phase"), data.get("state")
    number, chars, started = data.get("round"), data.get("chars"), data.get("started")
    text, detail, host = data.get("text", ""), data.get("detail", ""), data.get("host")
    if not (_name(persona, MAX_NAME) and _name(phase, MAX_NAME) and _name(host, MAX_HOST)):
        return None
    if state not in STATES or not (isinstance(text, str) and isinstance(detail, str)):
        return None
    if not (_whole(number, MAX_ROUND) and _whole(chars, MAX_CHARS)):
        return None
    if isinstance(started, bool) or not isinstance(started, int | float):
        return None
    if not 0 <= started <= MAX_STARTED:  # NaN and the infinities fail it too
        return None
    started = float(started)  # an int this small converts exactly
    other = "" if host == this_host() else host
    return InFlight(
        persona=persona,
        phase=phase,
        round=number,
        state=str(state),
        chars=chars,
        text=text[-TEXT_KEPT:],
        started=started,
        elapsed_s=max(0.0, now - started),
        detail=f"from host {other}, not checked" if other else detail[:MAX_DETAIL],
        other_host=other,
    )


def _name(value: object, limit: int) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value) <= limit


def _whole(value: object, limit: int | None = None) -> TypeGuard[int]:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return False
    return limit is None or value <= limit


def _fresh(path: Path, now: float) -> bool:
    """Whether the file at `path` was written in the last `OTHER_HOST_FRESH_S` seconds."""
    try:
        return now - os.stat(path).st_mtime <= OTHER_HOST_FRESH_S
    except OSError:
        return False


def _written_by_a_live_process(data: dict[str, Any]) -> bool:
    """Whether the writer a file of this host names still runs (the pid and the process's
    start, as for run.json). A file without a start where the start can be read is not
    one this tool wrote: a pid alone (1, say) would count as running forever."""
    pid, start = data.get("pid"), data.get("process_start")
    if not _whole(pid) or (start is not None and not _whole(start)):
        return False
    if start is None and process_start(pid) is not None:
        return False
    return still_running(RunRecord(pid, this_host(), "", start))


def remove_leftover_in_flight(folder: Path, *, within: Path) -> list[Path]:
    """Delete the in-flight files of writers that no longer run; returns the paths removed.

    Only files named as `InFlightCall` names them are looked at; one whose pid is this
    process's or still runs on this host stays, and one from another host stays while it
    is fresh (see `OTHER_HOST_FRESH_S`). LinkOut when the in-flight folder, or a folder
    between the root `within` and it, is a link: nothing is listed or deleted through it.
    Else tidying never stops a command.
    """
    directory = in_flight_dir(folder)
    no_link_at(directory, within)
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    removed: list[Path] = []
    now = time.time()
    for name in names:
        match = _NAME.fullmatch(name)
        if match is None:
            continue
        path = directory / name
        if _kept(path, folder, int(match["pid"]), now):
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


def _kept(path: Path, folder: Path, pid: int, now: float) -> bool:
    """Whether a sweep leaves the file at `path`: its writer may still be at work."""
    data = _data(path, folder)
    if data is None:  # not readable now: the pid alone says whether its writer runs
        return still_running(RunRecord(pid, this_host(), "", None))
    host = data.get("host")
    if _name(host, MAX_HOST) and host != this_host():
        return _fresh(path, now)
    return _written_by_a_live_process({**data, "pid": pid})


def _data(path: Path, folder: Path) -> dict[str, Any] | None:
    """The JSON object of an in-flight file; None when it cannot be read as one."""
    try:
        data = json.loads(read_bytes(path, within=folder, limit=MAX_BYTES))
    except (OSError, ValueError, CouncilError):
        return None
    return data if isinstance(data, dict) else None
