"""What `run` shows while it works: a live table on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io
import os
import pty
import re
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
    assert "chars" in screen
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


class FakeClock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def rendered(progress: LiveProgress) -> str:
    """The live table as a 120-column terminal would show it now."""
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(progress._shown())
    return out.getvalue()


def row(screen: str, slug: str) -> list[str]:
    [line] = [line for line in screen.splitlines() if f" {slug} " in line]
    return [cell.strip() for cell in line.strip()[1:-1].split("│")]


def test_the_live_table_counts_seconds_and_shows_a_retry_in_waiting() -> None:
    from dreamcontext_council.engine.providers.base import RetryNotice

    clock = FakeClock()
    progress = LiveProgress(io.StringIO(), clock=clock)
    progress.round_started(1, "blind opening", ["contrarian", "epistemologist"])
    progress.persona("contrarian", "thinking")
    progress.persona("epistemologist", "thinking")
    clock.now += 25

    assert row(rendered(progress), "contrarian") == ["contrarian", "thinking", "25 s", "", "", ""]

    progress.retrying("contrarian", RetryNotice("429 rate limited", 2, 4, 8.0, 429))
    clock.now += 3
    screen = rendered(progress)
    assert row(screen, "contrarian") == [
        "contrarian",
        "thinking",
        "28 s",
        "",
        "",
        "429 rate limited, retry 2/4 in 5 s",
    ]
    assert row(screen, "epistemologist")[:3] == ["epistemologist", "thinking", "28 s"]

    clock.now += 6  # the wait is over: the retry is in flight
    assert row(rendered(progress), "contrarian")[5] == "retry 2/4 after 429 rate limited"

    progress.persona("contrarian", "done", 120, "A 70")
    clock.now += 100  # a finished call keeps the time it took
    assert row(rendered(progress), "contrarian") == [
        "contrarian",
        "done",
        "34 s",
        "",
        "120",
        "A 70",
    ]


def test_the_live_table_shows_the_text_as_it_arrives() -> None:
    from dreamcontext_council.engine.providers.base import RetryNotice

    clock = FakeClock()
    progress = LiveProgress(io.StringIO(), clock=clock)
    progress.round_started(1, "blind opening", ["contrarian", "epistemologist"])
    progress.persona("contrarian", "thinking")
    progress.call_started("contrarian")
    progress.streamed("contrarian", "### Executive Summary\nWe should ")
    progress.streamed("contrarian", "wait.\n\n")
    clock.now += 4

    assert row(rendered(progress), "contrarian") == [
        "contrarian",
        "streaming",
        "4 s",
        "39",
        "",
        "We should wait.",
    ]

    progress.streamed("contrarian", "x" * 1000 + "\n\x1b[2J\u202etail")  # cleaned, never obeyed
    screen = rendered(progress)
    assert "\x1b" not in screen
    assert row(screen, "contrarian")[3:] == ["1,049", "", "\\x1b[2J\\u202etail"]
    progress.streamed("contrarian", "y" * 200)
    cells = row(rendered(progress), "contrarian")
    assert cells[5] == "…" + "y" * 59  # the end of a long line, where it grows

    progress.retrying("contrarian", RetryNotice("connection reset", 1, 4, 2.0))
    assert row(rendered(progress), "contrarian")[3:] == [
        "",
        "",
        "connection reset, retry 1/4 in 2 s",
    ]
    clock.now += 3
    progress.streamed("contrarian", "Again from the start")
    assert row(rendered(progress), "contrarian")[3:] == [
        "20",
        "",
        "retry 1/4 after connection reset",
    ]

    progress.persona("contrarian", "done", 9, "A 70")
    progress.call_ended("contrarian")
    assert row(rendered(progress), "contrarian")[3:] == ["20", "9", "A 70"]
    assert row(rendered(progress), "epistemologist")[3:] == ["", "", ""]


def test_a_call_outside_the_round_has_its_own_row_while_it_runs() -> None:
    stream = io.StringIO()
    clock = FakeClock()
    progress = LiveProgress(stream, clock=clock)
    progress.round_started(1, "blind opening", ["alpha", "beta"])
    progress.persona("alpha", "done", 10, "A 60")
    progress.persona("beta", "done", 12, "B 55")

    progress.call_started("(orchestrator)")
    assert "Round 1 — blind opening" in stream.getvalue()  # the finished round is printed
    clock.now += 2
    progress.streamed("(orchestrator)", "CONTINUE\n")
    screen = rendered(progress)
    assert "alpha" not in screen
    assert row(screen, "(orchestrator)") == [
        "(orchestrator)",
        "streaming",
        "2 s",
        "9",
        "",
        "CONTINUE",
    ]

    progress.call_ended("(orchestrator)")
    assert rendered(progress).strip() == ""

    progress.call_started("(synthesis)")
    progress.streamed("(synthesis)", "## Verdict\n")
    assert row(rendered(progress), "(synthesis)")[3:] == ["11", "", "## Verdict"]
    progress.call_ended("(synthesis)")
    assert rendered(progress).strip() == ""


def test_plain_lines_show_nothing_of_the_text_as_it_arrives() -> None:
    from dreamcontext_council.engine.model_calls.progress import PlainProgress

    stream = io.StringIO()
    progress = PlainProgress(stream)
    progress.call_started("contrarian")
    progress.streamed("contrarian", "### Executive Summary\n")
    progress.call_ended("contrarian")

    assert stream.getvalue() == ""


def test_without_a_terminal_each_retry_is_one_line(council: Council) -> None:
    from stub_server import StubResponse, StubServer

    from .support import openai_env, scripted_responder

    with StubServer(responder=scripted_responder) as stub:
        stub.enqueue(StubResponse.error(429, "slow down", headers={"retry-after-ms": "200"}))
        result = council(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--rounds",
            "1",
            "--model",
            "openai:gpt-4o-mini",
            env=openai_env(stub.openai_url),
        )

    assert result.code == 0, result.err
    retries = [line for line in result.err.splitlines() if "retry" in line]
    assert len(retries) == 1, result.err
    assert re.fullmatch(r"  [a-z-]+: 429 rate limited, retry 1/4 in 0\.2 s", retries[0])


def test_a_row_says_streaming_once_text_arrives_and_every_column_has_a_header() -> None:
    """`thinking` until the answer's first piece, `streaming` while it arrives, `thinking`
    again when a retry starts the text over; the last column is headed `latest`."""
    from dreamcontext_council.engine.providers.base import RetryNotice

    progress = LiveProgress(io.StringIO(), clock=FakeClock())
    progress.round_started(1, "blind opening", ["contrarian"])
    progress.persona("contrarian", "thinking")
    progress.call_started("contrarian")
    assert row(rendered(progress), "contrarian")[1] == "thinking"

    progress.streamed("contrarian", "We should wait")
    assert row(rendered(progress), "contrarian")[1:4] == ["streaming", "0 s", "14"]

    progress.retrying("contrarian", RetryNotice("connection reset", 1, 4, 2.0))
    assert row(rendered(progress), "contrarian")[1] == "thinking"

    [header] = [line for line in rendered(progress).splitlines() if " persona " in line]
    cells = [cell.strip() for cell in header.strip()[1:-1].split("┃")]
    assert cells == ["persona", "state", "time", "chars", "tokens", "latest"]
