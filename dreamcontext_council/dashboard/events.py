"""File changes under the root, as asyncio queues for server-sent events.

Watchdog sees every write (CLI commands, `council run`, hand edits) to what a page has
open, the index and the debates being viewed (see `watches`), and hands the debate id to
the event loop; bursts are gathered for `debounce` seconds and then
every subscriber of that debate, and every subscriber of the list, is told once.

A debate's in-flight files (the text of the calls a run is making) change a few times a
second per call; their changes are gathered apart, for `in_flight_every` seconds, so a
page hears of them at most that often, as an `in-flight` event that carries the calls
themselves (the page re-renders nothing). Nothing runs while nothing changes: no timer is
set until a change arrives.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.sealed import round_one_sealed_in, sealed_calls
from dreamcontext_council.dashboard.changes import in_flight_of, in_flight_topic, wakes
from dreamcontext_council.dashboard.watches import Watches
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.in_flight import read_in_flight
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.sealing import SEALED_ROUND
from dreamcontext_council.views.contained import is_inside
from dreamcontext_council.views.in_flight import page_calls

log = logging.getLogger(__name__)

KEEPALIVE_S = 15.0
# At most this often a page hears of the text of calls in progress (seconds).
IN_FLIGHT_EVERY_S = 0.4


class _Subscriber:
    def __init__(self, topic: str | None) -> None:
        self.topic = topic  # a debate id, or None for the list of debates
        self.queue: asyncio.Queue[list[str] | None] = asyncio.Queue(maxsize=1)

    def push(self, keys: list[str] | None) -> None:
        if self.queue.full():
            # One pending message is enough: the page re-reads everything it shows. Keys
            # not yet sent join it, so a change to the record is not lost behind the
            # text of a call, nor the other way round.
            pending = self.queue.get_nowait()
            if keys is not None:
                keys = None if pending is None else sorted(set(pending) | set(keys))
        self.queue.put_nowait(keys)


class ChangeFeed:
    """Watches the root; subscribers get a queue of changed debate ids."""

    def __init__(
        self, root: Root, debounce: float = 0.1, in_flight_every: float = IN_FLIGHT_EVERY_S
    ) -> None:
        self.root = root
        self.watched = root.path.resolve()
        self.debounce = debounce
        self.in_flight_every = in_flight_every
        self._subscribers: set[_Subscriber] = set()
        self._pending: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._pending_calls: set[str] = set()
        self._calls_timer: asyncio.TimerHandle | None = None
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
        for timer in (self._timer, self._calls_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._calls_timer = None
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
        if in_flight_of(key) is not None:
            self._pending_calls.add(key)
            if self._calls_timer is None and self._loop is not None:
                # The first change of the text starts the wait; the ones during it join it.
                self._calls_timer = self._loop.call_later(self.in_flight_every, self._flush_calls)
            return
        self._pending.add(key)
        if self._timer is None and self._loop is not None:
            # Deliver `debounce` after the first event of a burst, so a long burst
            # (a whole `council run` round) still updates pages while it goes on.
            self._timer = self._loop.call_later(self.debounce, self._flush)

    def _flush_calls(self) -> None:
        self._calls_timer = None
        keys, self._pending_calls = sorted(self._pending_calls), set()
        self._deliver(keys)

    def _flush(self) -> None:
        self._timer = None
        keys, self._pending = sorted(self._pending), set()
        self._deliver(keys)

    def _deliver(self, keys: list[str]) -> None:
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
        """Server-sent events: `change` with the changed ids, `in-flight` with a debate's
        calls in progress (at once when there are any, then as they change), comments to
        keep the line open."""
        if self.closed:
            return
        with self.subscribe(topic) as queue:
            yield "retry: 1000\n: connected\n\n"
            is_debate = topic is not None and topic.startswith("council_")
            if is_debate and (calls := await self._calls(str(topic))):
                yield calls
            while True:
                try:
                    keys = await asyncio.wait_for(queue.get(), timeout=KEEPALIVE_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if keys is None:
                    return
                changed = [key for key in keys if in_flight_of(key) is None]
                if changed and wakes(topic, changed):
                    yield f"event: change\ndata: {json.dumps(changed)}\n\n"
                if is_debate and in_flight_topic(str(topic)) in keys:
                    yield await self._calls(str(topic)) or _calls_event([])

    async def _calls(self, debate_id: str) -> str:
        """The `in-flight` event of a debate's calls in progress; empty when there are none."""
        folder = self.root.debate(debate_id).folder
        if not is_inside(folder, self.root.council):
            return ""  # a debate folder that links out of the root is not read (nor shown)
        calls = await asyncio.to_thread(read_in_flight, folder)
        if any(call.round == SEALED_ROUND for call in calls):
            files = DebateFiles(self.root, debate_id)
            if await asyncio.to_thread(_sealed, files):
                calls = sealed_calls(calls)  # a person's seat has yet to answer round 1
        return _calls_event(page_calls(calls)) if calls else ""


def _sealed(files: DebateFiles) -> bool:
    """Whether round 1 is sealed; a debate that cannot be read now is, to be safe."""
    try:
        return round_one_sealed_in(files)
    except (CouncilError, OSError, UnicodeDecodeError):
        return True


def _calls_event(calls: list[dict[str, object]]) -> str:
    # json.dumps escapes newlines inside strings: the data stays on one line.
    return f"event: in-flight\ndata: {json.dumps({'calls': calls})}\n\n"
