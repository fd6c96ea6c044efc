"""Every orchestrator and persona command of cli.md, end to end on a fresh folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from debate_story import LIVE_FILE, OPTIONS, TOPIC, Chair, Result, Runner, entry

ID = re.compile(r"council_[A-Za-z0-9]{8}")

# Every command in the Orchestrator and Persona tables of cli.md.
COMMANDS = [
    ["new"],
    ["create"],
    ["agent", "create"],
    ["agent", "list"],
    ["round", "start"],
    ["round", "end"],
    ["round", "extend"],
    ["summaries"],
    ["board"],
    ["timeline"],
    ["inject"],
    ["question"],
    ["synthesize"],
    ["complete"],
    ["promote"],
    ["list"],
    ["show"],
    ["live", "clear"],
    ["round-context"],
    ["verdict"],
    ["report", "append"],
    ["check"],
    ["research", "add"],
    ["research", "list"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help_with_an_example(cli: Runner, command: list[str]) -> None:
    result = cli(*command, "--help")
    assert result.code == 0, result.err
    assert "Example" in result.out
    assert "dreamcontext council" in result.out


def test_a_whole_round_through_real_processes(council: Runner, root_path: Path) -> None:
    made = council("new", TOPIC, "--options", OPTIONS, "--rounds", "1")
    assert made.code == 0, made.err
    debate_id = made.last_line
    assert ID.fullmatch(debate_id), made.out
    assert "Created" in made.out  # no root existed: `new` says it made one

    seated = council("agent", "create", debate_id, "risk-auditor", input="You are risk-auditor.\n")
    assert seated.code == 0, seated.err
    assert council("round", "start", debate_id, "1").code == 0
    voted = council(
        "verdict", debate_id, "risk-auditor", "1",
        "--stance", "A", "--conviction", "60", "--headline", "Migrate, with a rollback plan",
    )  # fmt: skip
    assert voted.code == 0, voted.err
    reported = council("report", "append", debate_id, "risk-auditor", input=entry("Migrate."))
    assert reported.code == 0, reported.err
    assert reported.err == ""  # the verdict came first: no warning
    assert council("round", "end", debate_id, "1").code == 0

    shown = council("show", debate_id, "--json")
    assert shown.code == 0, shown.err
    assert shown.json()["status"] == "round_1_complete"
    assert (root_path / "council" / debate_id / "risk-auditor" / "report.md").is_file()


def test_create_is_the_node_name_for_new(cli: Runner, root_path: Path) -> None:
    made = cli("create", "Is create an alias?")
    assert made.code == 0, made.err
    assert ID.fullmatch(made.last_line)
    assert (root_path / "council" / made.last_line / "debate.md").is_file()


def test_new_prints_the_id_alone_on_the_last_line_and_json_on_request(cli: Runner) -> None:
    plain = cli("new", TOPIC, "--options", OPTIONS, "--personas", "engineering")
    assert plain.code == 0, plain.err
    assert ID.fullmatch(plain.last_line)
    data = cli("new", TOPIC, "--json").json()
    assert ID.fullmatch(data["id"]) and data["topic"] == TOPIC
    listed = cli("agent", "list", plain.last_line, "--json").json()
    assert [row["slug"] for row in listed] == [
        "risk-auditor",
        "pragmatist",
        "user-advocate",
        "architect",
    ]


def test_orchestrator_and_persona_commands_walk_a_debate_to_knowledge(
    chair: Chair, cli: Runner, root_path: Path
) -> None:
    debate_id = chair.new()
    roster = cli("agent", "list", debate_id, "--json").json()
    assert [r["slug"] for r in roster] == ["risk-auditor", "growth-cfo", "user-advocate"]
    assert roster[0]["model"] == "sonnet" and roster[0]["aspects"] == ["cost", "risk", "latency"]
    assert "risk-auditor" in cli("agent", "list", debate_id).out

    started = cli("round", "start", debate_id, "1", "--json").json()
    assert started["changed"] is True and started["round"] == 1
    for slug, (stance, level) in {
        "risk-auditor": ("A", 60),
        "growth-cfo": ("A", 60),
        "user-advocate": ("B", 55),
    }.items():
        voted = cli(
            "verdict",
            debate_id,
            slug,
            "1",
            "--stance",
            stance,
            "--conviction",
            str(level),
            "--headline",
            "h",
            "--json",
        )
        assert voted.json()["stance"] == stance
    # report append: stdin for one persona, --body for the others
    assert cli("report", "append", debate_id, "risk-auditor", input=entry("from stdin")).code == 0
    assert cli("report", "append", debate_id, "growth-cfo", "--body", entry("from body")).code == 0
    appended = cli(
        "report",
        "append",
        debate_id,
        "user-advocate",
        "--round",
        "1",
        "--body",
        entry("third"),
        "--json",
    )
    assert appended.json() == {"round": 1, "replaced": False, "warnings": [], "verdict": None}

    summaries = cli("summaries", debate_id, "1")
    assert "from stdin" in summaries.out and "stance=B conviction=55 (·)" in summaries.out
    assert cli("summaries", debate_id, "1", "--json").json()[1]["summary"] == "from body"
    assert cli("round", "end", debate_id, "1", "--json").json()["changed"] is True

    assert cli("inject", debate_id, "Postgres is already run by the platform team").code == 0
    queued = cli(
        "question", debate_id, "growth-cfo", "What", "does", "it", "cost?", "--json"
    ).json()
    assert queued == {"debate": debate_id, "persona": "growth-cfo", "round": 2, "added": True}
    extended = cli("round", "extend", debate_id, "--by", "1", "--json").json()
    assert extended["round"] == 3

    chair.play_round(
        debate_id,
        2,
        {"risk-auditor": ("A", 70), "growth-cfo": ("B", 70), "user-advocate": ("B", 40)},
    )
    board = cli("board", debate_id, "--round", "2", "--json").json()
    assert board["round"] == 2 and board["leading"] == "B" and board["convergence"] == 61
    assert {r["slug"]: r["shift"] for r in board["rows"]} == {
        "growth-cfo": "↑ A→B",
        "risk-auditor": "=",
        "user-advocate": "↓ 55→40",
    }
    assert (
        "│ OPTIONS  A Migrate now (1 · 70)   B Stay on Redis (2 · 110)"
        in cli("board", debate_id).out
    )
    timeline = cli("timeline", debate_id)
    assert "| growth-cfo | A 60 | B 70 |" in timeline.out
    assert cli("timeline", debate_id, "--json").json()["rounds"][1]["leading"] == "B"

    noted = cli(
        "research",
        "add",
        debate_id,
        "risk-auditor",
        "postgres",
        "write",
        "throughput",
        "--body",
        "40k writes/s.",
        "--json",
    ).json()
    assert noted["slug"] == "postgres-write-throughput"
    assert (
        cli(
            "research", "add", debate_id, "risk-auditor", "failover drills", input="Quarterly."
        ).code
        == 0
    )
    notes = cli("research", "list", debate_id, "risk-auditor", "--json").json()
    assert [n["slug"] for n in notes] == ["failover-drills", "postgres-write-throughput"]
    assert "postgres write throughput" in cli("research", "list", debate_id, "risk-auditor").out

    manifest = cli("synthesize", debate_id, "--json").json()
    assert manifest["changed"] is True
    assert "risk-auditor/researches/postgres-write-throughput.md" in manifest["files"]
    assert {"debate.md", "verdicts.json", "round-log.md", "growth-cfo/report.md"} <= set(
        manifest["files"]
    )
    chair.write_final_report(debate_id)
    assert cli("complete", debate_id, "--json").json()["changed"] is True
    assert cli("list", "--unpromoted", "--json").json()[0]["id"] == debate_id
    assert cli("list", "--active", "--json").json() == []  # nothing is in progress any more
    [recent] = cli("list", "--json").json()  # the recent debates: this one, with its verdict
    assert recent["id"] == debate_id and recent["verdict"]["sentence"]
    promoted = cli("promote", debate_id, "--json").json()
    assert (
        promoted["path"]
        == "knowledge/decision-should-we-migrate-the-session-store-from-redis-to-postgres.md"
    )
    assert (root_path / promoted["path"]).is_file()
    assert cli("list", "--unpromoted", "--json").json() == []
    everything = cli("list", "--all")
    assert f"  {debate_id}  complete · round 2/3 · " in everything.out
    assert "· promoted" in everything.out

    shown = cli("show", debate_id, "--log")
    assert "status:    complete" in shown.out and "round:     2/3" in shown.out
    assert "## Round 2 complete" in shown.out

    assert (root_path / LIVE_FILE).is_file()
    assert cli("live", "clear").out.strip() == "Live file removed."
    assert not (root_path / LIVE_FILE).exists()
    assert cli("live", "clear").out.strip() == "No live file."


@pytest.mark.parametrize(
    "args",
    [
        ["agent", "list", "{id}"],
        ["summaries", "{id}", "1"],
        ["board", "{id}"],
        ["board", "{id}", "--round", "1"],
        ["timeline", "{id}"],
        ["list"],
        ["list", "--all"],
        ["list", "--unpromoted"],
        ["show", "{id}"],
        ["research", "list", "{id}", "risk-auditor"],
        ["synthesize", "{id}"],
        ["round", "extend", "{id}"],
        ["inject", "{id}", "A fact."],
        ["question", "{id}", "growth-cfo", "Why?"],
    ],
    ids=lambda a: " ".join(a),
)
def test_json_output_parses(chair: Chair, cli: Runner, args: list[str]) -> None:
    debate_id = chair.new()
    chair.play_round(
        debate_id,
        1,
        {"risk-auditor": ("A", 60), "growth-cfo": ("B", 50), "user-advocate": ("B", 40)},
    )
    result: Result = cli(*[a.replace("{id}", debate_id) for a in args], "--json")
    assert result.code == 0, result.err
    json.loads(result.out)


def test_report_append_warns_when_no_verdict_was_recorded(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    result = cli("report", "append", debate_id, "risk-auditor", input=entry())
    assert result.code == 0
    assert "No verdict recorded for risk-auditor in round 1" in result.err


VERDICT_BLOCK = """
```verdict
stance: A
conviction: 72
headline: Migrate, with a rehearsed rollback
concession: growth-cfo is right that the cutover costs a weekend
```
"""


def test_report_append_records_the_verdict_block_an_answer_ends_with(
    chair: Chair, cli: Runner
) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")

    result = cli("report", "append", debate_id, "risk-auditor", input=entry() + VERDICT_BLOCK)

    assert result.code == 0, result.err
    assert result.err == ""  # the verdict came with the entry: no warning
    assert "Verdict recorded: A 72" in result.out
    folder = chair.folder(debate_id)
    recorded = json.loads((folder / "verdicts.json").read_text("utf-8"))["rounds"]["1"]
    assert recorded["risk-auditor"]["stance"] == "A"
    assert recorded["risk-auditor"]["conviction"] == 72
    assert recorded["risk-auditor"]["headline"] == "Migrate, with a rehearsed rollback"
    assert recorded["risk-auditor"]["concession"].startswith("growth-cfo is right")
    report = (folder / "risk-auditor" / "report.md").read_text("utf-8")
    assert "### Executive Summary" in report
    assert "```verdict" not in report and "conviction: 72" not in report


@pytest.mark.parametrize(
    ("block", "named"),
    [
        (VERDICT_BLOCK.replace("stance: A", "stance: Z"), "Stance 'Z'"),
        (VERDICT_BLOCK.replace("headline: Migrate, with a rehearsed rollback\n", ""), "headline"),
        (VERDICT_BLOCK.replace("conviction: 72", "conviction: 140"), "onviction"),
    ],
    ids=["unknown stance", "no headline", "conviction out of range"],
)
def test_a_broken_verdict_block_is_refused_in_one_line_with_nothing_recorded(
    chair: Chair, cli: Runner, block: str, named: str
) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    folder = chair.folder(debate_id)
    verdicts_before = (folder / "verdicts.json").read_bytes()

    result = cli("report", "append", debate_id, "risk-auditor", input=entry() + block)

    assert result.code != 0
    assert result.err.strip().count("\n") == 0, result.err
    assert named in result.err and "report append" in result.err
    assert (folder / "verdicts.json").read_bytes() == verdicts_before
    assert not (folder / "risk-auditor" / "report.md").exists() or "Executive Summary" not in (
        folder / "risk-auditor" / "report.md"
    ).read_text("utf-8")


def _two_rounds_of_three(chair: Chair) -> str:
    debate_id = chair.new(rounds=3)
    for number, votes in (
        (1, {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)}),
        (2, {"risk-auditor": ("A", 70), "growth-cfo": ("A", 65), "user-advocate": ("B", 50)}),
    ):
        chair.play_round(debate_id, number, votes)
    return debate_id


def test_check_answer_is_recorded_in_the_round_log_as_run_records_its_check(
    chair: Chair, cli: Runner
) -> None:
    debate_id = _two_rounds_of_three(chair)

    recorded = cli(
        "check", debate_id, "2", "--answer", "converged",
        "--reason", "both sides answered\x07 every critique\n",
    )  # fmt: skip
    assert recorded.code != 0 and "control characters" in recorded.err  # nothing recorded
    recorded = cli(
        "check", debate_id, "2", "--answer", "converged", "--reason", "both sides answered\n all"
    )

    assert recorded.code == 0, recorded.err
    assert "CONVERGED → synthesis" in recorded.out and f"synthesize {debate_id}" in recorded.out
    log = (chair.folder(debate_id) / "round-log.md").read_text("utf-8")
    assert log.count("## Convergence check after round 2") == 1
    check = log.split("## Convergence check after round 2 — CONVERGED\n", 1)[1]
    assert check.split("\n")[:4] == [
        "- Numeric convergence: 73% → A",
        "- Answered by: the orchestrator (`council check --answer`)",
        "- Reason: both sides answered all",
        "- Decision: synthesis",
    ]
    again = cli("check", debate_id, "2", "--answer", "CONVERGED")
    assert again.code == 0 and "already recorded" in again.out
    other = cli("check", debate_id, "2", "--answer", "CONTINUE")
    assert other.code != 0 and other.err.strip().count("\n") == 0
    assert "already recorded as CONVERGED" in other.err
    assert (chair.folder(debate_id) / "round-log.md").read_text("utf-8") == log
    page = cli("check", debate_id, "2")
    assert page.code == 0 and "Recorded already: CONVERGED." in page.out

    # The synthesizer reads the recorded check, not "sent to synthesis without a check".
    chair.ok("synthesize", debate_id)
    record = (chair.folder(debate_id) / "synthesis-input.md").read_text("utf-8")
    ended = record.split("## How the debating ended", 1)[1]
    assert "After round 2: CONVERGED (the personas agree" in ended
    assert "without a check" not in record


def test_check_stop_ends_the_debating_for_the_reason_given(chair: Chair, cli: Runner) -> None:
    debate_id = _two_rounds_of_three(chair)

    recorded = cli("check", debate_id, "2", "--answer", "stop", "--reason", "the budget is spent")

    assert recorded.code == 0, recorded.err
    assert "STOP → synthesis" in recorded.out
    log = (chair.folder(debate_id) / "round-log.md").read_text("utf-8")
    assert "- Reason: the budget is spent\n- Decision: synthesis" in log
    chair.ok("synthesize", debate_id)
    record = (chair.folder(debate_id) / "synthesis-input.md").read_text("utf-8")
    ended = record.split("## How the debating ended", 1)[1]
    assert "After round 2: STOP (the orchestrator ended the debating" in ended


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["1"], "after round 2"),
        (["3"], "round_2_complete"),
        (["2", "--answer", "MAYBE"], "MAYBE"),
        (["2", "--reason", "why"], "--reason goes with --answer"),
    ],
    ids=["round 1", "a round not closed", "not a check word", "reason alone"],
)
def test_check_refuses_what_run_would_not_ask_in_one_line(
    chair: Chair, cli: Runner, args: list[str], named: str
) -> None:
    debate_id = _two_rounds_of_three(chair)
    log = (chair.folder(debate_id) / "round-log.md").read_bytes()

    result = cli("check", debate_id, *args)

    assert result.code != 0
    assert named in result.err, result.err
    assert (chair.folder(debate_id) / "round-log.md").read_bytes() == log


def test_two_checks_answered_at_once_record_one(chair: Chair, council: Runner) -> None:
    debate_id = _two_rounds_of_three(chair)  # in-process; the two checks are real processes
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        results = list(
            pool.map(
                lambda answer: council("check", debate_id, "2", "--answer", answer),
                ["CONTINUE", "DEADLOCKED"],
            )
        )

    assert sorted(r.code == 0 for r in results) == [False, True]
    log = (chair.folder(debate_id) / "round-log.md").read_text("utf-8")
    assert log.count("## Convergence check after round 2") == 1


def test_round_context_has_everything_a_persona_needs(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.play_round(
        debate_id,
        1,
        {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)},
    )
    chair.ok("inject", debate_id, "Postgres is already run by the platform team")
    chair.ok("question", debate_id, "growth-cfo", "What does the migration cost in engineer-weeks?")
    chair.ok("round", "start", debate_id, "2")
    page = cli("round-context", debate_id, "growth-cfo").out
    for expected in (
        TOPIC,
        "Round: 2 of 2",
        "You are growth-cfo.",
        "## What the other personas said in round 1",
        "risk-auditor thinks round 1 points to option A.",
        "- **[Interlude R1]** Postgres is already run by the platform team",
        "## Facts new since round 1",
        "- **A**: Migrate now",
        f"## Your cross-examination assignment: {chair.assignment(debate_id, 'growth-cfo')}",
        "## Your round 1 answer",
        "growth-cfo thinks round 1 points to option A.",
        "- What does the migration cost in engineer-weeks?",
        f"dreamcontext council verdict {debate_id} growth-cfo 2",
    ):
        assert expected in page, expected


def test_reading_a_debate_before_any_verdict_makes_sense(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new(personas=("risk-auditor", "growth-cfo"))
    board = cli("board", debate_id, "--plain").out
    assert "round 0 of 2: not started" in board
    assert "⬦ growth-cfo    — no verdict yet" in board
    assert "OPTIONS  A Migrate now (0 · 0)   B Stay on Redis (0 · 0)" in board
    chair.ok("round", "start", debate_id, "1")
    assert "round 1 of 2: running" in cli("board", debate_id, "--plain").out
    assert "round 2 of 2: not started" in cli("board", debate_id, "--round", "2", "--plain").out

    assert cli("timeline", debate_id).out == (
        "| Persona |\n| --- |\n| risk-auditor |\n| growth-cfo |\n| _convergence_ |\n"
    )
    assert cli("timeline", debate_id, "--json").json()["rounds"] == []
    summaries = cli("summaries", debate_id, "1").out
    assert "_No report for round 1._" in summaries and "no verdict recorded" in summaries


def test_a_windows_report_on_stdin_is_read(chair: Chair, council: Runner) -> None:
    debate_id = chair.new(personas=("risk-auditor",))
    chair.ok("round", "start", debate_id, "1")
    windows = "\ufeff" + entry("Written on Windows.").replace("\n", "\r\n")
    result = council("report", "append", debate_id, "risk-auditor", input=windows.encode("utf-8"))
    assert result.code == 0, result.err
    report = (chair.folder(debate_id) / "risk-auditor" / "report.md").read_bytes()
    assert b"\r" not in report and "\ufeff".encode() not in report
    summaries = chair.ok("summaries", debate_id, "1", "--json")
    assert json.loads(summaries)[0]["summary"] == "Written on Windows."


def test_usage_errors_point_at_the_commands_own_help(council: Runner) -> None:
    missing = council("run", "--topic")
    assert missing.code == 2
    assert missing.err.strip() == (
        "Error: Option '--topic' requires an argument (see `dreamcontext council run --help`)."
    )
    unknown = council("list", "--bogus")
    assert unknown.err.strip() == (
        "Error: No such option '--bogus' (see `dreamcontext council list --help`)."
    )
    alone = council()
    assert alone.err.startswith("Usage: dreamcontext council [OPTIONS] COMMAND")
    assert alone.err.rstrip().splitlines()[-1].split()[0] == "watch"  # the help, as it ends


def test_an_empty_topic_is_called_empty(council: Runner, root_path: Path) -> None:
    for topic in ("", "   "):
        result = council("run", "--topic", topic)
        assert result.code == 2
        [line] = result.err.strip().splitlines()
        assert "empty" in line, line
        assert "not both" not in line
    assert not root_path.exists()


def test_complete_refuses_a_malformed_claims_block_with_nothing_changed(
    chair: Chair, cli: Runner
) -> None:
    debate_id = chair.new(rounds=1)
    chair.play_round(
        debate_id,
        1,
        {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)},
    )
    chair.ok("synthesize", debate_id)
    report = chair.folder(debate_id) / "final-report.md"
    report.write_text(
        "## Verdict\n\nMigrate (A). Confidence: medium.\n\n"
        "## Appendix: per-agent per-round summaries\n\n### risk-auditor — Round 1\nA.\n\n"
        '```claims\n[{"claim": "x", "proposer": "nobody-here", "round": 1}]\n```\n',
        encoding="utf-8",
    )
    before = report.read_bytes()

    refused = cli("complete", debate_id)

    assert refused.code != 0 and refused.err.strip().count("\n") == 0
    assert "claims block is malformed" in refused.err
    assert report.read_bytes() == before
    assert not (chair.folder(debate_id) / "claims.json").exists()
    assert "status: synthesizing" in (chair.folder(debate_id) / "debate.md").read_text("utf-8")
