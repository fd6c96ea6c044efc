"""While `council run` asks a model, `show` tells who is being asked, for how long, with how
much text so far; nothing of it outlives the call, and a kill leaves nothing `show` believes.

The run's calls are real: `command:` persona programs (a gate file holds them mid-call) and
the openai SDK against the local stub server.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.folder.in_flight import IN_FLIGHT_DIR

from .support import OPTIONS, TOPIC, Council, openai_env, roster_file, scripted_responder, wait_for

# Notes each call it gets in `marks`, then answers like the scripted provider once the
# gate file exists (or fails with exit code 3 when `fail` says so); at most a minute.
GATED = """\
import sys, time
from pathlib import Path
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
task = task_from_text(sys.stdin.read())
with open({marks!r}, "a", encoding="utf-8") as marks:
    marks.write(f"{{task.get('phase')}} {{task.get('round')}}\\n")
deadline = time.monotonic() + 60
while not Path({gate!r}).exists() and time.monotonic() < deadline:
    time.sleep(0.05)
if {fail!r}:
    sys.exit(3)
print(scripted_text(task))
"""


def gated_model(tmp_path: Path, *, fail: bool = False) -> tuple[str, Path, Path]:
    """A `command:` model held until its gate exists: (model, gate, marks)."""
    gate, marks = tmp_path / "gate", tmp_path / "marks.txt"
    script = tmp_path / "gated.py"
    script.write_text(GATED.format(marks=str(marks), gate=str(gate), fail=fail), encoding="utf-8")
    return f"command:{sys.executable} {script}", gate, marks


def in_flight(council: Council, debate_id: str) -> list[dict[str, Any]]:
    result = council("show", debate_id, "--json")
    assert result.code == 0, result.err
    calls = result.json()["in_flight"]
    assert isinstance(calls, list)
    return calls


def in_flight_files(council: Council, debate_id: str) -> list[Path]:
    directory = council.folder(debate_id) / IN_FLIGHT_DIR
    return sorted(directory.iterdir()) if directory.is_dir() else []


def asked(marks: Path) -> list[str]:
    return marks.read_text(encoding="utf-8").splitlines() if marks.exists() else []


def spawn_with_one_gated_persona(council: Council, model: str, tmp_path: Path) -> Any:
    roster = roster_file(
        tmp_path / "roster.json",
        {"risk-auditor": "", "growth-cfo": "", "user-advocate": model},
    )
    return council.spawn(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--rounds", "1"
    )


def the_debate(council: Council, process: subprocess.Popen[bytes]) -> str:
    """The id of the debate the run made, once its folder is in place."""

    def made() -> list[str]:
        return [i for i in council.ids() if (council.folder(i) / "debate.md").exists()]

    wait_for(lambda: bool(made()) or process.poll() is not None)
    assert process.poll() is None, process.communicate()[1].decode()
    [debate_id] = made()
    return debate_id


def wait_for_the_gated_call(council: Council, process: subprocess.Popen[bytes]) -> str:
    """The debate's id once `show --json` reports user-advocate's call."""
    debate_id = the_debate(council, process)

    def reported() -> bool:
        assert process.poll() is None, process.communicate()[1].decode()
        return any(call["persona"] == "user-advocate" for call in in_flight(council, debate_id))

    wait_for(reported)
    return debate_id


def test_a_call_in_flight_is_shown_and_a_killed_one_is_asked_again(
    council: Council, tmp_path: Path
) -> None:
    model, gate, marks = gated_model(tmp_path)
    process = spawn_with_one_gated_persona(council, model, tmp_path)
    try:
        debate_id = wait_for_the_gated_call(council, process)
        [call] = in_flight(council, debate_id)  # the scripted personas have answered
        assert call["persona"] == "user-advocate"
        assert (call["phase"], call["round"], call["state"]) == ("opening", 1, "streaming")
        assert call["chars"] == 0
        assert call["elapsed_s"] >= 0
        shown = council("show", debate_id)
        assert "in flight:" in shown.out
        assert "user-advocate  opening r1  0 chars  " in shown.out
        # The call's file is written before its program starts: the kill comes once the
        # program has the question, so the resume must ask it a second time.
        wait_for(lambda: asked(marks) == ["opening 1"])

        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert asked(marks) == ["opening 1"]
    assert len(in_flight_files(council, debate_id)) == 1  # the killed run's file stays
    assert in_flight(council, debate_id) == []  # but no reader believes it
    assert "in flight" not in council("show", debate_id).out

    gate.touch()  # from now on the program answers at once
    again = council.proc("run", debate_id)

    assert again.code == 0, again.err
    assert council.status(debate_id) == "complete"
    assert asked(marks).count("opening 1") == 2  # the killed call was asked again
    assert in_flight_files(council, debate_id) == []
    assert in_flight(council, debate_id) == []


def test_a_finished_run_leaves_no_in_flight_file(council: Council) -> None:
    # Each answer takes longer than a write interval, so every call's file is written.
    result = council.proc(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--rounds",
        "1",
        env={"DREAMCONTEXT_SCRIPTED_DELAY": "0.3"},
    )

    assert result.code == 0, result.err
    debate_id = council.only_id()
    assert (council.folder(debate_id) / IN_FLIGHT_DIR).is_dir()
    assert in_flight_files(council, debate_id) == []
    assert council("show", debate_id, "--json").json()["in_flight"] == []


def test_a_failed_call_leaves_no_in_flight_file(council: Council, tmp_path: Path) -> None:
    model, gate, _ = gated_model(tmp_path, fail=True)
    process = council.spawn(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--model", model, "--yes"
    )
    try:
        debate_id = the_debate(council, process)
        wait_for(lambda: len(in_flight(council, debate_id)) == 4 or process.poll() is not None)
        assert {call["state"] for call in in_flight(council, debate_id)} == {"streaming"}
        gate.touch()
        _, err = process.communicate(timeout=120)
    finally:
        gate.touch()
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode == EXIT_STOPPED, err.decode()
    assert "failed with exit code 3" in err.decode()
    assert in_flight_files(council, debate_id) == []
    assert in_flight(council, debate_id) == []


def test_a_retry_in_waiting_is_shown_then_the_call_goes_on(council: Council) -> None:
    from stub_server import StubResponse, StubServer

    with StubServer(responder=scripted_responder) as stub:
        stub.enqueue(StubResponse.error(429, "slow down", headers={"retry-after-ms": "3000"}))
        process = council.spawn(
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
        try:
            debate_id = the_debate(council, process)
            retrying: list[dict[str, Any]] = []

            def seen() -> bool:
                retrying[:] = [c for c in in_flight(council, debate_id) if c["state"] == "retrying"]
                return bool(retrying) or process.poll() is not None

            wait_for(seen)
            _, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()

    assert process.returncode == 0, err.decode()
    [call] = retrying
    assert call["detail"].startswith("429 rate limited, retry 1/4 in ")
    assert call["chars"] == 0
    assert council.status(debate_id) == "complete"
    assert in_flight_files(council, debate_id) == []


# Prints the first half of its scripted answer at once, then the rest once the gate exists.
HALVED = """\
import sys, time
from pathlib import Path
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
text = scripted_text(task_from_text(sys.stdin.read()))
half = text.index("\\n", len(text) // 2) + 1
Path({first!r}).write_text(text[:half], encoding="utf-8")
Path({whole!r}).write_text(text, encoding="utf-8")
sys.stdout.write(text[:half])
sys.stdout.flush()
deadline = time.monotonic() + 60
while not Path({gate!r}).exists() and time.monotonic() < deadline:
    time.sleep(0.05)
sys.stdout.write(text[half:])
"""


def test_the_text_so_far_is_seen_mid_call_and_the_entry_is_the_whole_answer(
    council: Council, tmp_path: Path
) -> None:
    gate, first, whole = tmp_path / "gate", tmp_path / "first.txt", tmp_path / "whole.txt"
    script = tmp_path / "halved.py"
    script.write_text(
        HALVED.format(gate=str(gate), first=str(first), whole=str(whole)), encoding="utf-8"
    )
    process = spawn_with_one_gated_persona(council, f"command:{sys.executable} {script}", tmp_path)
    try:
        debate_id = the_debate(council, process)

        def streamed() -> bool:
            assert process.poll() is None, process.communicate()[1].decode()
            return any(
                call["persona"] == "user-advocate" and call["chars"] > 0
                for call in in_flight(council, debate_id)
            )

        wait_for(streamed)
        [call] = in_flight(council, debate_id)
        sent = first.read_text(encoding="utf-8")
        assert call["chars"] == len(sent.rstrip())  # trailing whitespace waits for the rest
        [file] = in_flight_files(council, debate_id)
        assert json.loads(file.read_text(encoding="utf-8"))["text"] == sent.rstrip()
        report = council.folder(debate_id) / "user-advocate" / "report.md"
        assert not report.exists() or "## Round 1" not in report.read_text(encoding="utf-8")
        gate.touch()
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err.decode()
    assert in_flight_files(council, debate_id) == []
    report = (council.folder(debate_id) / "user-advocate" / "report.md").read_text(encoding="utf-8")
    answer = whole.read_text(encoding="utf-8")
    last_line = answer.rstrip().splitlines()[-1]
    assert last_line in report  # the stored entry has the whole answer, not the first half
