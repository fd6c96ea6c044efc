"""The text of calls in progress over server-sent events: gathered into a few messages a
second however fast the file changes, apart from the page's own updates, and nothing at
all while nothing changes."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from in_flight_writer import Writer

from dreamcontext_council.dashboard.changes import change_key, in_flight_topic, wakes
from dreamcontext_council.dashboard.events import ChangeFeed
from dreamcontext_council.folder.in_flight import InFlight
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.views.in_flight import page_calls, progress_line

from .conftest import Council, new_running_debate, served
from .test_events import _collect, run_story
from .test_watches import refuse_watches

ROOT = Path("/x/_dream_context")
ID = "council_AbC12345"


def test_in_flight_files_have_their_own_key_that_only_their_debate_hears() -> None:
    folder = f"/x/_dream_context/council/{ID}/.in-flight"
    assert change_key(ROOT, f"{folder}/123-1.json") == in_flight_topic(ID)
    assert change_key(ROOT, folder) == in_flight_topic(ID)
    assert change_key(ROOT, f"{folder}/.123-1.json.123-abcdef.tmp") is None
    assert change_key(ROOT, f"/x/_dream_context/council/{ID}/alice/report.md") == ID
    assert wakes(ID, [in_flight_topic(ID)])
    assert not wakes("council_Other123", [in_flight_topic(ID)])
    assert not wakes(None, [in_flight_topic(ID)])  # the list has nothing to show of it
    assert wakes(None, [in_flight_topic(ID), ID])


def call(persona: str, state: str = "streaming", chars: int = 0, text: str = "") -> InFlight:
    return InFlight(persona, "round", 1, state, chars, text, 0.0, 3.0)


def test_the_page_gets_each_calls_place_and_the_end_of_its_text_without_controls() -> None:
    calls = [
        call("contrarian", chars=9000, text="a" * 8990 + "\x1b[2J\u202eend"),
        call("(synthesis)", chars=4, text="Verd"),
        call("(orchestrator)"),
    ]
    found = page_calls(calls, shown=100)
    assert [c["place"] for c in found] == ["cell-contrarian-1", "synthesis", "calls"]
    assert found[0]["text"].endswith("a[2Jend") and len(found[0]["text"]) == 100
    assert found[0]["cut"] is True and found[1]["cut"] is False
    assert found[0]["chars"] == 9000 and found[0]["elapsed_s"] == 3.0


def test_the_progress_line_counts_characters_per_call_and_names_who_is_waited_for() -> None:
    line = progress_line(
        [
            call("contrarian", chars=1234),
            call("pragmatist", chars=880),
            call("alice", state="waiting"),
            call("skeptic", state="retrying", chars=0),
        ]
    )
    assert line == (
        "round 1: contrarian 1,234 chars, pragmatist 880 chars, skeptic 0 chars (retrying); "
        "waiting for alice"
    )
    assert progress_line([]) == ""


@contextmanager
def listening(url: str) -> Iterator[queue.Queue[str]]:
    """The lines of a debate's event stream, as they come, read on another thread."""
    lines: queue.Queue[str] = queue.Queue()
    stop = threading.Event()

    def read() -> None:
        with httpx.Client(timeout=30) as client, client.stream("GET", url) as response:
            for line in response.iter_lines():
                lines.put(line)
                if stop.is_set():
                    return

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        assert lines.get(timeout=10).startswith("retry:")
        yield lines
    finally:
        stop.set()


def messages(lines: queue.Queue[str], seconds: float) -> list[tuple[str, Any]]:
    """The events (name, data) that arrive within `seconds`; comments and blanks skipped."""
    found: list[tuple[str, Any]] = []
    name = ""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            found.append((name, json.loads(line.removeprefix("data: "))))
    return found


def counted_marks(feed: ChangeFeed) -> list[str]:
    """Every change the watches hand to the event loop, kept in a list from now on."""
    marks: list[str] = []
    mark = feed._mark

    def counting(key: str) -> None:
        marks.append(key)
        mark(key)

    feed._mark = counting  # type: ignore[method-assign]
    return marks


