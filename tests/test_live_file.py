"""tmp/.council-live.json: kept as format.md says, and never the reason a command fails."""

from __future__ import annotations

import json

import pytest
from debate_story import LIVE_FILE, Chair, Runner

from dreamcontext_council.actions import live_state
from dreamcontext_council.folder.paths import Root

VOTES_1 = {"risk-auditor": ("A", 60), "growth-cfo": ("B", 40)}


def live(chair: Chair) -> dict[str, object]:
    return json.loads((chair.root / LIVE_FILE).read_text(encoding="utf-8"))


def hold_whole_debate(chair: Chair) -> str:
    debate_id = chair.new(personas=("risk-auditor", "growth-cfo"), rounds=1)
    chair.play_round(debate_id, 1, VOTES_1)
    chair.ok("inject", debate_id, "A late fact")
    chair.ok("synthesize", debate_id)
    chair.write_final_report(debate_id)
    chair.ok("complete", debate_id)
    chair.ok("promote", debate_id)
    return debate_id


def test_the_live_file_follows_the_debate_it_belongs_to(chair: Chair) -> None:
    first = chair.new(personas=("risk-auditor",))
    started = live(chair)["started"]
    chair.ok("round", "start", first, "1")
    assert live(chair)["started"] == started and live(chair)["debate"] == first
    second = chair.new("Another question?", personas=("risk-auditor",))
    state = live(chair)
    assert state["debate"] == second and state["topic"] == "Another question?"
    assert state["phase"] == "setup" and state["round"] == 0


def test_a_tmp_that_is_a_file_never_fails_a_command(chair: Chair, cli: Runner) -> None:
    chair.root.mkdir(parents=True)
    blocker = chair.root / "tmp"
    blocker.write_text("not a folder\n")
    hold_whole_debate(chair)
    assert cli("live", "clear").code == 0
    assert blocker.read_text() == "not a folder\n"


def test_a_live_file_that_is_a_folder_never_fails_a_command(chair: Chair, cli: Runner) -> None:
    (chair.root / LIVE_FILE).mkdir(parents=True)
    hold_whole_debate(chair)
    assert (chair.root / LIVE_FILE).is_dir()


def test_a_corrupt_live_file_is_replaced(chair: Chair) -> None:
    (chair.root / "tmp").mkdir(parents=True)
    (chair.root / LIVE_FILE).write_text("{torn")
    debate_id = chair.new(personas=("risk-auditor",))
    assert live(chair)["debate"] == debate_id


@pytest.mark.parametrize("setup", ["missing", "no-root"])
def test_live_clear_without_a_live_file_says_so(cli: Runner, chair: Chair, setup: str) -> None:
    if setup == "missing":
        chair.root.mkdir(parents=True)
    result = cli("live", "clear")
    assert result.code == 0 and result.out.strip() == "No live file."


def test_many_debates_at_once_rewrite_the_live_file_once_an_interval(
    chair: Chair, root: Root
) -> None:
    first = chair.new(personas=("risk-auditor",))
    second = chair.new(personas=("risk-auditor",))
    with live_state.throttled_submissions(3600, every_refresh=True):
        live_state.refresh_live(root, first, phase="setup")
        assert live(chair)["debate"] == first
        live_state.refresh_live(root, second, phase="setup")  # a transition, in the interval
        assert live(chair)["debate"] == first
    live_state.refresh_live(root, second, phase="setup")  # one debate: transitions at once
    assert live(chair)["debate"] == second


def test_overlapping_throttles_ending_out_of_order_leave_the_one_still_held() -> None:
    first = live_state.throttled_submissions(1.0)
    second = live_state.throttled_submissions(3600, every_refresh=True)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the run that started first ends first
    assert live_state._throttle() == (3600, True)
    second.__exit__(None, None, None)
    assert live_state._throttle() == (0.0, False)


def test_the_same_throttle_held_by_many_runs_lasts_until_the_last_ends() -> None:
    """An eval holds one throttle per debate in flight, all alike."""
    holds = [live_state.throttled_submissions(2.0, every_refresh=True) for _ in range(3)]
    for hold in holds:
        hold.__enter__()
    for hold in holds[:-1]:
        hold.__exit__(None, None, None)
        assert live_state._throttle() == (2.0, True)
    holds[-1].__exit__(None, None, None)
    assert live_state._throttle() == (0.0, False)
    assert not live_state._holds
