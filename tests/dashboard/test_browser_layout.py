"""The debate page's layout in Debian's chromium at a desktop (1280 px) and a phone (375 px):
nothing spills out of its card, dates stay on one line, the verdict is on the first screen,
and the verdict card holds the decision and its confidence only. Each width also leaves a
screenshot under the test's temporary folder, for a person to look at."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dreamcontext_council import new_debate, record_verdict, start_round
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.run_record import begin_run, record_stop
from dreamcontext_council.rules.roster import PersonaSpec

from .conftest import REFERENCE_ID, served

pytestmark = pytest.mark.browser

WIDTHS = {"desktop": (1280, 900), "phone": (375, 812)}

# Every element that overflows its own box (scrollWidth > clientWidth) without being a
# scroller, and every element whose box leaves its nearest `.stat` or `.card`.
SPILLS = """() => {
  const out = [];
  const scroller = el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  for (const el of document.querySelectorAll("#top *, #outcome *, #board *, #claims *")) {
    const box = el.getBoundingClientRect();
    if ((box.width === 0 && box.height === 0) || el.matches(".sr")) continue;
    // A scroller or an ellipsis is meant to hold more than it shows.
    const style = getComputedStyle(el);
    const clips = scroller(el) || style.textOverflow === "ellipsis";
    if (el.scrollWidth > el.clientWidth + 1 && !clips && el.clientWidth > 0) {
      out.push("overflows: " + el.tagName + "." + el.className + "#" + el.id);
    }
    const holder = el.parentElement && el.parentElement.closest(".stat, .card");
    if (!holder) continue;
    let inScroller = false;
    for (let up = el.parentElement; up && up !== holder; up = up.parentElement) {
      if (scroller(up)) { inScroller = true; break; }
    }
    if (inScroller) continue;
    const outer = holder.getBoundingClientRect();
    if (box.left < outer.left - 0.5 || box.right > outer.right + 0.5) {
      out.push("leaves its card: " + el.tagName + "." + el.className + "#" + el.id);
    }
  }
  return out;
}"""


def one_line(page: Any, selector: str) -> bool:
    """The element's text sits on one line: its height is that of a single line box."""
    return bool(
        page.locator(selector).first.evaluate(
            """el => { const r = document.createRange(); r.selectNodeContents(el);
                       const lines = new Set([...r.getClientRects()].map(b => Math.round(b.top)));
                       return lines.size === 1; }""",
            timeout=5000,
        )
    )


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return dict(found)


@pytest.fixture(params=sorted(WIDTHS))
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    width, height = WIDTHS[request.param]
    context = browser.new_context(viewport={"width": width, "height": height})
    tab = context.new_page()
    tab.errors = []
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    try:
        yield request.param, tab
    finally:
        context.close()


LONG_LABEL = "Migrate the session store to Postgres now"
CLAIMS = {
    "claims": [
        {
            "id": f"C{n}",
            "claim": "Temporal coupling between the session writes and the billing job "
            "doubles the p99 latency during the nightly batch window.",
            "proposer": "risk-auditor",
            "round": 1,
            "supporters": ["growth-cfo", "user-advocate"],
            "challengers": ["risk-auditor"],
            "label": "DISPUTED",
            "notes": ["risk-auditor/postgres-write-throughput"],
        }
        for n in (1, 2)
    ],
    "dropped": [],
    "flags": [{"persona": "user-advocate", "share": 0.6667, "claims_challenged": 2, "total": 3}],
}

# The Verdict as the engine writes it: the decision and confidence, then the diversity line,
# the dissent flag and the measures that the page already shows above.
VERDICT = """## Verdict

Migrate the session store to Postgres now (A). Confidence: medium.

Model diversity: 1 provider · 1 model family (claude); one family, so agreement is weak evidence.

user-advocate dissents on 2 of 3 claims (66.7%)

Debate measures (from the record, no model call):
- Flips: 0, conformity flips: 0.
- New content: round 1 100%, round 2 50%.
"""


def realistic(root: Root) -> None:
    """The reference debate with what real debates carry: long option labels, timestamps,
    a claims ledger with several personas per claim, the engine's Verdict section."""
    folder = root.debate(REFERENCE_ID).folder
    debate = folder / "debate.md"
    debate.write_text(
        debate.read_text("utf-8")
        .replace("label: Migrate now", f"label: {LONG_LABEL}")
        .replace("created_at: '2026-11-30'", "created_at: '2026-12-02T08:14:03Z'")
        .replace("updated_at: '2026-11-30'", "updated_at: '2026-12-02T08:31:47Z'"),
        encoding="utf-8",
    )
    verdicts = folder / "verdicts.json"
    verdicts.write_text(
        verdicts.read_text("utf-8").replace('"Migrate now"', f'"{LONG_LABEL}"'), "utf-8"
    )
    report = folder / "final-report.md"
    text = report.read_text("utf-8")
    start, end = text.index("## Verdict"), text.index("## Decision card")
    decision = (
        "| Chosen | Runner-up | Deciding factors | Strongest dissent | Conditions to revisit |"
    )
    row = "|---|---|---|---|---|\n| A | B | cost, ops, rollback | user-advocate | p99 > 20ms |"
    text = text[:start] + VERDICT + "\n" + text[end:]
    text = text.replace(
        text[text.index("| Chosen") : text.index("## Why")], f"{decision}\n{row}\n\n"
    )
    report.write_text(text, encoding="utf-8")
    (folder / "claims.json").write_text(json.dumps(CLAIMS), encoding="utf-8")


