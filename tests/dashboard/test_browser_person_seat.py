"""A seat a person answers, in Debian's chromium at 1280 and 375 px: its card and its board
row carry a `person` chip (no model), and while the run waits on it the status badge and
the list say `waiting for alice`, each inside its card."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dreamcontext_council import new_debate, record_verdict, start_round
from dreamcontext_council.folder.in_flight import WAITING, InFlightCall
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.run_record import begin_run
from dreamcontext_council.rules.roster import PersonaSpec

from .conftest import served
from .test_browser_layout import SPILLS, WIDTHS, box, one_line

pytestmark = pytest.mark.browser

LONG_SLUG = "the-product-owner-who-decides"


@pytest.fixture(params=sorted(WIDTHS))
def tab(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    width, height = WIDTHS[request.param]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    try:
        yield request.param, page
    finally:
        context.close()


@pytest.fixture
def waiting(tmp_path: Path) -> Iterator[tuple[Root, str]]:
    """A debate whose live run (this process) waits on two people in round 1; bob answered."""
    root = Root(tmp_path / "_dream_context")
    specs = [
        PersonaSpec("alice", "You are alice, who owns the decision.", "human"),
        PersonaSpec(LONG_SLUG, "You decide.", "human", ["cost"]),
        PersonaSpec("bob", "You are bob.", "sonnet", ["risk"]),
    ]
    debate_id = new_debate(
        root,
        "Migrate the session store?",
        rounds=3,
        options=[{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay on Redis"}],
        personas=specs,
    ).id
    start_round(root, debate_id, 1)
    record_verdict(root, debate_id, "bob", 1, stance="A", conviction=70, headline="Go")
    folder = root.debate(debate_id).folder
    begin_run(folder, within=root.path)
    calls = [
        InFlightCall(
            folder, within=root.path, persona=slug, phase="opening", round=1, state=WAITING
        )
        for slug in ("alice", LONG_SLUG)
    ]
    for call in calls:
        call.start()
    try:
        yield root, debate_id
    finally:
        for call in calls:
            call.end()


def test_a_person_seat_shows_a_person_chip_and_the_wait(
    waiting: tuple[Root, str], tab: tuple[str, Any], tmp_path: Path
) -> None:
    root, debate_id = waiting
    name, page = tab
    expected = f"waiting for alice, {LONG_SLUG}"
    with served(root) as (url, _):
        page.goto(f"{url}/d/{debate_id}")
        page.screenshot(path=str(tmp_path / f"person-{name}.png"), full_page=True)
        assert page.inner_text("#status") == expected
        badge, card = box(page, "#status"), box(page, "#status-card")
        assert card["x"] <= badge["x"]
        assert badge["x"] + badge["width"] <= card["x"] + card["width"] + 0.5
        for slug in ("alice", LONG_SLUG):
            chip = f"#persona-{slug} .persona-head .tag.person"
            assert page.inner_text(chip) == "person"
            assert one_line(page, chip)
            inner, outer = box(page, chip), box(page, f"#persona-{slug}")
            assert outer["x"] <= inner["x"]
            assert inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
            assert page.locator(f"#persona-{slug} .tag.model").count() == 0
            assert page.inner_text(f"#board-{slug} .tag.person") == "person"
        assert page.inner_text("#persona-bob .tag.model") == "sonnet"
        assert page.locator("#persona-bob .tag.person").count() == 0
        assert "1 provider · 1 model family (claude); 2 people" in page.inner_text("#models")
        spills = SPILLS.replace("#outcome *, #board *", "#board *, .persona *")
        assert page.evaluate(spills) == []

        page.goto(url + "/")
        page.screenshot(path=str(tmp_path / f"person-list-{name}.png"), full_page=True)
        row = page.locator(".debate-row .badge")
        assert row.inner_text() == expected
        assert "tone-waiting" in (row.get_attribute("class") or "")
        list_spills = SPILLS.replace("#top *, #outcome *, #board *, #claims *", ".debates *")
        assert page.evaluate(list_spills) == []
        assert json.dumps(page.errors) == "[]"


def test_the_wait_shows_and_goes_live(tmp_path: Path, browser: Any) -> None:
    """An open debate page follows the wait: its badge says `waiting for alice` when the
    run starts waiting and the round's status again when the wait ends, with no reload.
    (The list follows its index only: it shows the wait when it is loaded or updated.)"""
    root = Root(tmp_path / "_dream_context")
    specs = [
        PersonaSpec("alice", "You are alice.", "human"),
        PersonaSpec("bob", "You are bob.", "sonnet"),
    ]
    debate_id = new_debate(root, "Migrate the session store?", rounds=2, personas=specs).id
    start_round(root, debate_id, 1)
    folder = root.debate(debate_id).folder
    begin_run(folder, within=root.path)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    call = InFlightCall(
        folder, within=root.path, persona="alice", phase="opening", round=1, state=WAITING
    )
    badge = "text => document.querySelector('#status').textContent.trim() === text"
    try:
        with served(root) as (url, _):
            page.goto(f"{url}/d/{debate_id}")
            page.wait_for_selector('#live[data-state="on"]')
            page.evaluate("window.__sameDocument = true")
            assert page.inner_text("#status") == "round_1_running"

            call.start()
            page.wait_for_function(badge, arg="waiting for alice", timeout=15000)
            assert "tone-waiting" in (page.get_attribute("#status", "class") or "")

            call.end()
            page.wait_for_function(badge, arg="round_1_running", timeout=15000)
            assert page.evaluate("window.__sameDocument") is True  # updated, not reloaded
    finally:
        call.end()
        context.close()
