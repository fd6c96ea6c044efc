"""Ctrl-C during `council run`: one line that says how to go on, and the run resumes whole."""

from __future__ import annotations

import signal

import pytest

from .support import Council
from .test_resume import DELAY, assert_whole, signal_run_at


@pytest.mark.parametrize("point", ["two answers into round 1", "mid round 2", "synthesis begun"])
def test_ctrl_c_stops_with_the_command_that_resumes(council: Council, point: str) -> None:
    code, err = signal_run_at(council, point, signal.SIGINT)
    [debate_id] = council.ids()
    lines = err.strip().splitlines()

    assert code == 130
    assert lines[-1] == (
        "Error: Stopped by Ctrl-C; every answer already given is saved. "
        f"Run `dreamcontext council run {debate_id}` to go on from where it stopped."
    )
    assert "Traceback" not in err
    assert council.status(debate_id) != "complete"

    again = council.proc("run", debate_id, env=DELAY)

    assert again.code == 0, again.err
    assert_whole(council, debate_id)
