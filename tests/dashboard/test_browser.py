"""The dashboard in Debian's chromium: navigation, citations, live updates, XSS payloads,
the verdict first, a big root, a long debate's parts on demand, a 420 px screen."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dreamcontext_council import record_verdict
from dreamcontext_council.folder.paths import Root

from .big_debates import long_debate, many_debates
from .conftest import (
    REFERENCE_ID,
    Council,
    append_report,
    entry,
    give_verdict,
    new_running_debate,
    ok,
    served,
    the_eval,
)

pytestmark = pytest.mark.browser

IMG = "<img src=x onerror=window.__xss=1>"
SCRIPT = "<script>window.__xss=1</script>"
LINK = "[x](javascript:window.__xss=1)"
PAYLOADS = (IMG, SCRIPT, LINK)
ALL = " ".join(PAYLOADS)


def in_view(page: Any, selector: str) -> bool:
    return bool(
        page.eval_on_selector(
            selector,
            """el => { const r = el.getBoundingClientRect();
                       return r.top >= 0 && r.top < window.innerHeight && r.bottom > 0; }""",
        )
    )


def test_the_list_leads_to_the_debate_page(reference_root: Root, page: Any) -> None:
    with served(reference_root) as (url, _):
        page.goto(url + "/")
        row = page.locator(".debate-row")
        assert row.count() == 1
        assert "★ promoted" in row.inner_text()
        # The search is done on the server: rows that do not match are not sent.
        page.fill("#q", "no such debate")
        page.wait_for_selector("#no-match")
        assert row.count() == 0
        assert page.evaluate("location.search") == "?q=no+such+debate"
        page.fill("#q", "redis")
        page.select_option("#status-filter", "complete")
        page.wait_for_selector(".debate-row")
        assert page.evaluate("location.search") == "?q=redis&status=complete"
        page.click("text=Should we migrate the session store from Redis to Postgres?")
        page.wait_for_url(f"{url}/d/{REFERENCE_ID}")
        assert page.locator("h1.topic").inner_text() == (
            "Should we migrate the session store from Redis to Postgres?"
        )
        assert page.locator("#status").inner_text() == "complete"
        page.wait_for_selector('#live[data-state="on"]')
        assert page.errors == []


def test_the_list_leads_to_the_eval_and_its_questions_debates(eval_root: Root, page: Any) -> None:
    folder = the_eval(eval_root)
    debates = json.loads((folder / "debates.json").read_text("utf-8"))
    results = (folder / "results.json").read_text("utf-8")
    (folder / "results.json").unlink()  # written again below, while the page is open
    solo = folder / "answers" / "hire.solo.md"
    solo_text = solo.read_bytes()
    solo.unlink()  # hire is not done yet: its solo answer comes while the list is open
    done_cell = ".eval-row td:nth-child(2)"
    with served(eval_root) as (url, _):
        page.goto(url + "/")
        page.click("#evals-link")
        page.wait_for_url(f"{url}/e/")
        page.wait_for_selector('#live[data-state="on"]')
        assert page.inner_text(done_cell) == "1 / 2"
        page.evaluate("window.__sameDocument = true")
        solo.write_bytes(solo_text)
        page.wait_for_function(
            f"() => document.querySelector('{done_cell}').textContent.trim() === '2 / 2'",
            timeout=15000,
        )
        assert page.evaluate("window.__sameDocument") is True  # updated, not reloaded
        page.click(f"text={folder.name}")
        page.wait_for_url(f"{url}/e/{folder.name}")
        page.wait_for_selector('#live[data-state="on"]')
        assert "No results.json yet" in page.inner_text("#figures-note")
        assert page.locator(".method-row").count() == 0
        page.evaluate("window.__sameDocument = true")
        (folder / "results.json").write_text(results, encoding="utf-8")
        page.wait_for_selector("#method-council", timeout=15000)
        assert page.evaluate("window.__sameDocument") is True  # updated, not reloaded
        assert page.inner_text("#method-council td:nth-child(2)") == "1/2"
        assert page.locator(".question-row").count() == 2
        methods = page.locator(".method-row").count()
        assert methods >= 4  # council, one model, round-1 vote, weighted vote
        assert page.locator("#plot svg circle").count() == methods
        page.click(f"#question-hire a[href='/d/{debates['hire']}']")
        page.wait_for_url(f"{url}/d/{debates['hire']}")
        assert page.locator("h1.topic").inner_text() == "Hire?"
        assert page.errors == []


def test_clicking_a_citation_lands_on_the_matrix_cell(reference_root: Root, page: Any) -> None:
    with served(reference_root) as (url, _):
        page.goto(f"{url}/d/{REFERENCE_ID}")
        page.click('#report-why a.cite:has-text("risk-auditor R1")')
        page.wait_for_function("() => location.hash === '#cell-risk-auditor-1'")
        page.wait_for_timeout(600)  # smooth scrolling
        assert page.eval_on_selector("#cell-risk-auditor-1", "el => el.matches(':target')")
        assert in_view(page, "#cell-risk-auditor-1")
        page.click('#report-why a.cite:has-text("growth-cfo R2")')
        page.wait_for_function("() => location.hash === '#cell-growth-cfo-2'")
        page.wait_for_timeout(600)
        assert in_view(page, "#cell-growth-cfo-2")
        # A `**slug**:` chip leads to that persona's transcript.
        page.click("#cell-risk-auditor-2 summary")
        page.click('#cell-risk-auditor-2 a.persona-chip:has-text("growth-cfo")')
        page.wait_for_function("() => location.hash === '#persona-growth-cfo'")
        # The promoted marker links the knowledge doc, served read-only.
        page.click(".promoted-banner a")
        page.wait_for_url(f"{url}/knowledge/decision-*")
        assert "Decision: Should we migrate" in page.inner_text("h1")
        assert page.errors == []


def test_a_verdict_from_a_cli_process_appears_live(
    tmp_path: Path, council: Callable[[Root], Council], page: Any
) -> None:
    root = Root(tmp_path / "_dream_context")
    run = council(root)
    debate_id = new_running_debate(run, "Live or not?", ("risk-auditor", "growth-cfo"))
    with served(root) as (url, _):
        page.goto(f"{url}/d/{debate_id}")
        page.wait_for_selector('#live[data-state="on"]')
        page.evaluate("window.__sameDocument = true")
        cell = page.locator("#cell-risk-auditor-1")
        assert "no verdict" in cell.inner_text()
        started = time.monotonic()
        give_verdict(run, debate_id, "risk-auditor", "A", 80, "Ops cost halves")
        page.wait_for_function(
            "() => document.querySelector('#cell-risk-auditor-1').textContent"
            ".includes('Ops cost halves')",
            timeout=5000,
        )
        assert time.monotonic() - started < 5
        assert page.evaluate("window.__sameDocument") is True  # updated, not reloaded
        assert "80" in page.locator("#board-risk-auditor").inner_text()
        append_report(run, debate_id, "risk-auditor", entry("Postgres wins on cost."))
        page.wait_for_function(
            "() => document.querySelector('#cell-risk-auditor-1').textContent"
            ".includes('Postgres wins')",
            timeout=5000,
        )


def test_a_new_debate_appears_on_the_open_list(
    tmp_path: Path, council: Callable[[Root], Council], page: Any
) -> None:
    root = Root(tmp_path / "_dream_context")
    run = council(root)
    first = new_running_debate(run, "First question?", ("risk-auditor",))
    with served(root) as (url, _):
        page.goto(url + "/")
        page.wait_for_selector('#live[data-state="on"]')
        assert page.locator(".debate-row").count() == 1
        ok(run, "new", "Second question?", "--rounds", "1")
        page.wait_for_function(
            "() => document.querySelectorAll('.debate-row').length === 2", timeout=5000
        )
        assert first in page.inner_text("#live-root")


def _hostile_debate(run: Council, root: Root) -> str:
    debate_id = new_running_debate(run, f"Topic {ALL}", ("risk-auditor",), body=f"Persona {ALL}")
    ok(run, "inject", debate_id, f"Fact {ALL}")
    give_verdict(
        run,
        debate_id,
        "risk-auditor",
        "A",
        60,
        f"Headline {IMG}",
        "--concession",
        f"Concession {SCRIPT}",
    )
    append_report(
        run,
        debate_id,
        "risk-auditor",
        entry(f"Summary {ALL}", position=f"Position {ALL}", reasoning=f"Reasoning {ALL}"),
    )
    ok(
        run,
        "research",
        "add",
        debate_id,
        "risk-auditor",
        f"Research {IMG}",
        "--body",
        f"Note {ALL}",
    )
    folder = root.debate(debate_id).folder
    # A hand-edited index naming a file whose name is itself a payload.
    index = folder / "risk-auditor" / "researches" / "index.json"
    notes = json.loads(index.read_text())
    notes.append({"slug": IMG, "topic": f"Named {SCRIPT}", "added_at": "2026-11-30"})
    index.write_text(json.dumps(notes))
    (folder / "risk-auditor" / "researches" / f"{IMG}.md").write_text(f"# {SCRIPT}\n")
    (folder / "final-report.md").write_text(
        f"## Verdict\n\nVerdict {ALL}\n\n## Why\n\n- {ALL} *— risk-auditor R1*\n\n"
        f"## Appendix: per-agent per-round summaries\n\n{ALL}\n"
    )
    (folder / "claims.json").write_text(
        json.dumps(
            {
                "claims": [
                    {
                        "id": IMG,
                        "claim": f"Claim {ALL}",
                        "proposer": SCRIPT,
                        "label": IMG,
                        "research": [SCRIPT],
                    }
                ],
                "dropped": [f"Dropped {ALL}"],
                "flags": [{"persona": SCRIPT, "claim": IMG}],
            }
        )
    )
    return debate_id


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_xss_payloads_stay_text(
    tmp_path: Path, council: Callable[[Root], Council], browser: Any, csp: bool
) -> None:
    # Without the CSP, escaping alone must keep the payloads inert.
    context = browser.new_context(bypass_csp=not csp)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # With the CSP on, a payload that reached the DOM as markup would be reported here.
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    try:
        _check_payloads(tmp_path, council, page, errors)
    finally:
        context.close()


def _check_payloads(
    tmp_path: Path, council: Callable[[Root], Council], page: Any, errors: list[str]
) -> None:
    root = Root(tmp_path / "_dream_context")
    run = council(root)
    debate_id = _hostile_debate(run, root)
    with served(root) as (url, _):
        page.goto(url + "/")
        assert f"Topic {ALL}" in page.inner_text(".debate-row")
        page.goto(f"{url}/d/{debate_id}")
        page.wait_for_selector('#live[data-state="on"]')
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        for link in page.query_selector_all(
            "#live-root a[href^='javascript'], #live-root a[href^='data']"
        ):
            raise AssertionError(f"unsafe link survived: {link.get_attribute('href')}")
        # Make the page re-render live too: payloads must survive the fragment swap.
        ok(run, "inject", debate_id, f"Second fact {ALL}")
        page.wait_for_function(
            "() => document.querySelector('#question').textContent.includes('Second fact')",
            timeout=5000,
        )
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        text = page.inner_text("#live-root")
        for visible in (
            f"Topic {ALL}",
            f"Persona {ALL}",
            f"Fact {ALL}",
            f"Headline {IMG}",
            f"Concession {SCRIPT}",
            f"Summary {ALL}",
            f"Reasoning {ALL}",
            f"Research {IMG}",
            f"Note {ALL}",
            f"Named {SCRIPT}",
            f"{IMG}.md",
            f"Verdict {ALL}",
            f"Claim {ALL}",
            f"Dropped {ALL}",
        ):
            assert visible in text, visible
        assert page.locator("#live-root img").count() == 0
        assert page.locator("#live-root script").count() == 0
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert errors == []


def _top(page: Any, selector: str) -> float:
    return float(page.eval_on_selector(selector, "el => el.getBoundingClientRect().top"))


def test_the_verdict_comes_first(reference_root: Root, page: Any) -> None:
    with served(reference_root) as (url, _):
        page.goto(f"{url}/d/{REFERENCE_ID}")
        tops = [
            _top(page, selector)
            for selector in (
                "#question",
                "#report-verdict",
                "#report-decision-card",
                "#board",
                "#report",
                "#claims",
                "#matrix",
                "#personas",
            )
        ]
        assert tops == sorted(tops)
        assert tops[1] < page.evaluate("window.innerHeight * 2")
        assert page.errors == []


def test_a_live_update_on_a_big_root_swaps_only_the_changed_parts(
    tmp_path: Path, council: Callable[[Root], Council], page: Any
) -> None:
    root, _ = many_debates(tmp_path, 300)
    run = council(root)
    debate_id = new_running_debate(run, "Live at scale?", ("risk-auditor", "growth-cfo"))
    with served(root) as (url, _):
        page.goto(f"{url}/d/{debate_id}")
        page.wait_for_selector('#live[data-state="on"]')
        page.evaluate(
            "for (const id of ['row-growth-cfo', 'row-risk-auditor', 'persona-growth-cfo'])"
            " document.getElementById(id).dataset.kept = 'yes'"
        )
        give_verdict(run, debate_id, "risk-auditor", "A", 80, "Ops cost halves")
        page.wait_for_function(
            "() => document.querySelector('#cell-risk-auditor-1').textContent"
            ".includes('Ops cost halves')",
            timeout=5000,
        )
        assert "80" in page.inner_text("#board-risk-auditor")
        kept = page.evaluate(
            "['row-growth-cfo', 'row-risk-auditor', 'persona-growth-cfo']"
            ".map(id => document.getElementById(id).dataset.kept || '')"
        )
        # The changed persona's row was replaced; the others are the same elements.
        assert kept == ["yes", "", "yes"]
        page.goto(url + "/")
        assert page.locator(".debate-row").count() == 50
        assert "301 of 301 debates" in page.inner_text("#count")
        assert page.errors == []


def test_a_long_debate_loads_entries_and_transcripts_when_opened(tmp_path: Path, page: Any) -> None:
    root = Root(tmp_path / "_dream_context")
    debate_id = long_debate(root, personas=3, rounds=2, entry_bytes=40_000)
    with served(root) as (url, _):
        page.goto(f"{url}/d/{debate_id}")
        page.wait_for_selector('#live[data-state="on"]')
        assert "Point 40:" not in page.content()
        page.click("#cell-persona-01-2 summary")
        page.wait_for_selector("#cell-persona-01-2 h4:has-text('Reasoning')")
        assert "Point 40:" in page.inner_text("#cell-persona-01-2")
        page.click("#open-transcript-persona-02 > summary")
        page.wait_for_selector("#entry-persona-02-2")
        # A live update keeps what was opened open and loaded.
        record_verdict(
            root, debate_id, "persona-02", 2, stance="B", conviction=99, headline="Moved"
        )
        page.wait_for_function(
            "() => document.querySelector('#cell-persona-02-2').textContent.includes('Moved')",
            timeout=5000,
        )
        page.wait_for_selector("#entry-persona-02-2")
        assert "Point 40:" in page.inner_text("#cell-persona-01-2")
        assert page.errors == []


OUTSIDE = """() => {
  const width = document.documentElement.clientWidth;
  const scrolls = el => {
    for (let up = el.parentElement; up; up = up.parentElement) {
      const x = getComputedStyle(up).overflowX;
      if (x === "auto" || x === "scroll") return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if ((box.right > width + 0.5 || box.left < -0.5) && !scrolls(el)) {
      out.push(el.tagName + "." + el.className + "#" + el.id);
    }
  }
  return [document.documentElement.scrollWidth, width, out.slice(0, 10)];
}"""


def test_a_420_px_screen_shows_everything_without_overflow(
    reference_root: Root, browser: Any
) -> None:
    context = browser.new_context(viewport={"width": 420, "height": 800})
    page = context.new_page()
    try:
        with served(reference_root) as (url, _):
            for path in ("/", f"/d/{REFERENCE_ID}"):
                page.goto(url + path)
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                scroll_width, width, outside = page.evaluate(OUTSIDE)
                assert width == 420
                assert outside == [], path
                assert scroll_width <= width, path
    finally:
        context.close()
