"""Watching that scales: only what pages have open is watched, and past the kernel's watch
limit the open debates are polled instead (said once in the log)."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from watchdog.observers import Observer

from dreamcontext_council.dashboard.events import ChangeFeed
from dreamcontext_council.dashboard.watch import watch_board
from dreamcontext_council.folder.paths import Root

from .conftest import REFERENCE_ID
from .test_events import _collect, run_story

COPIES = 400  # about 2,400 folders: many more than any page needs watched


def inotify_watches() -> int:
    """How many inotify watches this process holds, over all its inotify instances."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                count += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue  # closed meanwhile (the listing's own fd, a stopping emitter)
    return count


def wait_for(found: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not found():
        assert time.monotonic() < deadline, "not seen in time"
        time.sleep(0.02)


@pytest.fixture
def big_root(reference_root: Root) -> Root:
    """The reference debate and COPIES copies of it under other ids."""
    source = reference_root.debate(REFERENCE_ID).folder
    for i in range(COPIES):
        shutil.copytree(source, reference_root.council / f"council_big{i:05d}")
    return reference_root


def folders_under(path: Path) -> int:
    return sum(1 for _ in os.walk(path))


def test_a_big_root_watches_only_the_index_and_the_open_debate(big_root: Root) -> None:
    debate = big_root.debate(REFERENCE_ID).folder
    elsewhere = big_root.debate("council_big00007").folder
    before = inotify_watches()
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep(logging.WARNING)
    logging.getLogger().addHandler(keep)

    async def story() -> None:
        feed = ChangeFeed(big_root, debounce=0.05)
        feed.start(asyncio.get_running_loop())
        try:
            with feed.subscribe(None) as listing, feed.subscribe(REFERENCE_ID) as mine:
                held = inotify_watches() - before
                # The root, council/, knowledge/ and the open debate's folders: not the tree.
                assert 0 < held <= 3 + folders_under(debate)
                assert folders_under(big_root.path) > 10 * held
                await asyncio.sleep(0.2)
                # Writes all over debates no page has open wake neither page.
                for i in range(0, COPIES, 4):
                    report = big_root.debate(f"council_big{i:05d}").folder / "verdicts.json"
                    report.write_text(report.read_text())
                assert await _collect(mine, 0.3) == []
                assert await _collect(listing, 0.1) == []
                # A hand edit of the open debate reaches its page, and the list.
                report = next(debate.glob("*/report.md"))
                with report.open("a", encoding="utf-8") as out:
                    out.write("\nEdited by hand.\n")
                assert await asyncio.wait_for(mine.get(), timeout=5) == [REFERENCE_ID]
                assert await asyncio.wait_for(listing.get(), timeout=5) == [REFERENCE_ID]
                # A command that rewrites the index reaches the list.
                big_root.index.write_text(big_root.index.read_text())
                assert "" in (await asyncio.wait_for(listing.get(), timeout=5) or [])
            # The last page gone, its watches go too.
            await asyncio.to_thread(wait_for, lambda: inotify_watches() == before)
        finally:
            feed.stop()

    try:
        run_story(story)
    finally:
        logging.getLogger().removeHandler(keep)
    assert elsewhere.is_dir()
    assert not [r for r in records if "overflow" in r.getMessage().lower()]


@contextmanager
def board_watched(root: Root) -> Iterator[list[str]]:
    """`council watch` on the reference debate in a thread; yields the boards it drew, and
    checks on the way out that it stopped."""
    out: list[str] = []
    done = threading.Event()
    with open(os.devnull, "w") as sink:
        thread = threading.Thread(
            target=watch_board,
            args=(root, REFERENCE_ID, Console(file=sink, force_terminal=False)),
            kwargs={"stop": done, "write": out.append},
        )
        thread.start()
        try:
            yield out
        finally:
            done.set()
            thread.join(timeout=10)
    assert not thread.is_alive()


def change_a_headline_and_wait_for_the_board(root: Root, out: list[str]) -> None:
    verdicts = root.debate(REFERENCE_ID).verdicts
    verdicts.write_text(
        verdicts.read_text().replace("user-advocate says B in R2", "Changed my mind")
    )
    wait_for(lambda: any("Changed my mind" in text for text in out))


def test_watch_in_a_terminal_watches_only_its_debate(big_root: Root) -> None:
    before = inotify_watches()
    with board_watched(big_root) as out:
        wait_for(lambda: out and inotify_watches() > before)
        assert inotify_watches() - before <= folders_under(big_root.debate(REFERENCE_ID).folder)
        change_a_headline_and_wait_for_the_board(big_root, out)


def refuse_watches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's inotify watch limit is reached: every schedule fails with ENOSPC."""

    def schedule(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(Observer, "schedule", schedule)


def test_past_the_watch_limit_open_debates_are_polled_and_the_log_says_so_once(
    reference_root: Root, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    refuse_watches(monkeypatch)
    caplog.set_level(logging.WARNING)
    debate = reference_root.debate(REFERENCE_ID).folder

    async def story() -> None:
        feed = ChangeFeed(reference_root, debounce=0.05)
        feed.start(asyncio.get_running_loop())
        try:
            with feed.subscribe(None) as listing, feed.subscribe(REFERENCE_ID) as mine:
                await asyncio.sleep(0.1)
                report = next(debate.glob("*/report.md"))
                with report.open("a", encoding="utf-8") as out:
                    out.write("\nEdited by hand.\n")
                assert await asyncio.wait_for(mine.get(), timeout=5) == [REFERENCE_ID]
                assert await asyncio.wait_for(listing.get(), timeout=5) == [REFERENCE_ID]
                reference_root.index.write_text(reference_root.index.read_text() + "\n")
                keys = await asyncio.wait_for(listing.get(), timeout=5)
                assert keys is not None and "" in keys
                # Nothing changed: the poll says nothing.
                assert await _collect(mine, 1.2) == []
        finally:
            feed.stop()

    run_story(story)
    said = [r.getMessage() for r in caplog.records if "inotify limit" in r.getMessage()]
    assert len(said) == 1, said
    assert "poll the open debates" in said[0]


def test_watch_in_a_terminal_polls_past_the_watch_limit(
    reference_root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    refuse_watches(monkeypatch)
    with board_watched(reference_root) as out:
        wait_for(lambda: bool(out))
        time.sleep(0.2)  # the first poll has seen the debate as it was
        change_a_headline_and_wait_for_the_board(reference_root, out)


def test_a_list_open_before_council_exists_sees_the_first_debate(tmp_path: Path) -> None:
    root = Root(tmp_path / "_dream_context")
    root.path.mkdir()
    before = inotify_watches()

    async def story() -> None:
        feed = ChangeFeed(root, debounce=0.05)
        feed.start(asyncio.get_running_loop())
        try:
            with feed.subscribe(None) as listing:
                root.council.mkdir()
                assert await asyncio.wait_for(listing.get(), timeout=5) == [""]
                # council/ is watched from now on: the first index.json reaches the list.
                await asyncio.to_thread(wait_for, lambda: inotify_watches() >= before + 2)
                root.index.write_text("[]")
                assert await asyncio.wait_for(listing.get(), timeout=5) == [""]
        finally:
            feed.stop()

    run_story(story)