def test_an_idle_dashboard_sends_nothing_and_hears_nothing(
    reference_root: Root, council: Callable[[Root], Council]
) -> None:
    root = reference_root
    debate_id = new_running_debate(council(root), "Idle or not?", ("alice", "bob"))
    with served(root) as (url, server), Writer(root.path, debate_id, "alice") as writer:
        writer.send("add", "Half an answer")
        feed = server.config.app.state.feed
        with listening(f"{url}/events/{debate_id}") as lines:
            # A page opened mid-call gets the calls at once.
            first = messages(lines, 2)
            assert [name for name, _ in first] == ["in-flight"]
            assert first[0][1]["calls"][0]["text"] == "Half an answer"
            marks = counted_marks(feed)
            # Reading the debate, as every page view does, wakes nothing.
            with httpx.Client(timeout=10) as client:
                for path in (f"/d/{debate_id}", f"/d/{debate_id}/fragment", "/"):
                    assert client.get(url + path).status_code == 200
            # A live call that sends nothing new, and a page that only listens: no event,
            # no watch callback, no timer waiting to fire.
            assert messages(lines, 1.5) == []
            assert marks == []
            assert feed._timer is None and feed._calls_timer is None


def test_fast_changes_of_a_call_reach_the_page_as_a_few_messages(
    reference_root: Root, council: Callable[[Root], Council]
) -> None:
    root = reference_root
    debate_id = new_running_debate(council(root), "Fast or not?", ("alice", "bob"))
    writes = 300
    total = sum(len(f"piece {i}. ") for i in range(writes))
    with (
        served(root) as (url, server),
        Writer(root.path, debate_id, "alice") as writer,
        listening(f"{url}/events/{debate_id}") as lines,
    ):
        assert [name for name, _ in messages(lines, 1)] == ["in-flight"]  # the start
        marks = counted_marks(server.config.app.state.feed)
        writer.send("burst", writes)  # every piece written to the file at once
        got: list[tuple[str, Any]] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            got += messages(lines, 0.5)
            calls = [data["calls"] for name, data in got if name == "in-flight"]
            if calls and calls[-1] and calls[-1][0]["chars"] == total:
                break
        calls = [data["calls"] for name, data in got if name == "in-flight"]
        assert calls and calls[-1][0]["chars"] == total, got[-1:]
        assert len(marks) >= writes // 2  # the watches saw the writes…
        assert len(calls) <= writes // 10  # …and the page heard of them a few times
        # The text of a call is not a change of the record: the page re-fetches nothing.
        assert [name for name, _ in got if name != "in-flight"] == []
        writer.send("end")
        ended = messages(lines, 3)
        assert ended and ended[-1] == ("in-flight", {"calls": []})


def test_past_the_watch_limit_the_poll_tells_the_calls_apart_from_the_record(
    reference_root: Root, council: Callable[[Root], Council], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = reference_root
    debate_id = new_running_debate(council(root), "Polled or not?", ("alice", "bob"))
    refuse_watches(monkeypatch)

    async def story() -> None:
        feed = ChangeFeed(root, debounce=0.05, in_flight_every=0.05)
        feed.start(asyncio.get_running_loop())
        try:
            with feed.subscribe(debate_id) as mine:
                await asyncio.sleep(0.8)  # the first poll has seen the debate as it was
                with Writer(root.path, debate_id, "alice") as writer:
                    writer.send("add", "Some text")
                    keys = await asyncio.wait_for(mine.get(), timeout=5)
                    assert keys == [in_flight_topic(debate_id)]  # not the debate's record
                    more = await _collect(mine, 1.2)  # the start and the text, if apart
                    assert all(keys == [in_flight_topic(debate_id)] for keys in more)
                    assert await _collect(mine, 1.2) == []  # nothing changed since
        finally:
            feed.stop()

    run_story(story)


def test_a_debate_folder_that_links_out_of_the_root_has_no_calls_shown(
    reference_root: Root, council: Callable[[Root], Council], tmp_path: Path
) -> None:
    elsewhere = Root(tmp_path / "elsewhere" / "_dream_context")
    elsewhere.path.mkdir(parents=True)
    debate_id = new_running_debate(council(elsewhere), "Linked or not?", ("alice", "bob"))
    (reference_root.council / debate_id).symlink_to(elsewhere.debate(debate_id).folder)
    with (
        served(reference_root) as (url, _),
        Writer(elsewhere.path, debate_id, "alice") as writer,
        listening(f"{url}/events/{debate_id}") as lines,
    ):
        writer.send("add", "Outside the root")
        assert messages(lines, 1.5) == []
