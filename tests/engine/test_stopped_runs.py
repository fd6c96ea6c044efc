"""A run that stops looks stopped, a run that goes on looks running, and failures read clearly.

Whatever stopped the run (a provider that fails, a budget, Ctrl-C, SIGKILL), `board`,
`show --json`, `list` and the dashboard say `stopped: <reason>, resume with dreamcontext
council run <id>`; a run whose process is alive shows as running in the same four places.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

from markupsafe import escape
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.engine.providers.scripted import DELAY_ENV
from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.folder.paths import Root

from .support import OPTIONS, TOPIC, Council, roster_file, section, wait_for
from .test_accounting import SCRIPTED_PRICE, prices_file
from .test_resume import signal_run_at

EXIT_3 = "import sys\nsys.stdin.read()\nsys.exit(3)\n"
# A persona program that answers like the scripted provider once the gate file exists.
GATED = """\
import sys, time
from pathlib import Path
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
prompt = sys.stdin.read()
while not Path({gate!r}).exists():
    time.sleep(0.05)
print(scripted_text(task_from_text(prompt)))
"""
# Answers like the scripted provider, except in round 2, where it fails.
FAILS_ROUND_2 = """\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
task = task_from_text(sys.stdin.read())
if task.get("round") == 2 and task.get("phase") != "synthesis":
    sys.exit(3)
print(scripted_text(task))
"""
LONG_WORDS = "the upstream gateway refused the request because its quota is exhausted " * 4
SAYS_A_LOT = f"import sys\nsys.stdin.read()\nsys.stderr.write({LONG_WORDS!r})\nsys.exit(3)\n"


def command_model(tmp_path: Path, name: str, source: str) -> str:
    script = tmp_path / name
    script.write_text(source, encoding="utf-8")
    return f"command:{sys.executable} {script}"


def board_run_text(board: str) -> str:
    """The board's RUN line, its wrapped lines joined again."""
    found: list[str] = []
    for line in board.splitlines():
        inner = line.strip("│ ")
        if inner.startswith("RUN "):
            found.append(inner[3:].strip())
        elif found and line.startswith("│          "):
            found.append(inner)
        elif found:
            break
    return " ".join(found)


def listed_run(listing: str) -> str:
    """The run line as `list` shows it, put back together: a stopped run's reason wrapped
    on lines of its own within 80 columns, then how to resume it."""
    lines = listing.splitlines()
    assert all(len(line) <= 80 for line in lines)
    starts = [n for n, line in enumerate(lines) if line.startswith("    stopped: ")]
    if not starts:
        [running] = [line.strip() for line in lines if line.startswith("    running: ")]
        return running
    [start] = starts
    [end] = [n for n, line in enumerate(lines) if line.startswith("    resume with: ")]
    reason = " ".join(line.strip() for line in lines[start:end])
    resume = lines[end].removeprefix("    resume with: ")
    return f"{reason}, resume with {resume}"


def shown_everywhere(council: Council, debate_id: str) -> str:
    """The run line, checked to be the same in board, show --json, list and the dashboard."""
    shown = council("show", debate_id, "--json").json()["run"]
    assert shown is not None, "show --json has no run state"
    line = str(shown["line"])
    board = council("board", debate_id, "--plain")
    # The board wraps it, and a long path may break anywhere: compare all but the spaces.
    assert "".join(board_run_text(board.out).split()) == "".join(line.split())
    assert council("board", debate_id, "--json").json()["run"] == shown
    [listed] = council("list", "--json").json()
    assert listed["run"] == shown
    # wrapped at spaces, a path longer than a line split: the same text, spaces aside
    assert "".join(listed_run(council("list").out).split()) == "".join(line.split())
    with TestClient(create_app(Root(council.root))) as dashboard:
        listed_page = dashboard.get("/").text
        if shown.get("state") == "running":  # the list says how long, in plain words
            assert re.search(r">running for (less than a minute|\d+ min)<", listed_page)
            assert f"started {shown['started_at']}" in listed_page
        else:
            assert str(escape(line)) in listed_page
        assert str(escape(line)) in dashboard.get(f"/d/{debate_id}").text
    return line


def assert_stopped(council: Council, debate_id: str, reason: str) -> None:
    line = shown_everywhere(council, debate_id)
    assert line.startswith("stopped: ")
    assert reason in line
    assert line.endswith(f", resume with dreamcontext council run {debate_id}")


def test_a_provider_failure_shows_stopped_everywhere(council: Council, tmp_path: Path) -> None:
    model = command_model(tmp_path, "exit3.py", EXIT_3)

    failed = council.proc("run", "--topic", TOPIC, "--model", model, "--yes")

    assert failed.code == EXIT_STOPPED
    debate_id = council.only_id()
    assert council.status(debate_id) == "round_1_running"
    assert_stopped(council, debate_id, "failed with exit code 3")
    assert "round 1 of 3: stopped" in council("board", debate_id, "--plain").out.splitlines()[0]
    assert "every persona failed in round 1" in council("list").out