def stopped(root: Root) -> str:
    """A debate whose run stopped mid-round 1 on a long reason."""
    specs = [PersonaSpec(slug, f"You are {slug}.") for slug in ("risk-auditor", "growth-cfo")]
    debate_id = new_debate(
        root,
        "Migrate the session store?",
        rounds=3,
        options=[{"key": "A", "label": LONG_LABEL}, {"key": "B", "label": "Stay on Redis"}],
        personas=specs,
    ).id
    start_round(root, debate_id, 1)
    record_verdict(root, debate_id, "risk-auditor", 1, stance="A", conviction=70, headline="Go")
    folder = root.debate(debate_id).folder
    started = begin_run(folder, within=root.path)
    reason = "the provider kept failing with 529 overloaded after four retries"
    record_stop(folder, started, reason, "round_1_running", within=root.path)
    return debate_id


def test_the_complete_debate_fits_its_cards(
    reference_root: Root, sized: tuple[str, Any], tmp_path: Path
) -> None:
    name, page = sized
    realistic(reference_root)
    with served(reference_root) as (url, _):
        page.goto(f"{url}/d/{REFERENCE_ID}")
        page.wait_for_selector('#live[data-state="on"]')
        page.screenshot(path=str(tmp_path / f"debate-{name}.png"))
        page.locator("#claims").screenshot(path=str(tmp_path / f"claims-{name}.png"))
        assert page.evaluate(SPILLS) == []
        chip, card = box(page, "#leading .chip"), box(page, "#leading")
        assert card["x"] <= chip["x"] and chip["x"] + chip["width"] <= card["x"] + card["width"]
        for selector in ("#created-at", "#updated-at"):
            assert one_line(page, selector), selector
        # The decision card's column heads stay whole words: no "Chose" / "n".
        heads = page.locator("#report-decision-card th")
        assert heads.count() == 5
        for n in range(heads.count()):
            assert one_line(page, f"#report-decision-card th >> nth={n}"), n
        # The verdict is on the first screen, on a phone too.
        assert box(page, "#report-verdict")["y"] < page.viewport_size["height"]
        # The claims ledger's claim column is wide enough to read a sentence.
        assert box(page, "#claims td.claim")["width"] >= 160
        # A persona chip stays one word: no "risk - audi tor".
        assert one_line(page, "#claims .persona-chip")
        assert page.errors == []


def test_the_verdict_card_holds_the_decision_and_its_confidence(
    reference_root: Root, sized: tuple[str, Any]
) -> None:
    _, page = sized
    realistic(reference_root)
    with served(reference_root) as (url, _):
        page.goto(f"{url}/d/{REFERENCE_ID}")
        decision = page.inner_text("#report-verdict .prose")
        assert decision.strip() == (
            "Migrate the session store to Postgres now (A). Confidence: medium."
        )
        # The diversity line, the flag and the measures appear once on the page.
        body = page.inner_text("body")
        for line in (
            "1 provider · 1 model family (claude)",
            "user-advocate dissents on 2 of 3 claims (66.7%)",
            "New content: round 1 100%, round 2 50%",
        ):
            assert body.count(line) == 1, line


def test_a_stopped_debate_keeps_its_status_in_the_card(
    reference_root: Root, sized: tuple[str, Any], tmp_path: Path
) -> None:
    name, page = sized
    debate_id = stopped(reference_root)
    with served(reference_root) as (url, _):
        page.goto(f"{url}/d/{debate_id}")
        page.screenshot(path=str(tmp_path / f"stopped-{name}.png"), full_page=False)
        badge, card = box(page, "#status"), box(page, "#status-card")
        assert card["x"] <= badge["x"]
        assert badge["x"] + badge["width"] <= card["x"] + card["width"] + 0.5
        assert one_line(page, "#status")  # never "round_1_r" / "unning"
        assert page.evaluate(SPILLS) == []
        assert json.dumps(page.errors) == "[]"


def test_the_list_keeps_dates_on_one_line(reference_root: Root, sized: tuple[str, Any]) -> None:
    _, page = sized
    realistic(reference_root)
    stopped(reference_root)
    with served(reference_root) as (url, _):
        page.goto(url + "/")
        # The list is drawn again once its live stream opens: measure the rows it then holds.
        page.wait_for_function("() => !!document.body.dataset.updated", timeout=10_000)
        assert one_line(page, ".debate-row td.date")
        assert (
            page.evaluate(SPILLS.replace("#top *, #outcome *, #board *, #claims *", ".debates *"))
            == []
        )
