"""`council run` on the built-in scripted provider: the first command a new user types."""

from __future__ import annotations

import json
from pathlib import Path

from debate_story import FINAL_REPORT_SECTIONS

from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root

from .support import OPTIONS, TOPIC, Council, h2_titles, section

PHASE_OF_ROUND = {1: "opening", 2: "cross-exam", 3: "rebuttal"}
USAGE_KEYS = {
    "at",
    "persona",
    "round",
    "phase",
    "provider",
    "model",
    "input_tokens",
    "output_tokens",
    "latency_s",
    "attempt",
    "outcome",
    "cost_usd",
}


def tree_bytes(path: Path) -> dict[str, bytes]:
    """Every file under `path` with its bytes."""
    if not path.exists():
        return {}
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def test_run_with_no_key_runs_a_whole_debate_on_the_scripted_provider(council: Council) -> None:
    result = council.proc("run", "--topic", TOPIC, "--options", OPTIONS)

    assert result.code == 0, result.err
    assert "No API key is set" in result.err
    assert "scripted provider" in result.err
    assert "It is not a model." in result.err
    debate_id = result.last_line
    assert debate_id.startswith("council_")
    assert f"{debate_id} is complete" in result.out
    assert council.status(debate_id) == "complete"

    report = council.text(debate_id, "final-report.md")
    titles = h2_titles(frontmatter_io.parse(report, "final-report.md")[1])
    assert titles == [*FINAL_REPORT_SECTIONS[:3], "Claims ledger", *FINAL_REPORT_SECTIONS[3:]]
    meta, _ = frontmatter_io.parse(report, "final-report.md")
    assert meta["debate_id"] == debate_id
    assert meta["topic"] == TOPIC
    assert meta["personas"] == council.meta(debate_id)["personas"]

    # The engine renders the timeline: exactly what `council timeline` prints, then the tally.
    timeline = council("timeline", debate_id)
    assert timeline.code == 0
    timeline_part, tally = section(report, "Position timeline").rsplit("\n\n", 1)
    assert timeline_part == timeline.out.rstrip("\n")
    assert tally.startswith(f"**Final tally (round {meta['rounds']}):** A Migrate now ")

    # usage.jsonl: one line per call, each fully described, all scripted.
    records = council.usage(debate_id)
    personas = council.meta(debate_id)["personas"]
    rounds = council.meta(debate_id)["current_round"]
    checks = [r for r in records if r["phase"] == "check"]
    assert len(checks) == council.log(debate_id).count("## Convergence check after round")
    assert len(records) == len(personas) * rounds + len(checks) + 1
    for record in records:
        assert set(record) >= USAGE_KEYS, record
        assert record["provider"] == "scripted"
        assert record["outcome"] == "ok"
        assert record["note"] == "scripted stand-in, not a model"
        assert record["input_tokens"] > 0 and record["output_tokens"] > 0
    for number in range(1, rounds + 1):
        asked = sorted(
            r["persona"]
            for r in records
            if r["round"] == number and r["phase"] == PHASE_OF_ROUND.get(number, "rebuttal")
        )
        assert asked == sorted(personas)
    assert [r["phase"] for r in records][-1] == "synthesis"


def test_run_continues_a_debate_set_up_by_hand(council: Council) -> None:
    debate_id = council.new_debate("--rounds", "2")
    for slug in ("risk-auditor", "growth-cfo", "platform-lead"):
        council.add_persona(debate_id, slug)

    result = council("run", debate_id)

    assert result.code == 0, result.err
    assert result.last_line == debate_id
    assert council.status(debate_id) == "complete"
    assert council.ids() == [debate_id]
    records = council.usage(debate_id)
    assert {r["persona"] for r in records if r["phase"] == "opening"} == {
        "risk-auditor",
        "growth-cfo",
        "platform-lead",
    }
    snapshot = load_snapshot(Root(council.root), debate_id)
    for persona in snapshot.personas:
        assert [e.round for e in persona.entries] == [2, 1]
        assert persona.context is not None and persona.context.round_entries == 2


