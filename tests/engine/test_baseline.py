"""`run --baseline`: one solo answer before round 1, stored as baseline.md and compared
with the council's verdict by the engine."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from starlette.testclient import TestClient

from dreamcontext_council.dashboard.app import create_app
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root

from .support import OPTIONS, TOPIC, Council, section

# A `command:` model: answers the solo call with a known answer (stance B) and keeps the
# prompt it was given; every other call it answers as the scripted provider would.
SOLO_SCRIPT = """\
import pathlib, sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
text = sys.stdin.read()
task = task_from_text(text)
if task.get("phase") == "baseline":
    pathlib.Path(sys.argv[1]).write_text(text, encoding="utf-8")
    print('''### Executive Summary
Stay on Redis: the migration buys little.

### Position
Option B.

### Reasoning
Redis already meets the latency budget.

### Reactions to peers
none

### Open questions
What does the migration cost?

```verdict
stance: B
conviction: 72
headline: Redis is good enough
concession: none
```''')
else:
    print(scripted_text(task))
"""


def solo_command(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "solo.py"
    script.write_text(SOLO_SCRIPT, encoding="utf-8")
    seen = tmp_path / "solo-prompt.txt"
    return f"command:{sys.executable} {script} {seen}", seen


def test_the_solo_answer_is_asked_once_stored_booked_and_compared(
    council: Council, tmp_path: Path
) -> None:
    model, seen = solo_command(tmp_path)
    run = council.proc(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "2", "--yes",
        "--baseline-model", model, "--quiet",
    )  # fmt: skip
    assert run.code == 0, run.err
    debate_id = council.only_id()
    meta, body = frontmatter_io.parse(council.text(debate_id, "baseline.md"), "baseline.md")
    assert (meta["stance"], meta["conviction"], meta["headline"]) == (
        "B",
        72,
        "Redis is good enough",
    )
    assert meta["model"].startswith("command:")
    assert "Redis already meets the latency budget." in body
    assert "```verdict" not in body
    # No persona, the same options and contract as a round-1 persona.
    prompt = seen.read_text(encoding="utf-8")
    assert TOPIC in prompt and "Migrate now" in prompt and "### Reactions to peers" in prompt
    assert "You are" not in prompt and "council of" not in prompt
    solo = [r for r in council.usage(debate_id) if r["persona"] == "(baseline)"]
    assert [(r["phase"], r["provider"], r["outcome"]) for r in solo] == [
        ("baseline", "command", "ok")
    ]
    first = council.usage_lines(debate_id)[0]
    assert first["persona"] == "(baseline)"  # before round 1
    report = council.text(debate_id, "final-report.md")
    verdict = section(report, "Verdict")
    assert "Debate measures (from the record, no model call):\n- Flips: " in verdict
    assert "\n- Anchoring: the verdict A is the round-1 majority" in verdict
    compared = section(report, "Solo answer vs council verdict")
    assert "**B** (72)" in compared and "Council verdict: **A** — a different stance" in compared
    claims = [c["claim"] for c in council.json_file(debate_id, "claims.json")["claims"]]
    for claim in claims:  # the solo answer says none of the scripted ledger's claims
        assert f"  - {claim}" in compared
    board = council("board", debate_id, "--json")
    assert board.json()["baseline"] == {
        "solo_stance": "B", "council_stance": "A", "same": False,
        "claims": len(claims), "lacking": claims,
    }  # fmt: skip
    plain = council("board", debate_id, "--plain").out
    assert "SOLO     solo answer B · council A · different stance" in plain
    # The dashboard shows the same comparison and the measures.
    with TestClient(create_app(Root(council.root))) as client:
        page = client.get(f"/d/{debate_id}").text
    assert "Solo answer vs council verdict: solo answer B · council A · different stance" in page
    assert f"<li>{claims[0]}</li>" in page
    assert '<ul class="measures" id="measures"><li>Flips: ' in page
    # A resume never asks again.
    again = council.proc("run", debate_id, "--quiet")
    assert again.code == 0, again.err
    assert len([r for r in council.usage(debate_id) if r["persona"] == "(baseline)"]) == 1


def test_the_dry_run_counts_the_baseline_call(council: Council) -> None:
    plain = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--rounds",
        "2",
        "--yes",
        "--dry-run",
        "--json",
    ).json()
    solo = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "2", "--yes", "--dry-run", "--json",
        "--baseline",
    ).json()  # fmt: skip
    assert solo["calls"] == plain["calls"] + 1
    assert [(c["persona"], c["phase"]) for c in solo["plan"] if c["persona"] == "(baseline)"] == [
        ("(baseline)", "baseline")
    ]
    assert "1 baseline" in solo["message"]


def test_a_run_without_baseline_writes_none(council: Council) -> None:
    run = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--yes", "--quiet"
    )
    assert run.code == 0, run.err
    debate_id = council.only_id()
    assert not (council.folder(debate_id) / "baseline.md").exists()
    assert "Solo answer vs council verdict" not in council.text(debate_id, "final-report.md")
    assert council("board", debate_id, "--json").json()["baseline"] is None
    assert json.dumps(council.usage(debate_id)).count("(baseline)") == 0
