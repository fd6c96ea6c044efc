"""The council in the browser, in Debian's chromium: a question asked from the list page
runs to its verdict on the debate page; a person takes a seat and answers all three rounds
from the page (one entry first refused for a missing section, its words kept), and is
cross-examined and scored like any persona. The runs are real `council run` processes on
the scripted provider."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from offline import clean_environment

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.dashboard.write_path import WriteAccess
from dreamcontext_council.folder.paths import Root

from .conftest import end_runs, served

pytestmark = pytest.mark.browser

TOPIC = "Should we migrate the session store to Postgres?"
RUN_MS = 60_000  # a whole run, in another process, on a machine shared with other tests
COMPLETE = "() => document.getElementById('status')?.textContent.trim() === 'complete'"


@pytest.fixture
def writable(tmp_path: Path) -> Iterator[tuple[Root, str, str]]:
    """The dashboard with its write path on over an empty project: (root, url, address)."""
    home = tmp_path / "home"
    home.mkdir()
    root = Root(tmp_path / "project" / "_dream_context")
    root.path.mkdir(parents=True)
    access = WriteAccess(env=clean_environment(os.environ, home))
    try:
        with served(root, access) as (url, _server):
            yield root, url, access.address(url + "/")
    finally:
        end_runs(root)


def ask(page: Any, address: str, **fields: str) -> str:
    """Open the printed address, fill the ask form, start; the debate's id."""
    page.goto(address)
    for name, value in fields.items():
        page.fill(f"#ask-form [name={name}]", value)
    page.click("#ask-submit")
    page.wait_for_url("**/d/council_*", timeout=RUN_MS)
    return str(page.url).rsplit("/d/", 1)[1].split("#", 1)[0]


def test_a_question_asked_from_the_page_reads_its_verdict_there(
    writable: tuple[Root, str, str], page: Any
) -> None:
    root, _url, address = writable
    debate_id = ask(
        page, address, topic=TOPIC, options="A=Migrate now\nB=Stay on Redis", rounds="2"
    )
    page.wait_for_function(COMPLETE, timeout=RUN_MS)
    verdict = page.locator("#outcome .verdict").inner_text()
    statement = DebateFiles(root, debate_id).debate()
    assert statement.status.phase == "complete"
    assert "Migrate now" in verdict or "Stay on Redis" in verdict
    assert page.errors == []


ANSWER = {
    "conviction": "70",
    "headline": "Migrate, with a rollback plan",
    "executive_summary": "Migrate now; keep Redis warm for a week as the way back.",
    "position": "Option A, with a rollback plan.",
    "reasoning": "Two persistence incidents this year cost more than the migration.",
    "reactions_to_peers": "None of the peers has priced the incidents yet.",
    "open_questions": "How long does the backfill take?",
}


def fill_seat(page: Any, number: int, *, skip: str | None = None) -> None:
    page.select_option("#alice-stance", "A")
    for name, value in ANSWER.items():
        if name != skip:
            page.fill(f"#alice-{name}", f"{value} (round {number})")
    if page.locator("#alice-cross_examination").count():
        page.fill(
            "#alice-cross_examination",
            "> The migration is too risky.\nThe rollback plan answers it.",
        )
        page.fill("#alice-score", "6")


def wait_telling_the_folder(page: Any, selector: str, files: DebateFiles) -> None:
    """Wait for `selector`; when it never comes, fail with what the folder says (its state,
    the run's record and the round log's end) rather than the page's timeout alone."""
    from playwright.sync_api import TimeoutError as PageTimeout

    try:
        page.wait_for_selector(selector, timeout=RUN_MS)
    except PageTimeout:
        run = files.paths.folder / "run.json"
        said = run.read_text(encoding="utf-8") if run.exists() else "no run.json"
        log = files.paths.round_log.read_text(encoding="utf-8")[-1500:]
        raise AssertionError(
            f"{selector} never shown; debate.md says {files.debate().status.phase}\n"
            f"run.json: {said}\nround-log.md ends:\n{log}\npage:\n{page.inner_text('body')[:1500]}"
        ) from None


def test_a_person_answers_three_rounds_from_the_page(
    writable: tuple[Root, str, str], page: Any
) -> None:
    root, _url, address = writable
    debate_id = ask(
        page,
        address,
        topic=TOPIC,
        options="A=Migrate now\nB=Stay on Redis",
        rounds="3",
        human="alice",
    )
    page.wait_for_selector("#seat-alice form", timeout=RUN_MS)
    # The round's page, as round-context prints it: the answer contract's verdict block.
    assert "```verdict" in (page.text_content("#seat-alice pre") or "")
    # Round 1: the reasoning left out is refused beside its field, every word kept.
    fill_seat(page, 1, skip="reasoning")
    page.click("#alice-submit")
    page.wait_for_selector("label.refused #alice-reasoning")
    assert "### Reasoning" in page.inner_text("label.refused")
    assert page.input_value("#alice-headline") == f"{ANSWER['headline']} (round 1)"
    # A draft survives a reload, both of the refused answer and of the debate's page.
    page.fill("#alice-reasoning", "Typed before a reload.")
    page.reload()
    assert page.input_value("#alice-reasoning") == "Typed before a reload."
    assert page.url.endswith(f"/d/{debate_id}")
    page.goto(page.url)
    assert page.input_value("#alice-reasoning") == "Typed before a reload."
    fill_seat(page, 1)
    page.click("#alice-submit")
    files = DebateFiles(root, debate_id)
    for number in (2, 3):
        wait_telling_the_folder(
            page, f"#seat-alice form[data-draft='{debate_id}/alice/{number}']", files
        )
        fill_seat(page, number)
        page.click("#alice-submit")
    page.wait_for_function(COMPLETE, timeout=RUN_MS)
    assert [e.round for e in files.entries("alice")] == [3, 2, 1]
    assert {n: files.verdicts().round(n)["alice"].stance for n in (1, 2, 3)} == {
        1: "A",
        2: "A",
        3: "A",
    }
    reviews = json.loads(files.paths.reviews.read_text(encoding="utf-8"))["rounds"]["2"]
    assert reviews["alice"]["score"] == 6.0  # her cross-examination, scored as she gave it
    critics = [c for c, review in reviews.items() if review["target"] == "alice"]
    assert critics and all(reviews[c]["score"] is not None for c in critics)
    # The one refusal is the page answered with a 400; no script failed.
    assert [e for e in page.errors if "status of 400" not in e] == []