def test_a_stopped_run_is_labelled_stopped_not_by_its_round(
    council: Council, tmp_path: Path
) -> None:
    model = command_model(tmp_path, "exit3.py", EXIT_3)
    council.proc("run", "--topic", TOPIC, "--model", model, "--yes")
    debate_id = council.only_id()
    assert council.status(debate_id) == "round_1_running"

    [row] = [line for line in council("list").out.splitlines() if line.startswith(f"  {debate_id}")]
    assert row.split()[1] == "stopped"
    assert "round_1_running" not in row
    with TestClient(create_app(Root(council.root))) as dashboard:
        for page in (dashboard.get("/").text, dashboard.get(f"/d/{debate_id}").text):
            [badge] = re.findall(r'<span class="badge tone-stopped"[^>]*>([^<]*)</span>', page)
            assert badge == "stopped"
            title = re.search(
                r'<span class="badge tone-stopped" (?:id="status" )?title="([^"]*)"', page
            )
            assert title is not None
            assert "every persona failed in round 1" in title.group(1)


def test_four_identical_failures_make_one_grouped_line(council: Council, tmp_path: Path) -> None:
    model = command_model(tmp_path, "exit3.py", EXIT_3)

    failed = council.proc("run", "--topic", TOPIC, "--model", model, "--yes")

    debate_id = council.only_id()
    reason = f"command '{model.removeprefix('command:')}' failed with exit code 3"
    [error] = [line for line in failed.err.splitlines() if line.startswith("Error:")]
    assert error.startswith(f"Error: Every persona failed in round 1 (4 personas: {reason}")
    assert error.count(reason) == 1
    assert error.endswith(f"run `dreamcontext council run {debate_id}` to resume.")
    assert "same command" not in failed.text


def test_a_long_reason_is_shortened_at_a_word_boundary(council: Council, tmp_path: Path) -> None:
    model = command_model(tmp_path, "says_a_lot.py", SAYS_A_LOT)

    failed = council.proc("run", "--topic", TOPIC, "--model", model, "--yes")

    details = re.findall(r"^  [a-z-]+: failed · (.*)$", failed.err, re.M)
    assert len(details) == 4
    [error] = {r["error"] for r in council.usage(council.only_id()) if r["outcome"] == "failed"}
    full = " ".join(error.split())
    for detail in details:
        assert len(detail) <= 80
        assert detail.endswith("…")
        kept = detail.removesuffix("…")
        assert full.startswith(kept)
        assert full[len(kept)] in " ,;:.-—("  # the next word was left out, not cut


def test_shortening_keeps_whole_words() -> None:
    from dreamcontext_council.views.failures import grouped_reasons, shorten_at_word

    text = "command 'probe' failed with exit code 3 and printed: quota exhausted for today"

    assert shorten_at_word(text, 40) == "command 'probe' failed with exit code 3…"
    assert shorten_at_word(text, 200) == text
    assert shorten_at_word("x" * 50, 10) == "x" * 9 + "…"
    assert grouped_reasons({"a": "boom.", "b": "boom.", "c": "other"}) == [
        "2 personas: boom.",
        "c: other",
    ]


def test_a_budget_stop_shows_stopped_everywhere(council: Council, tmp_path: Path) -> None:
    prices = prices_file(tmp_path, SCRIPTED_PRICE)

    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--prices", prices, "--max-cost", "6"
    )

    assert result.code == EXIT_STOPPED, result.err
    debate_id = council.only_id()
    assert_stopped(council, debate_id, "budget: --max-cost $6.00 would be crossed")


def test_a_killed_run_shows_stopped_everywhere_until_it_is_resumed(council: Council) -> None:
    # Killed once round 2 has started and while its calls (1 s each, all at once) are out,
    # so the round is still running whatever the machine's load.
    signal_run_at(council, "round 2 started", signal.SIGKILL, {DELAY_ENV: "1"})
    debate_id = council.only_id()

    assert council.status(debate_id) == "round_2_running"
    assert_stopped(council, debate_id, "ended without finishing: it was killed")

    again = council.proc("run", debate_id)

    assert again.code == 0, again.err
    assert council("show", debate_id, "--json").json()["run"] is None
    assert not (council.folder(debate_id) / "run.json").exists()


def test_ctrl_c_shows_stopped_everywhere(council: Council) -> None:
    code, _ = signal_run_at(council, "two answers into round 1", signal.SIGINT)
    debate_id = council.only_id()

    assert code == 130
    assert_stopped(council, debate_id, "stopped: interrupted by Ctrl-C")


