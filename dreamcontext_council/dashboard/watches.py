"""What the dashboard watches: the root's index, and each debate a page has open.

A root of 10,000 debates holds some 100,000 folders; watching them all costs one inotify
watch each, a long walk at start-up, and a re-walk after every queue overflow that can
overflow again. So only what an open page shows is watched:

- the list: the root, `council/` and `knowledge/`, not recursively (index.json, which
  every command rewrites, and debates appearing or going);
- a debate: its own folder, recursively (a few dozen folders);
- an eval: its own folder and its answers/, not recursively (results.json, debates.json,
  and each question's timing, written when the question is done);
- the evals list: `evals/` and every eval's folder and answers/, not recursively; an eval
  folder that appears is watched from then on.

A scope is watched while someone holds it (`acquire`/`release`, counted) and only writes
are asked of the kernel (a watchdog event_filter), so reading files, as the dashboard does
to draw a page, wakes nothing. When the kernel refuses a watch (fs.inotify.max_user_watches
or max_user_instances reached) the scope is polled instead: a stat of its files every
POLL_S seconds, said once in the log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from dreamcontext_council.dashboard.changes import (
    EVALS_LIST,
    LIST,
    change_key,
    eval_of,
    eval_topic,
    in_flight_topic,
    is_noise,
    paths_of,
)
from dreamcontext_council.folder.in_flight import IN_FLIGHT_DIR
from dreamcontext_council.folder.paths import EVAL_ANSWERS_FOLDER, Root
from dreamcontext_council.views.eval_names import eval_ids

log = logging.getLogger(__name__)

POLL_S = 0.5
# Writes, moves, creations and deletions: what changes a page. Opens and reads are left out,
# so the kernel does not even queue them.
WRITE_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
FALLBACK_NOTE = (
    "The kernel's inotify limit is reached (fs.inotify.max_user_watches or "
    "max_user_instances); live updates now poll the open debates every %.1f s."
)

Topic = str | None  # a debate id, an eval's key (`eval_topic`), EVALS_LIST, or None: the list
Notify = Callable[[str], None]  # gets a change key (a debate id or LIST), from any thread


def scope_folders(root: Root, topic: Topic) -> list[tuple[str, bool]]:
    """The folders a topic needs watched, each with whether to watch it recursively."""
    if topic is None:
        return [(str(root.path), False), (str(root.council), False), (str(root.knowledge), False)]
    if topic == EVALS_LIST:  # the links among them are skipped when scheduled
        return [(str(root.evals), False)] + [
            folder for name in eval_ids(root) for folder in scope_folders(root, eval_topic(name))
        ]
    eval_id = eval_of(topic)
    if eval_id is not None:
        folder = root.evals / eval_id
        return [(str(folder), False), (str(folder / EVAL_ANSWERS_FOLDER), False)]
    return [(str(root.debate(topic).folder), True)]


class _Handler(FileSystemEventHandler):
    def __init__(self, watched: Path, notify: Notify) -> None:
        self.watched = watched
        self.notify = notify

    def on_any_event(self, event: FileSystemEvent) -> None:
        for path in paths_of(event):
            key = change_key(self.watched, path)
            if key is not None:
                self.notify(key)


@dataclass
class _Scope:
    holders: int = 0
    watches: list[ObservedWatch] = field(default_factory=list)
    missing: list[tuple[str, bool]] = field(default_factory=list)  # folders not there yet
    polled: bool = False
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (mtime, size)


class Watches:
    """The scoped watches of one root, with a poll for the scopes the kernel refused."""

    def __init__(self, root: Root, notify: Notify, poll_s: float = POLL_S) -> None:
        self.root = Root(root.path.resolve())
        self.notify = notify
        self.poll_s = poll_s
        self._handler = _Handler(self.root.path, self._on_key)
        self._scopes: dict[Topic, _Scope] = {}
        self._lock = threading.RLock()
        self._observer: BaseObserver | None = None
        self._poller: threading.Thread | None = None
        self._stopping = threading.Event()
        self._said_fallback = False

    def start(self) -> None:
        """Start the observer thread (with nothing watched yet)."""
        # inotify re-adds the watches of a folder moved into the tree (a new debate is built
        # under a hidden name and renamed into place) and warns that it did; that is harmless.
        warnings.filterwarnings(
            "ignore", r"Callback with id .+ already exists for watch", RuntimeWarning
        )
        _quiet_stop_race()
        self._stopping.clear()
        observer = Observer()
        observer.daemon = True
        # Started before anything is scheduled, so a refused watch raises in `acquire`.
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        """Stop watching and polling."""
        self._stopping.set()
        with self._lock:
            observer, self._observer = self._observer, None
            self._scopes.clear()
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
        poller, self._poller = self._poller, None
        if poller is not None:
            poller.join(timeout=5)

    def acquire(self, topic: Topic) -> None:
        """Watch what `topic` needs, until as many `release`s."""
        with self._lock:
            scope = self._scopes.get(topic)
            if scope is None:
                scope = self._scopes[topic] = _Scope()
                self._schedule(topic, scope, scope_folders(self.root, topic))
            scope.holders += 1

    def release(self, topic: Topic) -> None:
        """One holder of `topic` is gone; the last one ends its watches."""
        with self._lock:
            scope = self._scopes.get(topic)
            if scope is None:
                return
            scope.holders -= 1
            if scope.holders > 0:
                return
            del self._scopes[topic]
            watches = list(scope.watches)
        if watches:
            # Stopping an emitter joins its thread; the caller (the event loop) does not wait.
            threading.Thread(target=self._unschedule, args=(watches,), daemon=True).start()

    def _unschedule(self, watches: list[ObservedWatch]) -> None:
        observer = self._observer
        for watch in watches:
            if observer is None:
                return
            with self._lock:
                if any(watch in scope.watches for scope in self._scopes.values()):
                    continue  # held again since the release
                _drop(observer, watch)

    def _schedule(self, topic: Topic, scope: _Scope, folders: list[tuple[str, bool]]) -> None:
        scope.missing = []
        for folder, recursive in folders:
            if scope.polled:
                return
            if os.path.islink(folder):
                # A link in a cloned root may lead anywhere. watchdog's inotify does not
                # follow it (IN_DONT_FOLLOW); other observers might, so it is never asked to.
                continue
            if self._observer is None or not os.path.isdir(folder):
                scope.missing.append((folder, recursive))
                continue
            try:
                watch = self._observer.schedule(
                    self._handler, folder, recursive=recursive, event_filter=WRITE_EVENTS
                )
            except FileNotFoundError:
                scope.missing.append((folder, recursive))  # gone between the check and now
            except OSError:
                self._fall_back(topic, scope)
            else:
                scope.watches.append(watch)

    def _fall_back(self, topic: Topic, scope: _Scope) -> None:
        """The kernel refused a watch: poll this scope from now on."""
        if not self._said_fallback:
            self._said_fallback = True
            log.warning(FALLBACK_NOTE, self.poll_s)
        observer = self._observer
        for watch in scope.watches:
            if observer is not None:
                _drop(observer, watch)
        scope.watches = []
        scope.missing = []
        scope.polled = True
        scope.seen = self._signature(topic)
        if self._poller is None:
            self._poller = threading.Thread(target=self._poll, name="council-poll", daemon=True)
            self._poller.start()

    def _on_key(self, key: str) -> None:
        # Called on the observer's thread, which holds the observer's lock: taking ours
        # here could deadlock with `acquire`, so a missing folder is watched from another.
        topics: list[Topic] = []
        if key == LIST:
            topics = [None]
        elif key == EVALS_LIST:
            topics = [EVALS_LIST]
        elif eval_of(key) is not None:
            topics = [key, EVALS_LIST]
        for topic in topics:
            scope = self._scopes.get(topic)
            if scope is not None and (scope.missing or key == EVALS_LIST):
                threading.Thread(target=self._watch_missing, args=(topic,), daemon=True).start()
        self.notify(key)

    def _watch_missing(self, topic: Topic) -> None:
        """A folder of the scope may have just been made (`council/` or `knowledge/` for the
        list, an eval's answers/, a new eval for the evals list): watch it now."""
        with self._lock:
            scope = self._scopes.get(topic)
            if scope is None or scope.polled:
                return
            watched = {watch.path for watch in scope.watches}
            wanted = [f for f in scope_folders(self.root, topic) if f[0] not in watched]
            if wanted:
                self._schedule(topic, scope, wanted)

    def _poll(self) -> None:
        while not self._stopping.wait(self.poll_s):
            with self._lock:
                polled = [t for t, s in self._scopes.items() if s.polled]
            for topic in polled:
                now = self._signature(topic)
                with self._lock:
                    scope = self._scopes.get(topic)
                    if scope is None or not scope.polled or scope.seen == now:
                        continue
                    seen, scope.seen = scope.seen, now
                for key in self._changed_keys(topic, seen, now):
                    self.notify(key)

    def _changed_keys(
        self, topic: Topic, seen: dict[str, tuple[int, int]], now: dict[str, tuple[int, int]]
    ) -> list[str]:
        """The keys a polled change wakes: a debate's in-flight files apart from its record.

        The debate folder's own mtime is left out of its record: it changes when
        `.in-flight/` is made, and any file that comes or goes is in the signature itself."""
        if topic is None:
            return [LIST]
        if eval_of(topic) is not None or topic == EVALS_LIST:
            return [topic]
        marker = f"{os.sep}{IN_FLIGHT_DIR}"
        own = {folder for folder, _ in scope_folders(self.root, topic)}

        def split(found: dict[str, tuple[int, int]]) -> tuple[dict[str, Any], dict[str, Any]]:
            record = {k: v for k, v in found.items() if marker not in k and k not in own}
            return record, {k: v for k, v in found.items() if marker in k}

        (old_record, old_calls), (new_record, new_calls) = split(seen), split(now)
        keys = [topic] if old_record != new_record else []
        return keys + ([in_flight_topic(topic)] if old_calls != new_calls else [])

    def _signature(self, topic: Topic) -> dict[str, tuple[int, int]]:
        """The mtime and size of every file and folder a polled topic covers."""
        seen: dict[str, tuple[int, int]] = {}
        if topic is None:
            # Not a scan of council/: its mtime says when a debate came or went.
            for path in (self.root.path, self.root.council, self.root.index):
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                seen[str(path)] = (info.st_mtime_ns, info.st_size)
            _stat_into(seen, str(self.root.knowledge), recursive=False)
        else:
            for folder, recursive in scope_folders(self.root, topic):
                _stat_into(seen, folder, recursive=recursive)
        return seen


class _StopRace(logging.Filter):
    """watchdog logs an error when a watch is ended while its thread reads; that is a race
    of its own shutdown, not a fault, and a page closing must not print it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "called when the thread is inactive" not in record.getMessage()


def _quiet_stop_race() -> None:
    logger = logging.getLogger("watchdog.observers.inotify")
    if not any(isinstance(f, _StopRace) for f in logger.filters):
        logger.addFilter(_StopRace())


def _drop(observer: BaseObserver, watch: ObservedWatch) -> None:
    with contextlib.suppress(KeyError, OSError):  # already gone with its folder
        observer.unschedule(watch)


def _stat_into(seen: dict[str, tuple[int, int]], folder: str, recursive: bool) -> None:
    try:
        info = os.stat(folder)
        entries = list(os.scandir(folder))
    except OSError:
        return
    seen[folder] = (info.st_mtime_ns, info.st_size)
    for entry in entries:
        if is_noise(entry.name):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if recursive:
                    _stat_into(seen, entry.path, True)
                continue
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        seen[entry.path] = (info.st_mtime_ns, info.st_size)
