"""Live updates: watchdog events become debounced server-sent events per debate."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx
import pytest
from watchdog.events import (
    DirModifiedEvent,
    FileClosedNoWriteEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileOpenedEvent,
)

from dreamcontext_council.dashboard.changes import LIST, change_key, paths_of
from dreamcontext_council.dashboard.events import ChangeFeed
from dreamcontext_council.dashboard.watches import Watches
from dreamcontext_council.folder.paths import Root

from .conftest import REFERENCE_ID, served

ROOT = Path("/x/_dream_context")


@pytest.mark.parametrize(
    ("path", "key"),
    [
        (f"/x/_dream_context/council/{REFERENCE_ID}/verdicts.json", REFERENCE_ID),
        (f"/x/_dream_context/council/{REFERENCE_ID}/growth-cfo/report.md", REFERENCE_ID),
        (f"/x/_dream_context/council/{REFERENCE_ID}", REFERENCE_ID),
        ("/x/_dream_context/council/index.json", LIST),
        ("/x/_dream_context/knowledge/decision-x.md", LIST),
        ("/x/_dream_context/tmp/.council-live.json", None),
        (f"/x/_dream_context/council/{REFERENCE_ID}/.council.lock", None),
        (f"/x/_dream_context/council/{REFERENCE_ID}/.verdicts.json.abc123.tmp", None),
        ("/elsewhere/file.md", None),
    ],
)
def test_a_changed_path_names_its_debate(path: str, key: str | None) -> None:
    assert change_key(ROOT, path) == key


def test_only_writes_count_not_reads() -> None:
    path = f"/x/_dream_context/council/{REFERENCE_ID}/debate.md"
    assert paths_of(FileModifiedEvent(path)) == [path]
    assert paths_of(FileOpenedEvent(path)) == []
    assert paths_of(FileClosedNoWriteEvent(path)) == []
    assert paths_of(DirModifiedEvent(str(Path(path).parent))) == []
    moved = paths_of(FileMovedEvent(path + ".tmp", path))
    assert moved == [path + ".tmp", path]


def run_story(story: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """asyncio.run in its own thread: playwright's sync API may hold this thread's loop."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(story())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the story did not finish"
    if failure:
        raise failure[0]


async def _collect(
    queue: asyncio.Queue[list[str] | None], seconds: float
) -> list[list[str] | None]:
    got: list[list[str] | None] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            got.append(await asyncio.wait_for(queue.get(), timeout=left))
        except TimeoutError:
            break
    return got


def test_a_burst_of_writes_is_one_update_for_that_debate_and_the_list(reference_root: Root) -> None:
    folder = reference_root.debate(REFERENCE_ID).folder

    async def story() -> None:
        feed = ChangeFeed(reference_root, debounce=0.1)
        feed.start(asyncio.get_running_loop())
        try:
            with (
                feed.subscribe(REFERENCE_ID) as mine,
                feed.subscribe("council_Other123") as other,
                feed.subscribe(None) as listing,
            ):
                await asyncio.sleep(0.2)
                started = time.monotonic()
                for i in range(30):
                    (folder / "round-log.md").write_text(f"# Round log\n\n{i}\n")
                first = await asyncio.wait_for(mine.get(), timeout=2)
                assert first == [REFERENCE_ID]
                assert time.monotonic() - started < 1.0
                assert len(await _collect(mine, 0.4)) <= 1
                assert await _collect(other, 0.1) == []
                assert (await _collect(listing, 0.1))[:1] == [[REFERENCE_ID]]
                # The live telemetry file is not part of the record.
                reference_root.live_file.write_text("{}")
                assert await _collect(mine, 0.4) == []
        finally:
            feed.stop()

    run_story(story)


def test_streams_end_when_the_feed_stops(reference_root: Root) -> None:
    async def story() -> None:
        feed = ChangeFeed(reference_root)
        feed.start(asyncio.get_running_loop())
        stream = feed.stream(REFERENCE_ID)
        assert (await anext(stream)).startswith("retry:")
        assert feed.subscriber_count == 1
        feed.stop()
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
        assert feed.subscriber_count == 0

    run_story(story)


def test_server_sent_events_over_a_real_server(reference_root: Root) -> None:
    folder = reference_root.debate(REFERENCE_ID).folder
    with served(reference_root) as (url, server):
        feed = server.config.app.state.feed
        with httpx.Client(timeout=5) as client:
            with client.stream("GET", f"{url}/events/{REFERENCE_ID}") as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                lines = response.iter_lines()
                assert next(lines).startswith("retry:")
                (folder / "verdicts.json").write_text((folder / "verdicts.json").read_text())
                started = time.monotonic()
                for line in lines:
                    if line.startswith("event:"):
                        assert line == "event: change"
                        assert next(lines) == f'data: ["{REFERENCE_ID}"]'
                        break
                assert time.monotonic() - started < 1.0
            # A client that goes away is unsubscribed.
            deadline = time.monotonic() + 5
            while feed.subscriber_count and time.monotonic() < deadline:
                time.sleep(0.05)
            assert feed.subscriber_count == 0


def test_shutdown_does_not_wait_for_open_streams(reference_root: Root) -> None:
    ended = threading.Event()

    def listen(url: str) -> None:
        with httpx.Client(timeout=10) as client, client.stream("GET", f"{url}/events") as response:
            for _ in response.iter_lines():
                pass
        ended.set()

    with served(reference_root) as (url, server):
        thread = threading.Thread(target=listen, args=(url,), daemon=True)
        thread.start()
        deadline = time.monotonic() + 5
        while not server.config.app.state.feed.subscriber_count:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 3
    assert ended.wait(3), "the open event stream was not ended by the shutdown"


def test_the_observer_keeps_watchdogs_rewatch_warning_off_the_terminal(tmp_path: Path) -> None:
    """inotify warns when it re-adds the watches of a folder moved into the tree, as every
    new debate is (built under a hidden name, then renamed); `serve` and `watch` say nothing."""
    rewatch = (
        "Callback with id '140570737281296' already exists for watch "
        "<bound method Watch.short_str of Watch(wd=7, mask=33556478)>. It will be Overwritten."
    )
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        watches = Watches(Root(tmp_path), lambda key: None)
        watches.start()
        try:
            warnings.warn(rewatch, RuntimeWarning, stacklevel=1)
            warnings.warn("Something else went wrong", RuntimeWarning, stacklevel=1)
        finally:
            watches.stop()

    assert [str(w.message) for w in seen] == ["Something else went wrong"]
