"""The state machine of cli.md: what each command needs, and repeats that change nothing."""

from __future__ import annotations

import json

import pytest
from debate_story import Chair, Runner, changed_files, entry, read_frontmatter, tree_bytes

VOTES_1 = {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)}


def status(chair: Chair, debate_id: str) -> tuple[str, int]:
    meta, _ = read_frontmatter(chair.folder(debate_id) / "debate.md")
    return str(meta["status"]), int(meta["current_round"])


def log_of(chair: Chair, debate_id: str) -> str:
    return (chair.folder(debate_id) / "round-log.md").read_text(encoding="utf-8")


def refused(result: tuple[int, str, str], *words: str) -> None:
    code, out, err = result
    assert code == 1, (code, out, err)
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)


# round start


def test_round_one_needs_a_created_debate_with_personas(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new(personas=())
    refused(cli("round", "start", debate_id, "1"), "no personas", "agent create")
    chair.seat(debate_id, "risk-auditor")
    assert cli("round", "start", debate_id, "1").code == 0
    assert status(chair, debate_id) == ("round_1_running", 1)


def test_round_n_needs_the_previous_round_complete(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new(rounds=3)
    refused(cli("round", "start", debate_id, "2"), "start round 1 first")
    chair.ok("round", "start", debate_id, "1")
    refused(cli("round", "start", debate_id, "2"), "still running", f"round end {debate_id} 1")
    for slug, (stance, level) in VOTES_1.items():
        chair.submit(debate_id, slug, 1, stance, level)
    chair.ok("round", "end", debate_id, "1")
    refused(cli("round", "start", debate_id, "3"), f"round start {debate_id} 2")
    assert cli("round", "start", debate_id, "2").code == 0
    assert status(chair, debate_id) == ("round_2_running", 2)


def test_starting_a_running_round_again_changes_nothing(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.play_round(debate_id, 1, VOTES_1)
    chair.ok("round", "start", debate_id, "2")
    before = tree_bytes(chair.root)
    again = cli("round", "start", debate_id, "2", "--json")
    assert again.code == 0 and again.json()["changed"] is False
    assert changed_files(before, tree_bytes(chair.root)) == []
    assert log_of(chair, debate_id).count("## Round 2 started") == 1
    context = (chair.folder(debate_id) / "growth-cfo" / "context-and-persona.md").read_text(
        encoding="utf-8"
    )
    assert context.count("## Round 2 — Cross-context loaded") == 1


def test_a_round_past_the_plan_needs_round_extend(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new(rounds=1)
    chair.play_round(debate_id, 1, VOTES_1)
    refused(cli("round", "start", debate_id, "2"), "plans 1 rounds", "round extend")
    extended = cli("round", "extend", debate_id)
    assert extended.code == 0, extended.err
    meta, _ = read_frontmatter(chair.folder(debate_id) / "debate.md")
    assert meta["rounds_planned"] == 2
    assert "## Rounds extended" in log_of(chair, debate_id)
    assert cli("round", "start", debate_id, "2").code == 0


def test_round_extend_stays_within_ten_rounds(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new(rounds=9)
    assert cli("round", "extend", debate_id).code == 0
    before = tree_bytes(chair.root)
    result = cli("round", "extend", debate_id)
    assert result.code == 2 and "10 is the most" in result.err
    assert changed_files(before, tree_bytes(chair.root)) == []
    assert cli("round", "extend", debate_id, "--by", "0").code == 2


# round end


def test_round_end_names_every_missing_persona(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    chair.submit(debate_id, "growth-cfo", 1)
    before = tree_bytes(chair.root)
    result = cli("round", "end", debate_id, "1")
    refused(result, "risk-auditor", "user-advocate")
    assert "growth-cfo" not in result.err.split("missing reports from:")[1].split(".")[0]
    assert changed_files(before, tree_bytes(chair.root)) == []


def test_round_end_validates_n_and_updates_current_round(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    refused(cli("round", "end", debate_id, "1"), "only a running round can end")
    chair.ok("round", "start", debate_id, "1")
    for slug, (stance, level) in VOTES_1.items():
        chair.submit(debate_id, slug, 1, stance, level)
    refused(cli("round", "end", debate_id, "2"), "round 1 is the one running")
    refused(cli("round", "end", debate_id, "7"), "round 1 is the one running")
    assert cli("round", "end", debate_id, "0").code == 2
    assert status(chair, debate_id) == ("round_1_running", 1)
    assert cli("round", "end", debate_id, "1").code == 0
    assert status(chair, debate_id) == ("round_1_complete", 1)
    entries = json.loads((chair.root / "council" / "index.json").read_text(encoding="utf-8"))
    assert (entries[0]["status"], entries[0]["current_round"]) == ("round_1_complete", 1)
    assert "## Round 1 complete" in log_of(chair, debate_id)
    assert "- All 3 personas submitted reports." in log_of(chair, debate_id)


def test_a_wildcard_added_mid_round_does_not_block_round_end(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    chair.seat(debate_id, "wildcard")
    for slug, (stance, level) in VOTES_1.items():
        chair.submit(debate_id, slug, 1, stance, level)
    ended = cli("round", "end", debate_id, "1")
    assert ended.code == 0, ended.err
    # From the next round on the wildcard sits like everyone else.
    chair.ok("round", "start", debate_id, "2")
    for slug, (stance, level) in VOTES_1.items():
        chair.submit(debate_id, slug, 2, stance, level)
    refused(cli("round", "end", debate_id, "2"), "wildcard")
    chair.submit(debate_id, "wildcard", 2, "B", 90)
    assert cli("round", "end", debate_id, "2").code == 0


# synthesize, complete, promote


def test_synthesize_needs_the_last_started_round_complete(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    refused(cli("synthesize", debate_id), "run at least one round")
    chair.ok("round", "start", debate_id, "1")
    refused(cli("synthesize", debate_id), f"round end {debate_id} 1")
    for slug, (stance, level) in VOTES_1.items():
        chair.submit(debate_id, slug, 1, stance, level)
    chair.ok("round", "end", debate_id, "1")
    assert cli("synthesize", debate_id).code == 0
    assert status(chair, debate_id) == ("synthesizing", 1)


def test_complete_needs_a_final_report_with_a_verdict(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    refused(cli("complete", debate_id), f"synthesize {debate_id}")
    chair.play_round(debate_id, 1, VOTES_1)
    chair.ok("synthesize", debate_id)
    before = tree_bytes(chair.root)
    refused(cli("complete", debate_id), "final-report.md", "Verdict")
    assert changed_files(before, tree_bytes(chair.root)) == []
    chair.write_final_report(debate_id, verdict=False)
    before = tree_bytes(chair.root)
    refused(cli("complete", debate_id), "Verdict")
    assert changed_files(before, tree_bytes(chair.root)) == []
    chair.write_final_report(debate_id)
    assert cli("complete", debate_id).code == 0
    assert status(chair, debate_id)[0] == "complete"


def test_complete_needs_the_appendix_too(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.play_round(debate_id, 1, VOTES_1)
    chair.ok("synthesize", debate_id)
    chair.write_final_report(debate_id)
    report = chair.folder(debate_id) / "final-report.md"
    full = report.read_text(encoding="utf-8")
    cut = full[: full.index("## Appendix: per-agent per-round summaries")]
    for text in (cut, cut + "## Appendix: per-agent per-round summaries\n\n"):
        report.write_text(text, encoding="utf-8")
        before = tree_bytes(chair.root)
        code, _out, err = cli("complete", debate_id)
        assert code != 0
        [line] = [line for line in err.strip().split("\n") if line.strip()]
        assert "has no '## Appendix: per-agent per-round summaries' section; add it last" in line
        assert changed_files(before, tree_bytes(chair.root)) == []
        assert status(chair, debate_id)[0] == "synthesizing"
    report.write_text(full, encoding="utf-8")
    assert cli("complete", debate_id).code == 0
    assert status(chair, debate_id)[0] == "complete"


def test_a_verdict_heading_in_any_case_completes(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.play_round(debate_id, 1, VOTES_1)
    chair.ok("synthesize", debate_id)
    chair.write_final_report(debate_id)
    report = chair.folder(debate_id) / "final-report.md"
    report.write_text(report.read_text().replace("## Verdict", "## VERDICT:"), encoding="utf-8")
    assert cli("complete", debate_id).code == 0


def test_promote_needs_a_complete_debate(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.play_round(debate_id, 1, VOTES_1)
    chair.ok("synthesize", debate_id)
    chair.write_final_report(debate_id)
    refused(cli("promote", debate_id), f"complete {debate_id}")
    assert not (chair.root / "knowledge").exists()
    chair.ok("complete", debate_id)
    assert cli("promote", debate_id).code == 0


def test_promote_force_rewrites_but_keeps_the_knowledge_id(chair: Chair, finished: str) -> None:
    doc = next((chair.root / "knowledge").glob("decision-*.md"))
    first, _ = read_frontmatter(doc)
    report = chair.folder(finished) / "final-report.md"
    report.write_text(report.read_text().replace("Confidence: medium", "Confidence: high"))
    chair.ok("promote", finished, "--force")
    again, body = read_frontmatter(doc)
    assert again["id"] == first["id"] and again["created_at"] == first["created_at"]
    assert "Confidence: high" in body


def test_after_completion_the_debate_takes_no_more_submissions(
    chair: Chair, cli: Runner, finished: str
) -> None:
    before = tree_bytes(chair.root)
    for args in (
        [
            "verdict",
            finished,
            "risk-auditor",
            "2",
            "--stance",
            "A",
            "--conviction",
            "1",
            "--headline",
            "late",
        ],
        ["report", "append", finished, "risk-auditor", "--round", "2", "--body", entry()],
        ["inject", finished, "Too late"],
        ["question", finished, "growth-cfo", "Too late?"],
        ["agent", "create", finished, "latecomer", "--body", "Late."],
        ["round", "extend", finished],
        ["round", "start", finished, "3"],
    ):
        result = cli(*args)
        assert result.code in (1, 2), args
        assert "complete" in result.err, (args, result.err)
    assert changed_files(before, tree_bytes(chair.root)) == []


# repeats


REPEATABLE = [
    ["round", "end", "{id}", "2"],
    ["inject", "{id}", "Postgres is already run by the platform team"],
    ["question", "{id}", "growth-cfo", "Steelman option B for this round."],
    ["verdict", "{id}", "user-advocate", "2", "--stance", "B", "--conviction", "40", "--headline", "user-advocate says B in R2", "--concession", "peer point R2"],
    ["report", "append", "{id}", "user-advocate", "--round", "2", "--body", "{entry}"],
    ["agent", "create", "{id}", "risk-auditor", "--model", "sonnet", "--aspects", "cost,risk,latency", "--force", "--body", "You are risk-auditor. You obsess over your aspects and push back hard."],
    ["research", "add", "{id}", "risk-auditor", "failover drills", "--body", "Quarterly."],
]  # fmt: skip


@pytest.mark.parametrize("args", REPEATABLE, ids=lambda a: " ".join(a[:2]))
def test_repeating_a_command_that_took_effect_changes_nothing(
    chair: Chair, cli: Runner, debated: str, args: list[str]
) -> None:
    debate_id = debated
    summary = "user-advocate thinks round 2 points to option B."
    peer = chair.assignment(debate_id, "user-advocate")
    critique = f"### Cross-examination\n- {peer} ignores the cutover window.\n\nScore: 6/10\n"
    argv = [
        a.replace("{id}", debate_id).replace("{entry}", entry(summary) + critique) for a in args
    ]
    first = cli(*argv)
    assert first.code == 0, first.err
    before = tree_bytes(chair.root, live_heartbeat=True)
    again = cli(*argv)
    assert again.code == 0, again.err
    assert changed_files(before, tree_bytes(chair.root, live_heartbeat=True)) == []


@pytest.mark.parametrize("command", ["synthesize", "complete", "promote"])
def test_repeating_a_closing_command_changes_nothing(
    chair: Chair, cli: Runner, debated: str, command: str
) -> None:
    debate_id = debated
    chair.ok("synthesize", debate_id)
    chair.write_final_report(debate_id)
    if command in ("complete", "promote"):
        chair.ok("complete", debate_id)
    if command == "promote":
        chair.ok("promote", debate_id)
    before = tree_bytes(chair.root, live_heartbeat=True)
    again = cli(command, debate_id, "--json")
    assert again.code == 0, again.err
    assert again.json()["changed"] is False
    assert changed_files(before, tree_bytes(chair.root, live_heartbeat=True)) == []


def test_directives_given_to_round_start_land_as_queued_ones_in_one_write(
    chair: Chair, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from dreamcontext_council.actions import interlude
    from dreamcontext_council.actions.rounds import start_round
    from dreamcontext_council.folder.paths import Root

    root = Root(chair.root)
    votes = {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)}
    directive = "Cross-examine growth-cfo: find the factual errors."
    queued_first, given = chair.new(), chair.new()
    for debate_id in (queued_first, given):
        chair.play_round(debate_id, 1, votes)
    interlude.queue_directive(root, queued_first, "risk-auditor", directive)
    start_round(root, queued_first, 2)
    written: list[str] = []
    real_replace = os.replace

    def recorded(source: str, target: str) -> None:
        written.append(os.fspath(target))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", recorded)

    start_round(root, given, 2, directives={"risk-auditor": directive})

    contexts = [p for p in written if p.endswith("context-and-persona.md")]
    assert len(contexts) == len(set(contexts)) == 3  # each persona's context written once
    for slug in votes:
        one = (chair.root / "council" / queued_first / slug / "context-and-persona.md").read_text()
        two = (chair.root / "council" / given / slug / "context-and-persona.md").read_text()
        assert two == one.replace(queued_first, given)
    from dreamcontext_council.errors import UsageError

    fresh = chair.new()
    with pytest.raises(UsageError, match="No persona nobody"):
        start_round(root, fresh, 1, directives={"nobody": directive})
