"""The pre-flight guard through `council run`: it stops before the first call, spending nothing."""

from __future__ import annotations

from pathlib import Path

from stub_server import StubServer

from .conftest import STUB_ENV, Council, calls, stub_args

PLACEHOLDER = "Review the session store: <paste code here>"
REFERENCE = "Is this design safe to run on Friday?"


def test_a_placeholder_stops_run_before_anything_exists(
    council: Council, stub: StubServer, small_roster: str
) -> None:
    result = council(
        "run", "--topic", PLACEHOLDER, "--personas", small_roster, *stub_args(stub), env=STUB_ENV
    )

    assert result.code == 2
    assert "'<paste code here>'" in result.err
    assert "--yes" in result.err
    assert "Nothing was called or spent." in result.err
    assert stub.requests == []
    assert not council.root.exists()  # no root, no debate folder, no usage.jsonl


def test_the_readme_placeholder_topic_stops_run(
    council: Council, stub: StubServer, small_roster: str
) -> None:
    result = council(
        "run", "--topic", "…", "--personas", small_roster, *stub_args(stub), env=STUB_ENV
    )

    assert result.code == 2
    assert "no question, only a gap to fill in: '…'" in result.err
    assert stub.requests == []
    assert not council.root.exists()


def test_a_reference_with_nothing_attached_stops_and_leaves_the_root_as_it_was(
    council: Council, stub: StubServer, small_roster: str
) -> None:
    council.new("An earlier debate?")
    before = council.tree()

    result = council(
        "run", "--topic", REFERENCE, "--personas", small_roster, *stub_args(stub), env=STUB_ENV
    )

    assert result.code == 2
    assert "it refers to 'this design' but nothing is attached" in result.err
    assert "--attach FILE" in result.err
    assert stub.requests == []
    assert council.tree() == before


def test_yes_overrides_the_guard(council: Council, small_roster: str) -> None:
    result = council(
        "run", "--topic", PLACEHOLDER, "--personas", small_roster, "--rounds", "1", "--yes"
    )

    assert result.code == 0, result.err
    debate_id = result.last_line
    assert council.meta(debate_id)["status"] == "complete"
    assert council.usage(debate_id)


def test_an_attachment_answers_the_reference(
    council: Council, stub: StubServer, small_roster: str, tmp_path: Path
) -> None:
    design = tmp_path / "design.md"
    design.write_text("# Session store\n\nWrites go to Postgres, reads to Redis.\n")

    result = council(
        "run", "--topic", "Is this design safe?", "--attach", str(design),
        "--personas", small_roster, "--rounds", "1", *stub_args(stub), env=STUB_ENV,
    )  # fmt: skip

    assert result.code == 0, result.err
    assert council.meta(result.last_line)["status"] == "complete"
    assert stub.requests


def test_an_ordinary_question_with_brackets_runs(council: Council, small_roster: str) -> None:
    result = council(
        "run", "--topic", "Should we use [] or {} for empty literals in our Python style guide?",
        "--personas", small_roster, "--rounds", "1",
    )  # fmt: skip

    assert result.code == 0, result.err


def test_an_existing_debate_is_checked_before_its_first_call(
    council: Council, stub: StubServer, small_roster: str
) -> None:
    debate_id = council.new(REFERENCE, "--personas", small_roster)
    before = council.tree()

    result = council("run", debate_id, *stub_args(stub), env=STUB_ENV)

    assert result.code == 2
    assert "it refers to 'this design'" in result.err
    assert f"{debate_id} was created with this question" in result.err
    assert stub.requests == []
    assert council.tree() == before
    assert council.usage(debate_id) == []

    forced = council("run", debate_id, "--yes", *stub_args(stub), env=STUB_ENV)

    assert forced.code == 0, forced.err
    assert council.meta(debate_id)["status"] == "complete"
    assert {task.get("persona") for task, _ in calls(stub)} >= {"risk-auditor", "platform-lead"}


def test_a_debate_under_way_is_resumed_without_asking_again(
    council: Council, small_roster: str
) -> None:
    started = council(
        "run", "--topic", REFERENCE, "--personas", small_roster, "--rounds", "2",
        "--max-calls", "2", "--yes",
    )  # fmt: skip
    debate_id = started.last_line
    assert council.meta(debate_id)["status"] != "complete", started.err

    resumed = council("run", debate_id, "--max-calls", "100")  # the cap of 2 is remembered

    assert resumed.code == 0, resumed.err
    assert council.meta(debate_id)["status"] == "complete"


def test_attach_goes_with_topic_only(council: Council, small_roster: str, tmp_path: Path) -> None:
    debate_id = council.new("Should we migrate?", "--personas", small_roster)
    before = council.tree()

    result = council("run", debate_id, "--attach", str(tmp_path / "missing.md"))

    assert result.code == 2
    assert "--attach goes with --topic" in result.err
    assert council.tree() == before
