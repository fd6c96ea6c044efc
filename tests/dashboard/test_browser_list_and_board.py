"""What the dashboard tells at a glance, in Debian's chromium at 1280 and 375 px: the list
gives each complete debate's decision and a running debate's plain running time, its eval
checkbox keeps a checkbox's size, and during a round a board row says what its persona's
call is doing and links to the cell where the text arrives."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from in_flight_writer import Writer

from dreamcontext_council import new_debate, start_round
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.run_record import RunRecord, process_start, run_record_path
from dreamcontext_council.rules.roster import PersonaSpec

from .conftest import REFERENCE_ID, Council, new_running_debate, served

pytestmark = pytest.mark.browser

WIDTHS = {"desktop": (1280, 900), "phone": (375, 812)}


@pytest.fixture(params=sorted(WIDTHS))
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    width, height = WIDTHS[request.param]
    context = browser.new_context(viewport={"width": width, "height": height})
    tab = context.new_page()
    tab.errors = []
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    try:
        yield tab
    finally:
        context.close()


def running_for_minutes(root: Root, minutes: int) -> str:
    """A debate in round 1 whose run (this test's own live process) started `minutes` ago."""
    specs = [PersonaSpec(slug, f"You are {slug}.") for slug in ("risk-auditor", "growth-cfo")]
    debate_id = new_debate(
        root,
        "Cache sessions in Redis?",
        rounds=2,
        options=[{"key": "A", "label": "Cache"}, {"key": "B", "label": "Do not"}],
        personas=specs,
    ).id
    start_round(root, debate_id, 1)
    started = (datetime.now(UTC) - timedelta(minutes=minutes, seconds=20)).isoformat()
    pid = os.getpid()
    record = RunRecord(
        pid, socket.gethostname(), started.replace("+00:00", "Z"), process_start(pid)
    )
    path = run_record_path(root.debate(debate_id).folder)
    path.write_text(json.dumps(record.to_json()), encoding="utf-8")
    return debate_id


def an_eval_made(root: Root, debate_id: str) -> None:
    """Mark `debate_id` as made by an eval, so the list offers its `eval debates` checkbox."""
    folder = root.evals / "eval-adopt-1a2b3c4d"
    folder.mkdir(parents=True)
    (folder / "debates.json").write_text(json.dumps({"q1": debate_id}), encoding="utf-8")


def row_of(page: Any, debate_id: str) -> Any:
    return page.locator("tr.debate-row", has=page.locator(f'a[href="/d/{debate_id}"]'))


def test_the_list_shows_decisions_and_plain_running_lines(reference_root: Root, sized: Any) -> None:
    page = sized
    root = reference_root
    running = running_for_minutes(root, 3)
    left_out = running_for_minutes(root, 1)
    an_eval_made(root, left_out)
    with served(root) as (url, _):
        page.clock.install()  # the page's own clock, moved on below
        page.goto(url + "/")
        complete = row_of(page, REFERENCE_ID)
        assert complete.locator(".list-verdict").inner_text() == "Migrate now (A) · medium"

        line = row_of(page, running).locator(".run-state").inner_text()
        assert line == "running for 3 min"
        assert "pid" not in page.inner_text("#live-root")
        page.clock.fast_forward("04:00")  # the page counts on without asking the server
        assert row_of(page, running).locator(".run-state").inner_text() == "running for 7 min"

        # The checkbox keeps a checkbox's size, its label beside it on one line.
        checkbox = page.locator("#evals-filter").bounding_box()
        label = page.locator(".evals-filter").bounding_box()
        assert checkbox is not None and label is not None
        assert checkbox["width"] <= 24 and checkbox["height"] <= 24, checkbox
        assert label["height"] <= 40 and label["width"] <= 200, label
        search = page.locator("#q").bounding_box()
        assert search is not None and search["width"] > 3 * checkbox["width"]
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]

        page.check("#evals-filter")  # the eval's debate is listed once asked for
        page.wait_for_selector(f'a[href="/d/{left_out}"]')
        assert page.errors == []


def test_a_board_row_links_to_the_call_in_progress(
    reference_root: Root, council: Callable[[Root], Council], sized: Any
) -> None:
    page = sized
    root = reference_root
    debate_id = new_running_debate(council(root), "Stream or not?", ("risk-auditor", "growth-cfo"))
    with served(root) as (url, _), Writer(root.path, debate_id, "risk-auditor") as writer:
        page.goto(f"{url}/d/{debate_id}")
        page.wait_for_selector('#live[data-state="on"]')
        link = page.locator("#board-risk-auditor a.board-live")
        link.wait_for(timeout=15000)
        assert link.inner_text() == "thinking"  # the call has begun, no text yet

        writer.send("add", "Postgres handles our write rate")
        page.wait_for_function(
            "() => document.querySelector('#board-risk-auditor a.board-live')"
            ".textContent === 'streaming · 31 chars'",
            timeout=15000,
        )
        assert link.get_attribute("href") == "#cell-risk-auditor-1"
        assert "no verdict yet" in page.inner_text("#board-growth-cfo")  # no call of its own

        writer.send("add", " with room to spare.")
        page.wait_for_function(
            "() => document.querySelector('#board-risk-auditor a.board-live')"
            ".textContent === 'streaming · 51 chars'",
            timeout=15000,
        )
        link.click()
        page.wait_for_function("() => location.hash === '#cell-risk-auditor-1'")
        # The page scrolls smoothly to the cell: it ends on the screen.
        page.wait_for_function(
            """() => { const box = document.querySelector('#cell-risk-auditor-1')
                                    .getBoundingClientRect();
                       return box.top >= 0 && box.top < window.innerHeight; }""",
            timeout=10000,
        )
        assert "room to spare" in page.inner_text("#cell-risk-auditor-1")

        writer.send("end")  # the call is over: the row says so again
        page.wait_for_function(
            "() => !document.querySelector('#board-risk-auditor a.board-live')", timeout=15000
        )
        assert page.inner_text("#board-risk-auditor").strip().endswith("no verdict yet")
        assert page.errors == []
