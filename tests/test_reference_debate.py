"""The Node tool's reference debate: our views show the same figures as its printed output."""

from __future__ import annotations

import json
import re

import pytest
from debate_story import Reference, Runner, changed_files, entry, tree_bytes
from starlette.testclient import TestClient

from dreamcontext_council.council_mcp.reading import debate_file_uris, read_debate_file
from dreamcontext_council.dashboard import create_app
from dreamcontext_council.folder.paths import Root

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
    # the round log, which the Node tool always printed, is shown whole with --log
    log = (fixture_root.folder / "round-log.md").read_text(encoding="utf-8").rstrip("\n")
    assert log not in shown and "round log: 4 entries (pass --log to read it)" in shown
    assert log in ref_cli("show", fixture_root.id, "--log").out

    # Node's list put a debate on two lines of up to 100 columns; ours keeps its figures
    # (status, round, day, topic, promoted) within 80 and adds the verdict.
    node_list = fixture_root.expected_text("list-all.txt")
    assert "complete" in node_list and "round 2/2  updated 2026-11-30" in node_list
    for mode in ("--all", None):
        listed = ref_cli("list", *([mode] if mode else [])).out
        assert listed.split("\n")[3:6] == [
            f"  {fixture_root.id}  complete · round 2/2 · 2026-11-30 · promoted",
            "    Should we migrate the session store from Redis to Postgres?",
            "    verdict: Migrate now (A) · medium",
        ]


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


# -- ids the Node tool writes: nanoid's alphabet, `_` and `-` included ------------------------

NODE_ID = "council_-9pQ_r-M"  # `_` and `-`, one right after the prefix


def renamed(reference: Reference, new_id: str) -> Reference:
    """The reference debate as the Node tool would have written it under `new_id`."""
    for tree in (reference.root, reference.expected):
        for path in sorted(p for p in tree.rglob("*") if p.is_file()):
            text = path.read_text(encoding="utf-8")
            if reference.id in text:
                path.write_text(text.replace(reference.id, new_id), encoding="utf-8")
    reference.folder.rename(reference.root / "council" / new_id)
    return Reference(reference.root, reference.expected, new_id)


def test_a_node_id_with_underscores_and_dashes_is_read_like_any_other(
    fixture_root: Reference, ref_cli: Runner, ref_council: Runner
) -> None:
    node = renamed(fixture_root, NODE_ID)
    before = tree_bytes(node.root)
    board = ref_council("board", NODE_ID, "--plain")  # a real argv: no `--` needed
    assert board.code == 0, board.err
    assert node_rows(board.out) == node.expected_text("board-plain.txt")
    assert ref_cli("timeline", NODE_ID).out == node.expected_text("timeline.md")
    assert ref_cli("timeline", NODE_ID, "--json").json() == json.loads(
        node.expected_text("timeline.json")
    )
    assert ref_cli("summaries", NODE_ID, "1").out.rstrip("\n") == node.expected_text(
        "summaries-1.md"
    ).rstrip("\n")
    assert ref_cli("show", NODE_ID, "--json").json()["id"] == NODE_ID
    assert [d["id"] for d in ref_cli("list", "--all", "--json").json()] == [NODE_ID]
    for args in (
        ["round-context", NODE_ID, "growth-cfo"],
        ["agent", "list", NODE_ID],
        ["research", "list", NODE_ID, "risk-auditor"],
        ["export", NODE_ID, "--format", "html", "-o", "-"],
        ["doctor", NODE_ID],
    ):
        done = ref_cli(*args)
        assert done.code == 0, (args, done.err)
    root = Root(node.root)
    with TestClient(create_app(root)) as client:
        assert f'href="/d/{NODE_ID}"' in client.get("/").text
        for path in (f"/d/{NODE_ID}", f"/d/{NODE_ID}/entry/growth-cfo/2"):
            assert client.get(path).status_code == 200, path
    assert f"council://{NODE_ID}/debate.md" in debate_file_uris(root, NODE_ID)
    assert f"id: {NODE_ID}" in read_debate_file(root, NODE_ID, "debate.md")
    assert changed_files(before, tree_bytes(node.root)) == []


def test_a_node_debate_with_such_an_id_goes_on_through_every_command(
    fixture_root: Reference, ref_cli: Runner
) -> None:
    node = renamed(fixture_root, NODE_ID)
    # The Node tool's debate one step earlier: round 2 complete, a third round planned.
    debate_md = node.folder / "debate.md"
    debate_md.write_text(
        debate_md.read_text(encoding="utf-8")
        .replace("status: complete", "status: round_2_complete")
        .replace("rounds_planned: 2", "rounds_planned: 3"),
        encoding="utf-8",
    )
    (node.folder / "final-report.md").unlink()

    def ok(*args: str, input: str | None = None) -> str:
        done = ref_cli(*args, input=input)
        assert done.code == 0, (args, done.err)
        return done.out

    ok("round", "start", NODE_ID, "3")
    ok("inject", NODE_ID, "Postgres is already run by the platform team.")
    assert "Postgres is already run" in ok("round-context", NODE_ID, "risk-auditor")
    for slug in ("risk-auditor", "growth-cfo", "user-advocate"):
        ok("verdict", NODE_ID, slug, "3", "--stance", "A", "--conviction", "80", "--headline", "A.")
        ok("report", "append", NODE_ID, slug, "--round", "3", input=entry(f"{slug} agrees."))
    ok("research", "add", NODE_ID, "growth-cfo", "a topic", "--body", "A note.")
    ok("round", "end", NODE_ID, "3")
    shown = ref_cli("show", NODE_ID, "--json").json()
    assert (shown["status"], shown["current_round"]) == ("round_3_complete", 3)
    assert ref_cli("board", NODE_ID, "--json").json()["round"] == 3
    assert ref_cli("doctor", NODE_ID).code == 0
    assert [d["id"] for d in ref_cli("list", "--all", "--json").json()] == [NODE_ID]
