"""File changes under the root, as asyncio queues for server-sent events.

A watchdog observer thread sees every write (CLI commands, `council run`, hand edits) and
hands the debate id to the event loop; bursts are gathered for `debounce` seconds and then
every subscriber of that debate, and every subscriber of the list, is told once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePath

from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import LOCK_NAME

log = logging.getLogger(__name__)


def start_observer(handler: FileSystemEventHandler, folder: Path) -> BaseObserver:
    """A daemon watchdog observer of `folder` and everything below it, started."""
    # inotify re-adds the watches of a folder moved into the tree (a new debate is built
    # under a hidden name and renamed into place) and warns that it did; that is harmless.
    warnings.filterwarnings(
        "ignore", r"Callback with id .+ already exists for watch", RuntimeWarning
    )
    observer = Observer()
    observer.daemon = True
    observer.schedule(handler, str(folder), recursive=True)
    observer.start()
    return observer


LIST = ""  # the key list subscribers see for changes that are not inside one debate
KEEPALIVE_S = 15.0
_WRITES = {EVENT_TYPE_CREATED, EVENT_TYPE_DELETED, EVENT_TYPE_MODIFIED, EVENT_TYPE_MOVED}


def _is_noise(name: str) -> bool:
    # Lock files and the temp files of atomic writes; their rename shows up as a move.
    return name == LOCK_NAME or (name.startswith(".") and name.endswith(".tmp"))


def change_key(root: Path, path: str) -> str | None:
    """Which debate a changed path belongs to: its id, LIST for the index, None to ignore."""
    try:
        parts = PurePath(path).relative_to(root).parts
    except ValueError:
        return None
    if not parts or _is_noise(parts[-1]):
        return None
    if parts[0] == "council":
        if len(parts) >= 2 and parts[1].startswith("council_"):
            return parts[1]
        return LIST
    if parts[0] == "knowledge":
        return LIST
    return None  # tmp/.council-live.json and anything else: telemetry, not the record


def paths_of(event: FileSystemEvent) -> list[str]:
    """The paths a write event touched (a move touches both ends)."""
    if event.event_type not in _WRITES and not (
        event.event_type == EVENT_TYPE_CLOSED and not event.is_directory
    ):
        return []  # opened / closed-without-write come from readers, us included
    if event.is_directory and event.event_type == EVENT_TYPE_MODIFIED:
        return []  # the file event inside says more
    found = [event.src_path, getattr(event, "dest_path", "")]
    return [p.decode() if isinstance(p, bytes) else p for p in found if p]


class _Subscriber:
    def __init__(self, topic: str | None) -> None:
        self.topic = topic  # a debate id, or None for the list of debates
        self.queue: asyncio.Queue[list[str] | None] = asyncio.Queue(maxsize=1)

    def push(self, keys: list[str] | None) -> None:
        if self.queue.full():
            # One pending message is enough: the page re-reads everything it shows.
            if keys is not None:
                return
            self.queue.get_nowait()
        self.queue.put_nowait(keys)


class _Handler(FileSystemEventHandler):
    def __init__(self, feed: ChangeFeed) -> None:
        self.feed = feed

    def on_any_event(self, event: FileSystemEvent) -> None:
        for path in paths_of(event):
            key = change_key(self.feed.watched, path)
            if key is not None:
                self.feed.notify_threadsafe(key)


class ChangeFeed:
    """Watches the root; subscribers get a queue of changed debate ids."""

    def __init__(self, root: Root, debounce: float = 0.1) -> None:
        self.root = root
        self.watched = root.path.resolve()
        self.debounce = debounce
        self._subscribers: set[_Subscriber] = set()
        self._pending: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._observer: BaseObserver | None = None
        self.closed = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the observer thread; changes are delivered on `loop`."""
        self._loop = loop
        self.closed = False
        if not self.watched.is_dir():
            log.warning("%s does not exist; live updates are off", self.watched)
            return
        self._observer = start_observer(_Handler(self), self.watched)

    def close_streams(self) -> None:
        """End every open event stream (the server is shutting down)."""
        self.closed = True
        for subscriber in list(self._subscribers):
            subscriber.push(None)

    def stop(self) -> None:
        """Stop the observer thread and end every stream."""
        self.close_streams()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    def notify_threadsafe(self, key: str) -> None:
        """Called from the observer thread."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            # The loop may close between the check and the call.
            with suppress(RuntimeError):
                loop.call_soon_threadsafe(self._mark, key)

    def _mark(self, key: str) -> None:
        self._pending.add(key)
        if self._timer is None and self._loop is not None:
            # Deliver `debounce` after the first event of a burst, so a long burst
            # (a whole `council run` round) still updates pages while it goes on.
            self._timer = self._loop.call_later(self.debounce, self._flush)

    def _flush(self) -> None:
        self._timer = None
        keys, self._pending = sorted(self._pending), set()
        for subscriber in list(self._subscribers):
            if subscriber.topic is None or subscriber.topic in keys:
                subscriber.push(keys)

    @contextmanager
    def subscribe(self, topic: str | None) -> Iterator[asyncio.Queue[list[str] | None]]:
        """A queue of changed keys for one debate (or, with None, for the list)."""
        subscriber = _Subscriber(topic)
        self._subscribers.add(subscriber)
        try:
            yield subscriber.queue
        finally:
            self._subscribers.discard(subscriber)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    async def stream(self, topic: str | None) -> AsyncIterator[str]:
        """Server-sent events: `change` with the changed ids, comments to keep the line open."""
        if self.closed:
            return
        with self.subscribe(topic) as queue:
            yield "retry: 1000\n: connected\n\n"
            while True:
                try:
                    keys = await asyncio.wait_for(queue.get(), timeout=KEEPALIVE_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if keys is None:
                    return
                yield f"event: change\ndata: {json.dumps(keys)}\n\n"