def test_rounds_1_is_a_quick_council_opening_then_synthesis(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1")

    assert result.code == 0, result.err
    debate_id = result.last_line
    assert council.status(debate_id) == "complete"
    phases = [r["phase"] for r in council.usage(debate_id)]
    assert set(phases[:-1]) == {"opening"}
    assert phases[-1] == "synthesis"
    log = council.log(debate_id)
    assert "Round 2 started" not in log
    assert "Convergence check" not in log


def test_compact_stops_after_round_2_without_a_check(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "4", "--compact")

    assert result.code == 0, result.err
    debate_id = result.last_line
    assert council.status(debate_id) == "complete"
    assert council.meta(debate_id)["current_round"] == 2
    log = council.log(debate_id)
    assert "## Round 2 complete" in log
    assert "Round 3 started" not in log
    assert "Convergence check" not in log
    assert "check" not in {r["phase"] for r in council.usage(debate_id)}


def test_promote_writes_the_knowledge_doc(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--promote")

    assert result.code == 0, result.err
    debate_id = result.last_line
    promoted = council.meta(debate_id)["promoted_to_knowledge"]
    assert promoted and promoted.startswith("knowledge/decision-")
    assert f"Promoted to {promoted}." in result.out
    doc = (council.root / promoted).read_text(encoding="utf-8")
    meta, body = frontmatter_io.parse(doc, promoted)
    assert meta["source_debate"] == debate_id
    assert h2_titles(body)[:2] == ["Verdict", "Decision card"]


def test_promote_on_a_complete_debate_promotes_without_calling_anything(council: Council) -> None:
    debate_id = council("run", "--topic", TOPIC, "--rounds", "1").last_line
    calls = len(council.usage(debate_id))

    result = council("run", debate_id, "--promote")

    assert result.code == 0, result.err
    assert council.meta(debate_id)["promoted_to_knowledge"]
    assert len(council.usage(debate_id)) == calls


def test_dry_run_prints_the_plan_and_writes_nothing(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--options", OPTIONS, "--dry-run")

    assert result.code == 0, result.err
    assert "Dry run: up to 14 calls" in result.out  # 4 personas x 3 rounds, 1 check, synthesis
    assert "nothing was called or written" in result.out
    assert not council.root.exists()

    debate_id = council.new_debate()
    for slug in ("risk-auditor", "growth-cfo"):
        council.add_persona(debate_id, slug)
    before = tree_bytes(council.root)

    planned = council("run", debate_id, "--dry-run", "--json")

    assert planned.code == 0, planned.err
    data = json.loads(planned.out)
    assert data["stopped"] == "dry-run"
    assert data["calls"] == len(data["plan"]) == 2 * 3 + 1 + 1
    assert {c["phase"] for c in data["plan"]} == {"persona", "check", "synthesis"}
    assert tree_bytes(council.root) == before


def test_quiet_prints_only_the_result(council: Council) -> None:
    result = council.proc("run", "--topic", TOPIC, "--rounds", "1", "--quiet")

    assert result.code == 0, result.err
    assert result.err == ""
    lines = result.out.strip().split("\n")
    assert lines[-1].startswith("council_")
    assert lines[0] == f"{lines[-1]} is complete: {council.folder(lines[-1]) / 'final-report.md'}"
    assert lines[1] == "Verdict: Proceed now (proceed-now). Confidence: medium."
    assert len(lines) == 3


def test_json_prints_one_json_document(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--rounds", "1", "--json")

    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["stopped"] == "complete"
    assert data["id"].startswith("council_")
    assert data["calls"] == len(council.usage(data["id"]))
    assert data["cost_usd"] == 0


def test_without_registered_options_a_new_stance_keeps_its_wording(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--rounds", "2")

    assert result.code == 0, result.err
    options = council.json_file(result.last_line, "verdicts.json")["options"]
    assert options == [
        {"key": "proceed-now", "label": "Proceed now"},
        {"key": "hold-off", "label": "Hold off"},
    ]


def test_personas_auto_asks_the_orchestrator_for_the_roster(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--personas", "auto", "--rounds", "1")

    assert result.code == 0, result.err
    debate_id = result.last_line
    records = council.usage(debate_id)
    assert (records[0]["phase"], records[0]["round"]) == ("persona-generation", 0)
    personas = council.meta(debate_id)["personas"]
    assert 2 <= len(personas) <= 10
    assert sorted(r["persona"] for r in records if r["phase"] == "opening") == sorted(personas)


def test_run_needs_an_id_or_a_topic_but_not_both(council: Council) -> None:
    neither = council("run")
    debate_id = council.new_debate()
    both = council("run", debate_id, "--topic", TOPIC)

    for result in (neither, both):
        assert result.code == 2
        assert 'Pass either a debate id or --topic "…"' in result.err
    assert council.usage(debate_id) == []


def test_dry_run_plans_only_what_is_left(council: Council) -> None:
    debate_id = council("run", "--topic", TOPIC, "--options", OPTIONS, "--interrupt").last_line
    assert council.status(debate_id) == "round_1_complete"
    before = tree_bytes(council.root)

    plan = council("run", debate_id, "--dry-run", "--json").json()["plan"]
    compact = council("run", debate_id, "--dry-run", "--compact", "--json").json()["plan"]

    assert [(c["round"], c["phase"]) for c in plan].count((2, "persona")) == 4
    assert [c["phase"] for c in plan].count("persona") == 8  # rounds 2 and 3
    assert [c["phase"] for c in plan].count("check") == 1
    assert [c["phase"] for c in compact] == ["persona"] * 4 + ["synthesis"]
    assert tree_bytes(council.root) == before
