"""Waiting for a person's round entry to land in the folder, without a CPU cycle spent.

A person's seat (`run --human`) answers with the hand-driven commands (`verdict`,
`report append`), from any process, any machine (`git pull`) or `run`'s own editor. The
entry has landed when the persona's report.md holds the round's entry and verdicts.json
its verdict for the round: what `run` writes for a model persona in one step.

The wait watches the debate's folder and the persona's with watchdog (inotify on Linux):
the kernel wakes it when one of those two files is written, and it reads them again then.
Nothing polls. Only where the kernel refuses a watch does a slow re-check stand in for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Protocol

from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.rules.seats import is_person

# The files whose writes can land an entry (atomic writes arrive as a move onto them).
WATCHED_NAMES = frozenset({"report.md", "verdicts.json"})
WRITE_EVENTS = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileClosedEvent]
# Where the kernel refuses a watch (its inotify limits reached): a re-check this often.
SAFETY_RECHECK_S = 180.0


class SeatDesk(Protocol):
    """Where a person's seat is answered (engine/protocol/person_seat.py's `PersonDesk`)."""

    async def answer(self, slug: str, number: int, peer: str | None) -> bool:
        """True once the seat's round-N entry is in the folder; raises CouncilError when
        it is missing for the round."""
        ...


def answer_on_disk(files: DebateFiles, slug: str, number: int) -> bool:
    """Whether the persona's round-N answer is in the folder: its entry, and for a
    person's seat its verdict too (the two commands that answer it may come apart)."""
    try:
        person = is_person(files.context(slug).model)
    except CouncilError:
        person = False  # an unreadable context fails the persona in its turn
    if person:
        return entry_landed(files, slug, number)
    return any(e.round == number for e in files.entries(slug))


def entry_landed(files: DebateFiles, slug: str, number: int) -> bool:
    """Whether the persona's round-N entry and its round-N verdict are both in the folder.

    A file that cannot be read now (half-merged, conflicted) is not a landed entry yet."""
    try:
        if slug not in files.verdicts().round(number):
            return False
        return any(e.round == number for e in files.entries(slug))
    except (CouncilError, OSError, UnicodeDecodeError):
        return False


class _Wake(FileSystemEventHandler):
    """Sets an asyncio event from the observer's thread when a watched file is written."""

    def __init__(self, loop: asyncio.AbstractEventLoop, changed: asyncio.Event) -> None:
        self.loop, self.changed = loop, changed

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = (event.src_path, getattr(event, "dest_path", "") or "")
        if any(os.path.basename(os.fsdecode(p)) in WATCHED_NAMES for p in paths if p):
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
                self.loop.call_soon_threadsafe(self.changed.set)


async def until_landed(
    files: DebateFiles, slug: str, number: int, *, timeout: float | None = None
) -> bool:
    """Wait until the persona's round-N entry has landed; False when `timeout` seconds
    (None: no limit) pass first. Cancelling the wait ends the watch."""
    loop = asyncio.get_running_loop()
    changed = asyncio.Event()
    observer: BaseObserver = Observer()
    watched = _watch(observer, _Wake(loop, changed), files, slug)
    if watched:
        observer.start()
    deadline = None if timeout is None else loop.time() + timeout
    try:
        while True:
            changed.clear()  # before the read: a write after it wakes the wait below
            if entry_landed(files, slug, number):
                return True
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return False
            if not watched:
                left = SAFETY_RECHECK_S if left is None else min(left, SAFETY_RECHECK_S)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), left)
    finally:
        if watched:
            observer.stop()
            await asyncio.to_thread(observer.join, 5)


def _watch(observer: BaseObserver, handler: _Wake, files: DebateFiles, slug: str) -> bool:
    """Watch the debate's folder and the persona's (not their sub-folders); False when
    the kernel refuses, or a folder is a link (it may lead anywhere)."""
    folders: list[Path] = [files.paths.folder, files.persona_paths(slug).folder]
    try:
        for folder in folders:
            if folder.is_symlink() or not folder.is_dir():
                return False
            observer.schedule(handler, str(folder), recursive=False, event_filter=WRITE_EVENTS)
    except OSError:
        return False
    return True
