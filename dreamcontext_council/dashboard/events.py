"""File changes under the root, as asyncio queues for server-sent events.

Watchdog sees every write (CLI commands, `council run`, hand edits) to what a page has
open, the index and the debates being viewed (see `watches`), and hands the debate id to
the event loop; bursts are gathered for `debounce` seconds and then
every subscriber of that debate, and every subscriber of the list, is told once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress

from dreamcontext_council.dashboard.changes import wakes
from dreamcontext_council.dashboard.watches import Watches
from dreamcontext_council.folder.paths import Root

log = logging.getLogger(__name__)

KEEPALIVE_S = 15.0


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
        self._watches: Watches | None = None
        self.closed = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the observer thread; changes are delivered on `loop`."""
        self._loop = loop
        self.closed = False
        if not self.watched.is_dir():
            log.warning("%s does not exist; live updates are off", self.watched)
            return
        self._watches = Watches(self.root, self.notify_threadsafe)
        self._watches.start()

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
        if self._watches is not None:
            self._watches.stop()
            self._watches = None

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
            if wakes(subscriber.topic, keys):
                subscriber.push(keys)

    @contextmanager
    def subscribe(self, topic: str | None) -> Iterator[asyncio.Queue[list[str] | None]]:
        """A queue of changed keys for one debate (or, with None, for the list)."""
        subscriber = _Subscriber(topic)
        watches = self._watches
        if watches is not None:
            watches.acquire(topic)
        self._subscribers.add(subscriber)
        try:
            yield subscriber.queue
        finally:
            self._subscribers.discard(subscriber)
            if watches is not None:
                watches.release(topic)

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