def test_a_run_in_progress_shows_running_everywhere(council: Council, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    model = command_model(tmp_path, "gated.py", GATED.format(gate=str(gate)))
    process = council.spawn("run", "--topic", TOPIC, "--model", model, "--rounds", "1", "--yes")
    try:
        wait_for(
            lambda: (
                len(council.ids()) == 1 and (council.folder(council.ids()[0]) / "run.json").exists()
            )
        )
        debate_id = council.only_id()
        wait_for(lambda: council.status(debate_id) == "round_1_running")

        line = shown_everywhere(council, debate_id)

        assert line.startswith(f"running: pid {process.pid} ")
        assert "round 1 of 1: running" in council("board", debate_id, "--plain").out.splitlines()[0]
        assert (
            json.loads((council.folder(debate_id) / "run.json").read_text())["pid"] == process.pid
        )
    finally:
        gate.touch()
        _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()
    assert council.status(debate_id) == "complete"
    assert council("show", debate_id, "--json").json()["run"] is None


def test_a_persona_excused_in_round_2_is_listed_and_named_in_the_verdict(
    council: Council, tmp_path: Path
) -> None:
    programs = tmp_path / "bin"
    programs.mkdir()
    flaky = programs / "flaky-persona"
    flaky.write_text(f"#!{sys.executable}\n{FAILS_ROUND_2}", encoding="utf-8")
    flaky.chmod(0o755)
    roster = roster_file(
        tmp_path / "roster.json",
        {"risk-auditor": "", "growth-cfo": "", "user-advocate": "command:flaky-persona"},
    )
    path = {"PATH": f"{programs}{os.pathsep}{os.environ['PATH']}"}

    result = council.proc(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster,
        "--rounds",
        "2",
        "--yes",
        env=path,
    )

    assert result.code == 0, result.err
    debate_id = council.only_id()
    assert council.status(debate_id) == "complete"
    reason = "command 'flaky-persona' failed with exit code 3 and printed nothing on stderr"
    assert f"Round 2 goes on without user-advocate: {reason}." in result.err
    assert (
        f"Not every persona answered:\n  user-advocate did not answer round 2 ({reason})\n"
        in result.out
    )
    verdict = section(council.text(debate_id, "final-report.md"), "Verdict")
    assert "**The council was short:** user-advocate did not answer round 2." in verdict


def test_the_run_record_is_read_against_the_process_and_the_status(tmp_path: Path) -> None:
    import socket
    import subprocess

    from dreamcontext_council.actions.run_state import run_state_of
    from dreamcontext_council.folder.run_record import RunRecord, process_start

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    here = socket.gethostname()
    alive = RunRecord(os.getpid(), here, "2026-12-01T10:00:00.000Z", process_start(os.getpid()))
    killed = RunRecord(gone.pid, here, "2026-12-01T10:00:00.000Z")
    reused = RunRecord(os.getppid(), here, "2026-12-01T10:00:00.000Z", process_start=1)
    elsewhere = RunRecord(gone.pid, here + "-other", "2026-12-01T10:00:00.000Z")
    stopped = RunRecord(
        gone.pid,
        here,
        "2026-12-01T10:00:00.000Z",
        stopped_reason="budget: --max-calls 3 reached after 3 calls",
        stopped_status="round_1_running",
    )

    def state(record: RunRecord, status: str = "round_1_running") -> str | None:
        found = run_state_of(record, "council_AbC12345", status)
        return found.state if found else None

    assert state(alive) == "running"
    assert state(killed) == "stopped"
    if process_start(os.getppid()) is not None:  # Linux: a pid reused by another program
        assert state(reused) == "stopped"
    assert state(elsewhere) == "running"  # another host's process cannot be checked
    assert state(stopped) == "stopped"
    assert state(stopped, "round_1_complete") is None  # driven on by hand since the stop
    assert state(killed, "complete") is None
    assert run_state_of(None, "council_AbC12345", "round_1_running") is None


def test_a_server_error_stop_ends_its_sentence_once(council: Council) -> None:
    from stub_server import StubResponse, StubServer

    from .support import openai_env

    def responder(request_json: dict[str, object]) -> StubResponse:
        return StubResponse.error(500, "the model host is down")

    with StubServer(responder=responder) as stub:
        failed = council(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--model",
            "openai:gpt-4o-mini",
            "--retries",
            "0",
            env=openai_env(stub.openai_url),
        )

    [error] = [line for line in failed.err.splitlines() if line.startswith("Error:")]
    assert "(500 server error: the model host is down)). Fix the cause" in error
    assert ".)" not in error
