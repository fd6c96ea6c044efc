"""Take docs/dashboard-in-flight.png: a round in progress in Debian's chromium.

A debate is made in a scratch root with the library's own calls: round 1 reported and
judged, round 2 started. This process then keeps two calls in progress as `council run`
does (their in-flight files, text added piece by piece) and one seat waiting for its
person, while the dashboard shows the page.

Usage: python scripts/dashboard_in_flight_screenshot.py [OUTPUT]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from dashboard_screenshot import dashboard_page

from dreamcontext_council import (
    PersonaSpec,
    append_report,
    create_agent,
    end_round,
    new_debate,
    record_verdict,
    start_round,
)
from dreamcontext_council.folder.in_flight import WAITING, InFlightCall
from dreamcontext_council.folder.paths import Root

REPO = Path(__file__).resolve().parents[1]
TOPIC = "Should we move the session store from Redis to Postgres this quarter?"
OPTIONS = [
    {"key": "A", "label": "Migrate this quarter"},
    {"key": "B", "label": "Stay on Redis"},
]
PERSONAS = [
    ("contrarian", "claude-sonnet-4-5", "Argues against the room's first instinct."),
    ("pragmatist", "gpt-5-mini", "Weighs cost, risk and the team's time."),
    ("alice", "human", "The platform team's lead, answering in person."),
]
ROUND_1 = {
    "contrarian": ("B", 70, "Redis is not the bottleneck; the migration is risk for nothing."),
    "pragmatist": ("A", 60, "One datastore fewer pays for itself within two quarters."),
    "alice": ("A", 75, "On-call load from Redis failovers is the real cost."),
}
ENTRY = """### Executive Summary
{headline}

### Position
Option {stance}.

### Reasoning
The numbers from the last two incidents decide it.

### Reactions to peers
None yet.

### Open questions
What does a failover cost us in engineer hours?
"""
# How long ago each call began, in seconds, so the picture shows calls well under way.
BEGAN = {"contrarian": 34, "pragmatist": 21, "alice": 48}
STREAMED = {
    "contrarian": (
        "### Executive Summary\nI still lean B, but alice's on-call numbers move me. "
        "Two failovers a quarter at four engineer-hours each is real, yet the migration "
        "plan puts 3 weeks of the platform team on it.\n\n### Position\nOption B, with "
        "conviction 55: fix the failover runbook first, then revisit.\n\n### Reasoning\n"
        "1. The p99 write latency on Postgres in the load test was 18 ms against 2 ms "
    ),
    "pragmatist": (
        "### Executive Summary\nMigrate, but in two steps: sessions first (low risk, "
        "easy rollback), rate limits later.\n\n### Position\nOption A.\n\n### Reasoning\n"
        "The contrarian's latency point holds for hot keys only; sessions are read "
    ),
}


def make_debate(root: Root) -> str:
    debate = new_debate(root, TOPIC, rounds=3, options=OPTIONS)
    for slug, model, body in PERSONAS:
        create_agent(root, debate.id, PersonaSpec(slug, body, model))
    start_round(root, debate.id, 1)
    for slug, (stance, conviction, headline) in ROUND_1.items():
        append_report(root, debate.id, slug, ENTRY.format(headline=headline, stance=stance))
        record_verdict(
            root, debate.id, slug, 1, stance=stance, conviction=conviction, headline=headline
        )
    end_round(root, debate.id, 1)
    start_round(root, debate.id, 2)
    return debate.id


def calls_in_progress(root: Root, debate_id: str) -> list[InFlightCall]:
    """Two calls with text so far and one seat waiting: the files `council run` keeps."""
    folder = root.debate(debate_id).folder
    calls = []
    for slug, text in STREAMED.items():
        call = InFlightCall(folder, within=folder, persona=slug, phase="round", round=2)
        call.started -= BEGAN[slug]
        call.start()
        for word in text.split(" "):
            call.add(word + " ")
        call.flush()
        calls.append(call)
    waiting = InFlightCall(
        folder, within=folder, persona="alice", phase="round", round=2, state=WAITING
    )
    waiting.started -= BEGAN["alice"]
    waiting.start()
    calls.append(waiting)
    return calls


def main() -> None:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "dashboard-in-flight.png"
    with tempfile.TemporaryDirectory() as scratch:
        root = Root(Path(scratch) / "_dream_context")
        root.path.mkdir()
        debate_id = make_debate(root)
        calls: list[InFlightCall] = []
        try:
            with dashboard_page(root, f"/d/{debate_id}") as page:
                calls = calls_in_progress(root, debate_id)
                page.wait_for_function(
                    "() => document.querySelectorAll('.in-flight').length === 3", timeout=15000
                )
                page.wait_for_timeout(1200)  # the seconds counted up once
                # The matrix, from its title to the end of its last row.
                box = page.eval_on_selector(
                    "#matrix",
                    "el => { const r = el.getBoundingClientRect();"
                    " return {top: r.top + window.scrollY, bottom: r.bottom + window.scrollY}; }",
                )
                page.screenshot(
                    path=str(output),
                    full_page=True,
                    clip={
                        "x": 0,
                        "y": max(0, int(box["top"]) - 10),
                        "width": 1280,
                        "height": int(box["bottom"] - box["top"]) + 20,
                    },
                )
        finally:
            for call in calls:
                call.end()
    print(f"Wrote {output}")


if __name__ == "__main__":
    main()
