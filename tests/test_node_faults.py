"""The Node tool's known faults, which ours must not repeat."""

from __future__ import annotations

import pytest
from debate_story import Chair, Reference, Runner, changed_files, entry, tree_bytes

VOTES_1 = {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)}

LOOSE_HEADINGS = {
    "Executive Summary": "executive SUMMARY:",
    "Position": "POSITION",
    "Reasoning": "reasoning.",
    "Reactions to peers": "Reactions To Peers",
    "Open questions": "open questions?",
}


def test_loose_headings_are_accepted_and_found_by_summaries(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    body = entry("Loose headings still count.", headings=LOOSE_HEADINGS)
    appended = cli("report", "append", debate_id, "growth-cfo", "--body", body)
    assert appended.code == 0, appended.err
    data = cli("summaries", debate_id, "1", "--json").json()
    assert data[1] == {
        "persona": "growth-cfo",
        "summary": "Loose headings still count.",
        "stance": None,
        "conviction": None,
        "shift": "·",
    }
    assert "Loose headings still count." in cli("summaries", debate_id, "1").out


def test_loose_headings_reach_the_next_rounds_panel(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    for slug, (stance, level) in VOTES_1.items():
        chair.ok("verdict", debate_id, slug, "1", "--stance", stance, "--conviction", str(level), "--headline", "h")  # fmt: skip
        body = entry(f"{slug} in loose headings.", headings=LOOSE_HEADINGS)
        chair.ok("report", "append", debate_id, slug, "--body", body)
    chair.ok("round", "end", debate_id, "1")
    chair.ok("round", "start", debate_id, "2")
    page = cli("round-context", debate_id, "risk-auditor").out
    assert "growth-cfo in loose headings." in page
    assert "submitted no report" not in page


def test_a_hand_written_report_in_lower_case_is_read(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    chair.submit(debate_id, "growth-cfo", 1)
    report = chair.folder(debate_id) / "growth-cfo" / "report.md"
    text = report.read_text(encoding="utf-8")
    report.write_text(
        text.replace("## Round 1 —", "## round 1 —").replace(
            "### Executive Summary", "### EXECUTIVE summary"
        ),
        encoding="utf-8",
    )
    summary = cli("summaries", debate_id, "1", "--json").json()[1]["summary"]
    assert summary == "growth-cfo thinks round 1 points to option A."


def test_a_round_heading_in_the_entry_may_be_any_case(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    body = entry("Headed entry.").replace("### Executive", "## ROUND 1 — today\n\n### Executive", 1)
    result = cli("report", "append", debate_id, "growth-cfo", "--body", body, "--json")
    assert result.code == 0, result.err
    assert result.json()["round"] == 1
    text = (chair.folder(debate_id) / "growth-cfo" / "report.md").read_text(encoding="utf-8")
    assert text.count("## Round 1 — ") == 1 and "ROUND 1" not in text


def test_loose_context_headings_still_carry_directives_and_panels(
    chair: Chair, cli: Runner
) -> None:
    debate_id = chair.new()
    chair.play_round(debate_id, 1, VOTES_1)
    chair.ok("question", debate_id, "growth-cfo", "What does it cost?")
    chair.ok("round", "start", debate_id, "2")
    context = chair.folder(debate_id) / "growth-cfo" / "context-and-persona.md"
    text = context.read_text(encoding="utf-8")
    context.write_text(
        text.replace("## Round 2 — Directives", "## ROUND 2 - directives:").replace(
            "## Round 2 — Cross-context loaded", "## round 2 – cross-context LOADED"
        ),
        encoding="utf-8",
    )
    page = cli("round-context", debate_id, "growth-cfo").out
    assert "- What does it cost?" in page
    assert "risk-auditor thinks round 1 points to option A." in page
    before = tree_bytes(chair.root)
    assert cli("round", "start", debate_id, "2").code == 0  # the panel is seen: no second one
    assert changed_files(before, tree_bytes(chair.root)) == []


def test_round_context_shows_both_directives_on_the_reference(
    fixture_root: Reference, ref_cli: Runner
) -> None:
    # The reference debate is complete; reopen round 2 in our copy to ask for its context.
    debate_md = fixture_root.folder / "debate.md"
    text = debate_md.read_text(encoding="utf-8")
    debate_md.write_text(text.replace("status: complete", "status: round_2_running"))
    page = ref_cli("round-context", fixture_root.id, "growth-cfo")
    assert page.code == 0, page.err
    directives = page.out.split("## Directives for you this round", 1)[1]
    assert "- What does the migration cost in engineer-weeks?" in directives
    assert "- Steelman option B for this round." in directives


def test_round_context_of_a_closed_debate_shows_its_last_round(
    fixture_root: Reference, ref_cli: Runner
) -> None:
    page = ref_cli("round-context", fixture_root.id, "growth-cfo").out
    assert "Round: 2 of 2 (status: complete)" in page
    directives = page.split("## Directives for you this round", 1)[1]
    assert "- What does the migration cost in engineer-weeks?" in directives
    assert "- Steelman option B for this round." in directives


def test_round_context_shows_every_queued_directive(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.play_round(debate_id, 1, VOTES_1)
    questions = [
        "What does the migration cost in engineer-weeks?",
        "Steelman option B for this round.",
        "Which rollback have you rehearsed?",
    ]
    for text in questions:
        chair.ok("question", debate_id, "growth-cfo", text)
    before_start = cli("round-context", debate_id, "growth-cfo").out
    chair.ok("round", "start", debate_id, "2")
    during = cli("round-context", debate_id, "growth-cfo").out
    peer = chair.assignment(debate_id, "growth-cfo")
    assigned = [f"Cross-examine {peer}: find the factual errors"]
    for page, added in ((before_start, []), (during, assigned)):
        section = page.split("## Directives for you this round", 1)[1].split("## What to submit")[0]
        found = [line[2:] for line in section.split("\n") if line.startswith("- ")]
        assert found[: len(questions)] == questions
        assert [
            line[: len(a)] for line, a in zip(found[len(questions) :], added, strict=True)
        ] == added
    other = cli("round-context", debate_id, "risk-auditor").out
    assert "engineer-weeks" not in other


def test_agent_create_force_keeps_reports_panels_and_directives(
    chair: Chair, cli: Runner, debated: str
) -> None:
    folder = chair.folder(debated) / "growth-cfo"
    report_before = (folder / "report.md").read_bytes()
    context_before = (folder / "context-and-persona.md").read_text(encoding="utf-8")
    result = cli(
        "agent", "create", debated, "growth-cfo", "--force", "--body", "You are the new CFO."
    )
    assert result.code == 0, result.err
    assert (folder / "report.md").read_bytes() == report_before
    context = (folder / "context-and-persona.md").read_text(encoding="utf-8")
    assert "You are the new CFO." in context and "You are growth-cfo." not in context
    assert (
        context.split("## Round 2 — Directives", 1)[1]
        == context_before.split("## Round 2 — Directives", 1)[1]
    )
    assert "round_entries: 2" in context and "model: sonnet" in context
    assert cli("summaries", debated, "2", "--json").json()[1]["summary"] is not None


def test_agent_create_without_force_refuses_an_existing_persona(
    chair: Chair, cli: Runner, debated: str
) -> None:
    before = tree_bytes(chair.root)
    result = cli("agent", "create", debated, "growth-cfo", "--body", "Replaced?")
    assert result.code == 2 and "--force" in result.err
    assert changed_files(before, tree_bytes(chair.root)) == []


@pytest.mark.parametrize(
    ("slug", "topic", "body"),
    [
        ("risk-auditor", "!!! ???", "A note."),
        ("risk-auditor", "   ", "A note."),
        ("risk-auditor", "postgres write throughput", "   \n  "),
        ("nobody", "postgres write throughput", "A note."),
        ("../x", "postgres write throughput", "A note."),
    ],
    ids=["no-letters", "blank-topic", "empty-body", "unknown-persona", "traversal"],
)
def test_research_add_leaves_nothing_behind_when_it_refuses(
    chair: Chair, cli: Runner, slug: str, topic: str, body: str
) -> None:
    debate_id = chair.new()
    before = tree_bytes(chair.root)
    result = cli("research", "add", debate_id, slug, topic, "--body", body)
    assert result.code in (1, 2), result
    assert result.err.startswith("Error: ")
    assert changed_files(before, tree_bytes(chair.root)) == []
    assert not list(chair.folder(debate_id).rglob("researches"))
    assert not (chair.folder(debate_id) / "nobody").exists()
