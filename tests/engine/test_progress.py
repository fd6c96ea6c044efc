"""What `run` shows while it works: a live table on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

from dreamcontext_council.engine.model_calls.progress import LiveProgress

from .support import OPTIONS, TOPIC, Council


def test_without_a_terminal_progress_is_plain_lines(council: Council) -> None:
    result = council.proc(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--rounds",
        "2",
        env={"DREAMCONTEXT_SCRIPTED_DELAY": "0.05"},
    )

    assert result.code == 0, result.err
    assert "\x1b[" not in result.err + result.out
    lines = result.err.split("\n")
    roster = "synthesizer, epistemologist, contrarian, systems-thinker"
    assert f"Round 1 (blind opening): {roster}" in lines
    assert f"Round 2 (cross-examination): {roster}" in lines
    done = [line for line in lines if line.startswith("  ") and ": done · " in line]
    assert len(done) == 8
    assert all(" tokens · " in line for line in done)
    # Progress goes to stderr; stdout holds only the result.
    debate_id = result.last_line
    assert result.out.strip().split("\n") == [
        f"{debate_id} is complete: {council.folder(debate_id) / 'final-report.md'}",
        "Verdict: Migrate now (A). Confidence: medium.",
        debate_id,
    ]


def test_quiet_silences_progress(council: Council) -> None:
    result = council.proc("run", "--topic", TOPIC, "--rounds", "2", "--quiet")

    assert result.code == 0, result.err
    assert result.err == ""
    assert "Round 1" not in result.out


def test_on_a_terminal_a_live_table_shows_each_persona(council: Council) -> None:
    leader, follower = pty.openpty()
    env = council.environment(
        {"TERM": "xterm", "COLUMNS": "100", "DREAMCONTEXT_SCRIPTED_DELAY": "0.3"}
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dreamcontext_council",
            "council",
            "run",
            "--topic",
            TOPIC,
            "--rounds",
            "1",
        ],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        cwd=council.workdir,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0
    screen = b"".join(chunks).decode("utf-8", "replace")

    assert "\x1b[" in screen  # drawn, not printed line by line
    assert "Round 1 — blind opening" in screen
    for state in ("waiting", "thinking", "done"):
        assert state in screen
    for slug in ("synthesizer", "epistemologist", "contrarian", "systems-thinker"):
        assert slug in screen
    assert "is complete" in screen


def test_the_check_after_a_round_prints_below_that_rounds_table() -> None:
    stream = io.StringIO()
    progress = LiveProgress(stream)
    progress.start()
    for number in (1, 2):
        progress.round_started(number, f"phase {number}", ["alpha", "beta"])
        progress.persona("alpha", "done", 10, "A 60")
        progress.note("a note while beta still thinks")  # the round goes on
        progress.persona("beta", "failed", 0, "exit 3")
        progress.note(f"Convergence check after round {number}: CONTINUE")
    progress.stop()
    shown = stream.getvalue()

    order = [
        "Round 1 — phase 1",
        "Convergence check after round 1",
        "Round 2 — phase 2",
        "Convergence check after round 2",
    ]
    places = [shown.index(text) for text in order]
    assert places == sorted(places), shown
    assert shown.count("Round 1 — phase 1") == 1
    assert shown.index("a note while beta still thinks") < shown.index("Round 1 — phase 1")
