"""In-flight files: a run's calls in progress, written a few times a second, read by others,
gone when the call ends, skipped and swept up once their writer is dead, ignored by git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from dreamcontext_council.folder import in_flight
from dreamcontext_council.folder.in_flight import (
    RETRYING,
    TEXT_KEPT,
    InFlightCall,
    in_flight_dir,
    read_in_flight,
    remove_leftover_in_flight,
)
from dreamcontext_council.folder.machine_local import keep_out_of_git
from dreamcontext_council.folder.paths import Root


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def debate_folder(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "council" / "council_AbC12345"
    folder.mkdir(parents=True)
    return folder, tmp_path


def test_a_call_is_readable_while_it_runs_and_gone_when_it_ends(tmp_path: Path) -> None:
    folder, root = debate_folder(tmp_path)
    clock = Clock()
    call = InFlightCall(
        folder, within=root, persona="contrarian", phase="opening", round=1, clock=clock
    )
    call.start()
    [seen] = read_in_flight(folder)
    assert (seen.persona, seen.phase, seen.round, seen.chars, seen.state) == (
        "contrarian",
        "opening",
        1,
        0,
        "streaming",
    )
    clock.now += 1
    call.add("## Position\n")
    call.add("We should migrate")  # within the interval: kept in memory only
    [seen] = read_in_flight(folder)
    assert (seen.chars, seen.text) == (12, "## Position\n")
    clock.now += in_flight.WRITE_EVERY_S
    call.add(" now.")
    [seen] = read_in_flight(folder)
    assert seen.text == "## Position\nWe should migrate now."
    assert seen.chars == len(seen.text)
    assert seen.last_line == "We should migrate now."
    assert seen.to_json()["chars"] == seen.chars
    call.end()
    assert read_in_flight(folder) == []
    assert list(in_flight_dir(folder).iterdir()) == []


def test_writes_follow_the_clock_not_the_chunks(tmp_path: Path) -> None:
    folder, root = debate_folder(tmp_path)
    clock = Clock()
    call = InFlightCall(folder, within=root, persona="a", phase="opening", round=1, clock=clock)
    writes: list[int] = []
    original = call._write

    def counted() -> None:
        writes.append(call.chars)
        original()

    call._write = counted  # type: ignore[method-assign]
    call.start()
    for _ in range(1000):  # a thousand chunks within one interval
        call.add("x")
    clock.now += in_flight.WRITE_EVERY_S
    call.add("y")
    call.flush()  # nothing left unwritten: no write
    assert writes == [0, 1001]  # the start, then one write for a thousand chunks
    call.end()


def test_a_call_answered_within_its_first_interval_never_touches_the_disk(
    tmp_path: Path,
) -> None:
    folder, root = debate_folder(tmp_path)
    quick = InFlightCall(folder, within=root, persona="a", phase="opening", round=1)
    quick.begin()
    quick.keep("## Position\nMigrate.\n")
    quick.end()
    assert not in_flight_dir(folder).exists()

    slow = InFlightCall(folder, within=root, persona="b", phase="opening", round=1)
    slow.begin()
    slow.flush()  # what the owner's timer does once the first interval is over
    [seen] = read_in_flight(folder)
    assert (seen.persona, seen.chars) == ("b", 0)
    for _ in range(100):
        slow.keep("x")
    assert read_in_flight(folder)[0].chars == 0  # keeping is not writing
    slow.flush()
    assert read_in_flight(folder)[0].text == "x" * 100
    slow.end()
    assert read_in_flight(folder) == []


def test_a_retry_starts_the_text_over_and_says_so(tmp_path: Path) -> None:
    folder, root = debate_folder(tmp_path)
    call = InFlightCall(folder, within=root, persona="a", phase="rebuttal", round=3, every=0)
    call.start()
    call.add("half an answ")
    call.set_state(RETRYING, "connection closed, retry 1/4 in 1 s")
    call.restart()
    [seen] = read_in_flight(folder)
    assert (seen.chars, seen.text, seen.state) == (0, "", "retrying")
    assert seen.detail.startswith("connection closed")
    call.end()


def test_a_long_answer_keeps_its_end(tmp_path: Path) -> None:
    folder, root = debate_folder(tmp_path)
    now = [0.0]  # a still clock: the first piece is written, the rest wait for the last one
    call = InFlightCall(
        folder, within=root, persona="a", phase="opening", round=1, every=1, clock=lambda: now[0]
    )
    pieces = 3 * TEXT_KEPT // 10
    for n in range(pieces - 1):
        call.add(f"{n:09d}\n")
    now[0] = 2.0
    call.add(f"{pieces - 1:09d}\n")
    [seen] = read_in_flight(folder)
    assert seen.chars == 3 * TEXT_KEPT
    assert len(seen.text) == TEXT_KEPT
    assert seen.text.endswith(f"{3 * TEXT_KEPT // 10 - 1:09d}\n")
    call.end()


WRITER = """
import os, signal, sys
from pathlib import Path
from dreamcontext_council.folder.in_flight import InFlightCall

call = InFlightCall(Path(sys.argv[1]), within=Path(sys.argv[2]), persona="alice",
                    phase="opening", round=1, every=0)
call.add("a partial answer")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_writers_file_is_skipped_and_swept_up(tmp_path: Path) -> None:
    folder, root = debate_folder(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(folder), str(root)], check=False, timeout=60
    )
    assert done.returncode == -9
    [left] = list(in_flight_dir(folder).iterdir())
    assert json.loads(left.read_text())["text"] == "a partial answer"
    assert read_in_flight(folder) == []
    mine = InFlightCall(folder, within=root, persona="bob", phase="opening", round=1)
    mine.start()
    assert remove_leftover_in_flight(folder, within=root) == [left]
    assert [c.persona for c in read_in_flight(folder)] == ["bob"]  # the live one stays
    mine.end()


def test_bad_files_are_left_out_never_fatal(tmp_path: Path) -> None:
    folder, root = debate_folder(tmp_path)
    directory = in_flight_dir(folder)
    directory.mkdir()
    pid = os.getpid()
    (directory / f"{pid}-1.json").write_text("{not json")
    (directory / f"{pid}-2.json").write_text(json.dumps({"persona": "a", "pid": pid}))
    (directory / f"{pid}-3.json").write_bytes(b"\xff\xfe")
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    (directory / f"{pid}-4.json").symlink_to(outside)
    (directory / "notes.json").write_text("{}")
    good = InFlightCall(folder, within=root, persona="a", phase="opening", round=1)
    good.start()
    assert [c.persona for c in read_in_flight(folder)] == ["a"]
    good.end()


def test_git_never_sees_in_flight_files(tmp_path: Path) -> None:
    folder, root = debate_folder(tmp_path)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    keep_out_of_git(Root(root))
    call = InFlightCall(folder, within=root, persona="a", phase="opening", round=1)
    call.start()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".in-flight" not in status
    call.end()
