"""The terminal board fits the terminal: whole box lines at any width, the round in words."""

from __future__ import annotations

import pytest
from debate_story import Chair, Runner
from rich.cells import cell_len

WIDEST = 120  # a wider terminal gets a board this wide
LONG_HEADLINE = (
    "Moving the session store to Postgres halves the pager load, but only if the cutover "
    "keeps a rollback path for a whole quarter and the read replicas are warmed first"
)


def played(chair: Chair, cli: Runner) -> str:
    """A debate two rounds long with round 1 answered, one headline long, one option long."""
    debate_id = chair.new(
        options="A=Migrate now to the managed Postgres cluster the platform team runs,"
        "B=Stay on Redis and buy the bigger instance for another year"
    )
    chair.play_round(
        debate_id,
        1,
        {"risk-auditor": ("A", 60), "growth-cfo": ("A", 70), "user-advocate": ("B", 55)},
    )
    # The same round again, with a headline no row can hold on one line.
    chair.ok("round", "start", debate_id, "2")
    chair.submit(debate_id, "risk-auditor", 2, "A", 65)
    chair.ok(
        "verdict",
        debate_id,
        "growth-cfo",
        "2",
        "--stance",
        "A",
        "--conviction",
        "75",
        "--headline",
        LONG_HEADLINE,
        "--concession",
        "peer point R2",
    )
    return debate_id


def assert_whole_frame(board: str, width: int) -> list[str]:
    lines = board.rstrip("\n").split("\n")
    assert all(cell_len(line) == width for line in lines), "\n".join(lines)
    top, *body, bottom = lines
    assert top.startswith("╭") and top.endswith("╮")
    assert bottom == "╰" + "─" * (width - 2) + "╯"
    assert all(line.startswith("│ ") and line.endswith(" │") for line in body)
    return body


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_the_board_fits_the_terminal_with_its_box_whole(
    chair: Chair, cli: Runner, columns: int
) -> None:
    debate_id = played(chair, cli)

    board = cli("board", debate_id, "--plain", env={"COLUMNS": str(columns)})

    assert board.code == 0, board.err
    body = assert_whole_frame(board.out, min(columns, WIDEST))
    text = " ".join(" ".join(line.strip("│ ").split()) for line in body)
    assert "risk-auditor" in text and "user-advocate" in text
    assert "Stay on Redis and buy the bigger instance for another year (0 · 0)" in text
    assert LONG_HEADLINE[:40] in text  # wrapped inside its cell, not cut at the frame
    # Below 80 columns the conviction bars make room for the words.
    rows = [line for line in body if "⬥" in line]
    assert len(rows) == 2
    assert all(("▓" in row) == (columns >= 80) for row in rows)
    assert "round 2 of 2: running" in board.out.split("\n")[0]


def test_a_pipe_gets_the_default_width(chair: Chair, cli: Runner) -> None:
    debate_id = played(chair, cli)

    board = cli("board", debate_id, "--plain")

    assert_whole_frame(board.out, 94)


def test_a_round_with_all_its_answers_says_so_in_words(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    chair.play_round(
        debate_id,
        1,
        {"risk-auditor": ("A", 60), "growth-cfo": ("A", 70), "user-advocate": ("B", 55)},
    )

    top = cli("board", debate_id, "--plain").out.split("\n")[0]

    assert "round 1 of 2: all answers in" in top
    assert "complete" not in top
