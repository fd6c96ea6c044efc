"""The Node tool's reference debate: our views show the same figures as its printed output."""

from __future__ import annotations

import json
import re

import pytest
from debate_story import Reference, Runner, changed_files, tree_bytes

# Rows only we add under the options tally (model diversity, usage, flags, debate measures): the rest of the
# board must be the Node tool's, character for character.
OUR_EXTRA_ROWS = re.compile(r"^│ (MODELS|USAGE|FLAG|FLIPS|NEW|ANCHOR|SOLO) {2,}.*│$")


def node_rows(board: str) -> str:
    return "".join(
        line for line in board.splitlines(keepends=True) if not OUR_EXTRA_ROWS.match(line)
    )


def test_board_plain_is_the_node_board(fixture_root: Reference, ref_cli: Runner) -> None:
    board = ref_cli("board", fixture_root.id, "--plain")
    assert board.code == 0, board.err
    assert node_rows(board.out) == fixture_root.expected_text("board-plain.txt")


def test_board_of_round_one_is_the_node_board(fixture_root: Reference, ref_cli: Runner) -> None:
    board = ref_cli("board", fixture_root.id, "--round", "1", "--plain")
    assert node_rows(board.out) == fixture_root.expected_text("board-round1-plain.txt")


def test_board_json_carries_the_board_figures(fixture_root: Reference, ref_cli: Runner) -> None:
    data = ref_cli("board", fixture_root.id, "--json").json()
    assert (data["round"], data["convergence"], data["leading"], data["delta"]) == (2, 78, "A", 9)
    assert {r["slug"]: (r["stance"], r["conviction"], r["shift"]) for r in data["rows"]} == {
        "growth-cfo": ("A", 70, "="),
        "risk-auditor": ("A", 70, "="),
        "user-advocate": ("B", 40, "↓ 55→40"),
    }
    assert [(t["key"], t["count"], t["conviction"]) for t in data["tally"]] == [
        ("A", 2, 140),
        ("B", 1, 40),
    ]


def test_timeline_is_the_node_timeline(fixture_root: Reference, ref_cli: Runner) -> None:
    assert ref_cli("timeline", fixture_root.id).out == fixture_root.expected_text("timeline.md")


def test_timeline_json_is_the_node_json(fixture_root: Reference, ref_cli: Runner) -> None:
    ours = ref_cli("timeline", fixture_root.id, "--json").json()
    assert ours == json.loads(fixture_root.expected_text("timeline.json"))


@pytest.mark.parametrize("number", [1, 2])
def test_summaries_are_the_node_summaries(
    fixture_root: Reference, ref_cli: Runner, number: int
) -> None:
    ours = ref_cli("summaries", fixture_root.id, str(number)).out
    expected = fixture_root.expected_text(f"summaries-{number}.md")
    # Node's console.log adds one more blank line at the very end; the lines are the same.
    assert ours.rstrip("\n") == expected.rstrip("\n")


def test_show_and_list_carry_the_node_figures(fixture_root: Reference, ref_cli: Runner) -> None:
    shown = ref_cli("show", fixture_root.id).out
    node_show = fixture_root.expected_text("show.txt")
    for line in (
        "topic:     Should we migrate the session store from Redis to Postgres?",
        "status:    complete",
        "round:     2/2",
        "personas:  risk-auditor, growth-cfo, user-advocate",
        "promoted:  knowledge/decision-should-we-migrate-the-session-store-from-redis-to-postgres.md",
        "created:   2026-11-30",
    ):
        assert line in node_show and line in shown, line
    # the round log is shown whole, as the Node tool shows it
    log = (fixture_root.folder / "round-log.md").read_text(encoding="utf-8").rstrip("\n")
    assert log in shown

    listed = ref_cli("list", "--all").out
    node_list = fixture_root.expected_text("list-all.txt")
    assert listed.rstrip("\n") == node_list.rstrip("\n")


def test_show_and_list_json_agree_with_the_folder(fixture_root: Reference, ref_cli: Runner) -> None:
    shown = ref_cli("show", fixture_root.id, "--json").json()
    (listed,) = ref_cli("list", "--all", "--json").json()
    for data in (shown, listed):
        assert data["topic"] == "Should we migrate the session store from Redis to Postgres?"
        assert data["status"] == "complete"
        assert (data["current_round"], data["rounds_planned"]) == (2, 2)
        assert data["promoted_to_knowledge"] == (
            "knowledge/decision-should-we-migrate-the-session-store-from-redis-to-postgres.md"
        )
    assert shown["personas"] == ["risk-auditor", "growth-cfo", "user-advocate"]
    assert [o["key"] for o in shown["options"]] == ["A", "B"]


def test_reading_the_reference_changes_no_file(fixture_root: Reference, ref_cli: Runner) -> None:
    before = tree_bytes(fixture_root.root)
    for args in (
        ["board", fixture_root.id, "--plain"],
        ["timeline", fixture_root.id, "--json"],
        ["summaries", fixture_root.id, "2"],
        ["show", fixture_root.id],
        ["list", "--all"],
        ["agent", "list", fixture_root.id],
        ["research", "list", fixture_root.id, "risk-auditor"],
        ["round-context", fixture_root.id, "growth-cfo"],
    ):
        assert ref_cli(*args).code == 0, args
    assert changed_files(before, tree_bytes(fixture_root.root)) == []


def test_reference_reads_through_a_real_process(
    fixture_root: Reference, ref_council: Runner
) -> None:
    board = ref_council("board", fixture_root.id, "--plain")
    assert board.code == 0, board.err
    assert node_rows(board.out) == fixture_root.expected_text("board-plain.txt")


def test_research_of_the_reference_lists(fixture_root: Reference, ref_cli: Runner) -> None:
    notes = ref_cli("research", "list", fixture_root.id, "risk-auditor", "--json").json()
    assert notes == [
        {
            "slug": "postgres-write-throughput",
            "topic": "postgres write throughput",
            "added_at": "2026-11-30",
        }
    ]
