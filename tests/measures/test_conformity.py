"""Flips, conformity flips, new-content share and anchoring, on folders with known answers."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from debate_story import Chair, Runner, entry

from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.conformity import measure, normalised_sentences
from dreamcontext_council.rules.verdicts import Verdict, Verdicts

SUMMARY = {
    "a": "Alpha backs the migration plan.",
    "b": "Bravo backs the migration plan too.",
    "c": "Charlie prefers to stay put.",
    "d": "Delta wants a third way.",
}
# Four rounds: (stance, summary) per persona; a summary not seen before is new content.
ROUNDS: list[Mapping[str, tuple[str, str]]] = [
    {"a": ("A", SUMMARY["a"]), "b": ("A", SUMMARY["b"]), "c": ("B", SUMMARY["c"]), "d": ("C", SUMMARY["d"])},
    # c follows the majority repeating itself (conformity); d follows it with a new finding.
    {"a": ("A", SUMMARY["a"]), "b": ("A", SUMMARY["b"]), "c": ("A", SUMMARY["c"]), "d": ("A", "Delta found a new benchmark.")},
    # b leaves the majority with a new argument: a flip, not conformity.
    {"a": ("A", SUMMARY["a"]), "b": ("B", "Bravo reads the fresh benchmark now."), "c": ("A", SUMMARY["c"]), "d": ("A", "Delta found a new benchmark.")},
    # Nothing new at all.
    {"a": ("A", SUMMARY["a"]), "b": ("B", "Bravo reads the fresh benchmark now."), "c": ("A", SUMMARY["c"]), "d": ("A", "Delta found a new benchmark.")},
]  # fmt: skip


def play(chair: Chair) -> str:
    debate_id = chair.new(
        personas=("a", "b", "c", "d"), options="A=Migrate,B=Stay,C=Hybrid", rounds=4
    )
    for number, votes in enumerate(ROUNDS, 1):
        chair.ok("round", "start", debate_id, str(number))
        for slug, (stance, summary) in votes.items():
            chair.ok(
                "verdict", debate_id, slug, str(number), "--stance", stance,
                "--conviction", "60", "--headline", f"{slug} backs {stance}",
                "--concession", "none",
            )  # fmt: skip
            body = entry(summary)
            if number == 2:  # the assigned critique; two words and a score add no sentence
                body += "### Cross-examination\n- Unpriced cutover.\n\nScore: 6/10\n"
            chair.ok("report", "append", debate_id, slug, "--round", str(number), input=body)
        chair.ok("round", "end", debate_id, str(number))
    return debate_id


@pytest.fixture
def played(chair: Chair) -> str:
    return play(chair)


def test_board_json_counts_flips_novelty_and_anchoring(played: str, cli: Runner) -> None:
    measures = cli("board", played, "--json").json()["measures"]
    flips = [
        (f["persona"], f["round"], f["before"], f["after"], f["conformity"])
        for f in measures["flips"]
    ]
    assert flips == [
        ("c", 2, "B", "A", True),
        ("d", 2, "C", "A", False),
        ("b", 3, "A", "B", False),
    ]
    assert measures["conformity_flips"] == 1
    assert measures["flippers"] == ["b", "c", "d"]
    # Eight sentences a round: four summaries and four shared by every entry.
    assert [(n["round"], n["sentences"], n["new"]) for n in measures["novelty"]] == [
        (1, 8, 8), (2, 8, 1), (3, 8, 1), (4, 8, 0),
    ]  # fmt: skip
    assert measures["diminishing_rounds"] == [4]
    assert (measures["round1_majority"], measures["final_stance"], measures["anchored"]) == (
        "A",
        "A",
        True,
    )


def test_plain_board_shows_the_measures(played: str, council: Runner) -> None:
    board = council("board", played, "--plain")
    assert board.code == 0, board.err
    rows = [line.strip("│ ").rstrip() for line in board.out.splitlines()]
    assert "FLIPS    3 · conformity 1 · b, c, d" in rows
    assert "NEW      r1 100% · r2 12% · r3 12% · r4 0% · diminishing returns" in rows
    assert "ANCHOR   verdict A = round-1 majority" in rows


def test_a_debate_without_verdicts_shows_no_measures(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new()
    assert cli("board", debate_id, "--json").json()["measures"]["anchored"] is None
    assert "FLIPS" not in cli("board", debate_id, "--plain").out


def votes(**stances: str) -> dict[str, Verdict]:
    return {slug: Verdict(stance, 60, "h") for slug, stance in stances.items()}


SAME = "### Position\nWe keep the same view as before.\n"


def test_a_research_note_named_for_the_first_time_is_not_conformity() -> None:
    verdicts = Verdicts([], {1: votes(a="A", b="A", c="B"), 2: votes(a="A", b="A", c="A")})
    answers = {s: {1: SAME, 2: SAME} for s in "abc"}
    answers["c"][2] = SAME + "As the pgbench note shows.\n"
    research = {"c": ["pgbench", "Postgres write throughput"]}
    assert measure(verdicts, answers).flips[0].conformity is False  # its words are new
    answers["c"][2] = SAME + "pgbench\n"  # too short for a sentence: only the note is new
    assert measure(verdicts, answers).flips[0].conformity is True
    assert measure(verdicts, answers, research).flips[0].conformity is False


def test_with_a_ledger_only_a_claim_proposed_that_round_counts_as_new() -> None:
    verdicts = Verdicts([], {1: votes(a="A", b="A", c="B"), 2: votes(a="A", b="A", c="A")})
    answers = {s: {1: SAME, 2: SAME + f"{s} rewords the same point at length.\n"} for s in "abc"}
    assert measure(verdicts, answers).flips[0].conformity is False
    assert measure(verdicts, answers, ledger=[]).flips[0].conformity is True
    ledger = [{"proposer": "c", "round": 2, "claim": "x"}]
    assert measure(verdicts, answers, ledger=ledger).flips[0].conformity is False


def test_anchoring_is_false_when_the_debate_moved_the_verdict() -> None:
    verdicts = Verdicts([], {1: votes(a="A", b="A", c="B"), 2: votes(a="B", b="B", c="B")})
    measures = measure(verdicts, {})
    assert (measures.round1_majority, measures.final_stance, measures.anchored) == ("A", "B", False)
    assert measures.flips[0].conformity is False  # toward the minority, not the majority


def test_sentences_are_normalised() -> None:
    text = "### Position\nWe **back** A, firmly!  Short one.\n```\n- We back a firmly"
    assert normalised_sentences(text) == {"we back a firmly"}


def test_anchoring_is_shown_only_once_the_debate_has_its_verdict(
    chair: Chair, cli: Runner, root: Root
) -> None:
    debate_id = chair.new(personas=("a", "b", "c", "d"), options="A=Migrate,B=Stay", rounds=2)

    def answer(number: int, votes: Mapping[str, str]) -> None:
        for slug, stance in votes.items():
            chair.ok(
                "verdict", debate_id, slug, str(number), "--stance", stance,
                "--conviction", "60", "--headline", f"{slug} backs {stance}",
            )  # fmt: skip
            body = entry(f"{slug} backs {stance} in round {number}.")
            if number == 2:  # the assigned critique round 2 asks for
                body += "### Cross-examination\n- Unpriced cutover.\n\nScore: 6/10\n"
            chair.ok(
                "report", "append", debate_id, slug, "--round", str(number), input=body
            )  # fmt: skip

    def anchor_shown() -> bool:
        board = cli("board", debate_id, "--json").json()["measures"]
        rows = cli("board", debate_id, "--plain").out
        lines = load_snapshot(root, debate_id).measures().lines()
        assert "FLIPS" in rows and "NEW      r1 100%" in rows  # the other measures show
        shown = [board["anchored"] is not None, "ANCHOR" in rows, "Anchoring" in str(lines)]
        assert len(set(shown)) == 1, shown
        return shown[0]

    chair.ok("round", "start", debate_id, "1")
    answer(1, {"a": "B", "b": "B"})  # two of four answers in round 1
    assert not anchor_shown()
    answer(1, {"c": "A", "d": "B"})
    chair.ok("round", "end", debate_id, "1")
    assert not anchor_shown()  # round 1 of 2 done: still no verdict
    chair.ok("round", "start", debate_id, "2")
    answer(2, {"a": "B", "b": "B", "c": "B", "d": "B"})
    chair.ok("round", "end", debate_id, "2")
    assert anchor_shown()
    assert "ANCHOR   verdict B = round-1 majority" in cli("board", debate_id, "--plain").out


def test_a_critique_score_line_is_not_a_sentence() -> None:
    text = (
        "- The rollback is unpriced.\nScore: 6/10\n**Score: 7.5 / 10**\nThe score of 6/10 is fair."
    )
    assert normalised_sentences(text) == {"the rollback is unpriced", "the score of 6 10 is fair"}
