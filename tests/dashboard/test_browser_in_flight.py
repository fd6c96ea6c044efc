"""A round in progress in Debian's chromium: the text of a call a separate process is making
shows in its persona's cell as it grows, then gives way to the entry when it lands."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from in_flight_writer import Writer

from dreamcontext_council.folder.in_flight import in_flight_dir
from dreamcontext_council.folder.paths import Root

from .conftest import Council, entry, new_running_debate, served

pytestmark = pytest.mark.browser

MARKUP = "<img src=x onerror=window.__xss=1> **not bold**"


def cell_text(slug: str) -> str:
    return f"() => document.querySelector('#cell-{slug}-1').textContent"


def test_a_call_in_progress_streams_into_its_cell_until_the_entry_lands(
    reference_root: Root, council: Callable[[Root], Council], page: Any
) -> None:
    root = reference_root
    run = council(root)
    debate_id = new_running_debate(run, "Stream or not?", ("risk-auditor", "growth-cfo"))
    folder = root.debate(debate_id).folder
    with served(root) as (url, _), Writer(root.path, debate_id, "risk-auditor") as writer:
        page.goto(f"{url}/d/{debate_id}")
        page.wait_for_selector('#live[data-state="on"]')
        page.evaluate("window.__sameDocument = true")
        writer.send("add", "Postgres handles our write rate")
        page.wait_for_function(
            f"() => ({cell_text('risk-auditor')})().includes('Postgres handles our write rate')",
            timeout=15000,
        )
        report = folder / "risk-auditor" / "report.md"
        assert not report.exists() or "Round 1" not in report.read_text("utf-8")
        head = page.locator("#cell-risk-auditor-1 .in-flight-head").inner_text()
        assert "31 chars" in head and head.endswith(" s")
        assert page.locator("#cell-growth-cfo-1 .in-flight").count() == 0

        # More text, and model output that looks like markup stays text.
        writer.send("add", " with room to spare. " + MARKUP)
        page.wait_for_function(
            f"() => ({cell_text('risk-auditor')})().includes('room to spare')", timeout=15000
        )
        shown = page.locator("#cell-risk-auditor-1 .in-flight-text")
        assert "<img src=x" in shown.inner_text()
        assert shown.locator("img, strong").count() == 0
        assert page.evaluate("window.__xss") is None

        # The entry lands through the function `report append` calls; the call ends.
        writer.send("append", entry("Postgres wins on cost."))
        page.wait_for_function(
            f"() => ({cell_text('risk-auditor')})().includes('Postgres wins on cost')",
            timeout=15000,
        )
        page.wait_for_function(
            "() => !document.querySelector('#cell-risk-auditor-1 .in-flight')", timeout=15000
        )
        assert "room to spare" not in page.locator("#cell-risk-auditor-1").inner_text()
        assert list(in_flight_dir(folder).glob("*.json")) == []
        assert page.evaluate("window.__sameDocument") is True  # updated, not reloaded
        assert page.errors == []


def test_a_seat_waiting_for_its_person_says_so_and_a_page_opened_late_sees_it(
    reference_root: Root, council: Callable[[Root], Council], page: Any
) -> None:
    root = reference_root
    run = council(root)
    debate_id = new_running_debate(run, "Wait or not?", ("alice", "growth-cfo"))
    with served(root) as (url, _), Writer(root.path, debate_id, "alice") as writer:
        writer.send("wait")
        page.goto(f"{url}/d/{debate_id}")  # opened after the file was written
        page.wait_for_function(
            f"() => ({cell_text('alice')})().includes('waiting for alice')", timeout=15000
        )
        # Nothing is sent while the seat waits; the page counts the seconds up itself.
        head = page.locator("#cell-alice-1 .in-flight-head")
        first = head.inner_text()
        assert re.fullmatch(r"waiting for alice · \d+ s", first), first
        page.wait_for_function(
            "(first) => document.querySelector('#cell-alice-1 .in-flight-head').textContent"
            " !== first",
            arg=first,
            timeout=15000,
        )
        writer.send("end")
        page.wait_for_function(
            f"() => !({cell_text('alice')})().includes('waiting for alice')", timeout=15000
        )
        assert page.errors == []


def test_the_synthesis_streams_above_the_report_and_other_calls_above_the_matrix(
    reference_root: Root, council: Callable[[Root], Council], page: Any
) -> None:
    root = reference_root
    run = council(root)
    debate_id = new_running_debate(run, "Synthesize or not?", ("risk-auditor", "growth-cfo"))
    with (
        served(root) as (url, _),
        Writer(root.path, debate_id, "(synthesis)") as synthesis,
        Writer(root.path, debate_id, "(orchestrator)") as orchestrator,
        Writer(root.path, debate_id, "carol") as stranger,  # a persona with no cell here
    ):
        page.goto(f"{url}/d/{debate_id}")
        page.wait_for_selector('#live[data-state="on"]')
        synthesis.send("add", "## Verdict\nMigrate, in two steps.")
        orchestrator.send("add", "Checking convergence")
        page.wait_for_function(
            "() => (document.querySelector('#in-flight-synthesis') || {}).textContent"
            "?.includes('Migrate, in two steps.')",
            timeout=15000,
        )
        box = page.locator("#in-flight-synthesis")
        assert box.evaluate("el => el.nextElementSibling.id") == "report"
        assert "Synthesis in progress" in box.inner_text()
        page.wait_for_function(
            "() => (document.querySelector('#in-flight-calls') || {}).textContent"
            "?.includes('Checking convergence')",
            timeout=15000,
        )
        calls = page.locator("#in-flight-calls")
        assert calls.evaluate("el => el.nextElementSibling.id") == "matrix"
        assert "(orchestrator) · streaming · 20 chars" in calls.inner_text()
        stranger.send("add", "No cell for me")
        page.wait_for_function(
            "() => document.querySelector('#in-flight-calls').textContent.includes('No cell')",
            timeout=15000,
        )
        assert "carol · streaming · 14 chars" in calls.inner_text()
        assert page.locator("td.cell .in-flight").count() == 0
        synthesis.send("end")
        orchestrator.send("end")
        stranger.send("end")
        page.wait_for_function(
            "() => !document.querySelector('#in-flight-synthesis, #in-flight-calls')",
            timeout=15000,
        )
        assert page.errors == []
