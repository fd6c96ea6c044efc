"""Ctrl-C during `council run`: one line that says how to go on, and the run resumes whole."""

from __future__ import annotations

import signal

import pytest

from .support import OPTIONS, TOPIC, Council, wait_for
from .test_resume import DELAY, KILL_POINTS, assert_whole


@pytest.mark.parametrize("point", ["two answers into round 1", "mid round 2", "synthesis begun"])
def test_ctrl_c_stops_with_the_command_that_resumes(council: Council, point: str) -> None:
    process = council.spawn("run", "--topic", TOPIC, "--options", OPTIONS, env=DELAY)
    try:
        wait_for(lambda: KILL_POINTS[point](council) or process.poll() is not None)
        assert process.poll() is None, "the run finished before the interrupt"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    [debate_id] = council.ids()
    lines = err.decode().strip().splitlines()

    assert process.returncode == 130
    assert lines[-1] == (
        "Error: Stopped by Ctrl-C; every answer already given is saved. "
        f"Run `dreamcontext council run {debate_id}` to go on from where it stopped."
    )
    assert "Traceback" not in err.decode()
    assert council.status(debate_id) != "complete"

    again = council.proc("run", debate_id, env=DELAY)

    assert again.code == 0, again.err
    assert_whole(council, debate_id)
