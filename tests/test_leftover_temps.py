"""A writer killed before its rename leaves a temp; the sweep and `run <id>` remove it.

The leftovers are made the way a crash makes them: a real process writes through
`atomic_write_text` and is SIGKILLed just before the rename.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from faults.support import clean_env, problems, run_council, temp_files

from dreamcontext_council.folder import storage

TOPIC = "Should we migrate the session store from Redis to Postgres?"

# Writes argv[1] through the real atomic_write_text and dies the moment os.replace is
# called: the profiler sees the C call before it runs, so the temp stays and the file
# keeps its old content.
KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from dreamcontext_council.folder.storage import atomic_write_text

def die_before_rename(frame, event, arg):
    if event == "c_call" and arg is os.replace:
        os.kill(os.getpid(), signal.SIGKILL)

sys.setprofile(die_before_rename)
atomic_write_text(Path(sys.argv[1]), "the new version, never renamed into place\\n" * 5000)
"""


def kill_a_writer_of(path: Path) -> Path:
    """Leave the temp a writer of `path` leaves when it is killed before the rename."""
    before = set(path.parent.iterdir())
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], capture_output=True)
    assert done.returncode == -9, done.stderr.decode()
    (temp,) = set(path.parent.iterdir()) - before
    assert re.fullmatch(rf"\.{re.escape(path.name)}\.\d+-[0-9a-f]{{12}}\.tmp", temp.name)
    return temp


def live_temp_beside(path: Path) -> Path:
    """A temp this (live) process is still writing."""
    fd, tmp = storage._temp_beside(path)
    os.close(fd)
    return Path(tmp)


def aged(path: Path, seconds: float) -> Path:
    """`path` (made if missing) last written `seconds` ago."""
    path.touch()
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))
    return path


def test_the_temp_of_a_killed_writer_names_its_pid_and_the_file_keeps_its_old_content(
    tmp_path: Path,
) -> None:
    path = tmp_path / "verdicts.json"
    path.write_text("old\n", encoding="utf-8")

    temp = kill_a_writer_of(path)

    pid = int(temp.name.rsplit(".", 2)[-2].split("-")[0])
    assert pid != os.getpid()
    assert path.read_text(encoding="utf-8") == "old\n"
    assert temp.read_text(encoding="utf-8").startswith("the new version")


def test_sweep_removes_leftovers_of_dead_writers_and_keeps_live_ones(tmp_path: Path) -> None:
    folder = tmp_path / "council_AbC12345"
    persona = folder / "risk-auditor"
    persona.mkdir(parents=True)
    (folder / "debate.md").write_text("debate\n", encoding="utf-8")
    (persona / "report.md").write_text("report\n", encoding="utf-8")
    dead = [kill_a_writer_of(folder / "debate.md"), kill_a_writer_of(persona / "report.md")]
    live = live_temp_beside(folder / "verdicts.json")
    old_format_fresh = folder / ".round-log.md.0123456789ab.tmp"
    old_format_fresh.write_text("x", encoding="utf-8")
    old_format_stale = aged(folder / ".round-log.md.ba9876543210.tmp", 2 * 3600)
    not_temps = [
        aged(folder / ".notes.tmp", 2 * 86400),  # hidden and .tmp, but not our name
        aged(folder / "draft.md.0123456789ab.tmp", 2 * 86400),  # not hidden
        folder / "debate.md",
        persona / "report.md",
    ]

    removed = storage.remove_leftover_temps(folder)

    assert sorted(removed) == sorted([*dead, old_format_stale])
    assert not any(p.exists() for p in removed)
    assert live.exists(), "the temp of a live writer was removed"
    assert old_format_fresh.exists(), "a pid-less temp younger than an hour was removed"
    assert all(p.exists() for p in not_temps)
    assert storage.remove_leftover_temps(folder) == []


def test_sweep_removes_a_live_pids_temp_only_once_it_is_a_day_old(tmp_path: Path) -> None:
    # A temp that old cannot be a write in progress: its pid has been reused.
    recent = aged(live_temp_beside(tmp_path / "debate.md"), 3600)
    ancient = aged(live_temp_beside(tmp_path / "verdicts.json"), 2 * 86400)

    assert storage.remove_leftover_temps(tmp_path) == [ancient]
    assert recent.exists()


def test_sweep_without_recursion_leaves_subfolders_alone(tmp_path: Path) -> None:
    (tmp_path / "council_AbC12345").mkdir()
    top = kill_a_writer_of(tmp_path / "index.json")
    below = kill_a_writer_of(tmp_path / "council_AbC12345" / "debate.md")

    assert storage.remove_leftover_temps(tmp_path, recursive=False) == [top]
    assert below.exists()


def test_sweep_of_a_missing_folder_removes_nothing(tmp_path: Path) -> None:
    assert storage.remove_leftover_temps(tmp_path / "gone") == []
    assert storage.remove_leftover_temps(tmp_path / "gone", recursive=False) == []


def test_run_resumes_a_debate_with_leftovers_removes_them_and_completes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(tmp_path / "home")
    first = run_council(
        ["run", "--topic", TOPIC, "--rounds", "1", "--max-calls", "2", "--json"], env, work
    )
    assert first.code == 0, first.text
    summary = json.loads(first.out)
    assert summary["stopped"] == "budget"
    root = work / "_dream_context"
    folder = root / "council" / summary["id"]
    persona = next(p for p in folder.iterdir() if (p / "context-and-persona.md").exists())
    leftovers = [
        kill_a_writer_of(folder / "debate.md"),
        kill_a_writer_of(folder / "verdicts.json"),
        kill_a_writer_of(persona / "context-and-persona.md"),
        kill_a_writer_of(root / "council" / "index.json"),
    ]
    keep = live_temp_beside(folder / "round-log.md")  # this test is alive: a write in progress

    resumed = run_council(["run", summary["id"], "--quiet"], env, work)

    assert resumed.code == 0, resumed.text
    assert "complete" in resumed.text
    assert not any(p.exists() for p in leftovers)
    assert temp_files(root) == [keep]
    keep.unlink()
    assert problems(root, complete=True) == []
