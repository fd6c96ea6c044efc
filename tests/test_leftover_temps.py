"""A writer killed before its rename leaves a temp, and a `new` killed before its rename
leaves the folder it was building; the sweeps, `new` and `run <id>` remove them.

The leftovers are made the way a crash makes them: a real process writes through
`atomic_write_text` (or runs `council new`) and is SIGKILLed just before the rename.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from faults.support import clean_env, problems, run_council, temp_files

from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.folder import leftovers, storage

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
atomic_write_text(
    Path(sys.argv[1]), "the new version, never renamed into place\\n" * 5000, within=None
)
"""

# `council new` that dies the moment it renames the debate folder it built into place.
KILLED_NEW = """
import os, signal, sys
from dreamcontext_council.cli import main

def die_before_rename(frame, event, arg):
    if event == "c_call" and arg is os.rename:
        os.kill(os.getpid(), signal.SIGKILL)

sys.setprofile(die_before_rename)
sys.argv[1:1] = ["council", "new"]
main()
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

    removed = leftovers.remove_leftover_temps(folder)

    assert sorted(removed) == sorted([*dead, old_format_stale])
    assert not any(p.exists() for p in removed)
    assert live.exists(), "the temp of a live writer was removed"
    assert old_format_fresh.exists(), "a pid-less temp younger than an hour was removed"
    assert all(p.exists() for p in not_temps)
    assert leftovers.remove_leftover_temps(folder) == []


def test_sweep_removes_a_live_pids_temp_only_once_it_is_a_day_old(tmp_path: Path) -> None:
    # A temp that old cannot be a write in progress: its pid has been reused.
    recent = aged(live_temp_beside(tmp_path / "debate.md"), 3600)
    ancient = aged(live_temp_beside(tmp_path / "verdicts.json"), 2 * 86400)

    assert leftovers.remove_leftover_temps(tmp_path) == [ancient]
    assert recent.exists()


def test_sweep_without_recursion_leaves_subfolders_alone(tmp_path: Path) -> None:
    (tmp_path / "council_AbC12345").mkdir()
    top = kill_a_writer_of(tmp_path / "index.json")
    below = kill_a_writer_of(tmp_path / "council_AbC12345" / "debate.md")

    assert leftovers.remove_leftover_temps(tmp_path, recursive=False) == [top]
    assert below.exists()


def test_sweep_of_a_missing_folder_removes_nothing(tmp_path: Path) -> None:
    assert leftovers.remove_leftover_temps(tmp_path / "gone") == []
    assert leftovers.remove_leftover_temps(tmp_path / "gone", recursive=False) == []


def test_run_resumes_a_debate_with_leftovers_removes_them_and_completes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(tmp_path / "home")
    first = run_council(
        ["run", "--topic", TOPIC, "--rounds", "1", "--max-calls", "2", "--json"], env, work
    )
    assert first.code == EXIT_STOPPED, first.text
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

    # The cap of 2 calls is remembered; this resume lifts it.
    resumed = run_council(["run", summary["id"], "--quiet", "--max-calls", "100"], env, work)

    assert resumed.code == 0, resumed.text
    assert "complete" in resumed.text
    assert not any(p.exists() for p in leftovers)
    assert temp_files(root) == [keep]
    keep.unlink()
    assert problems(root, complete=True) == []


def kill_a_new(work: Path, env: dict[str, str]) -> Path:
    """Leave the folder a `council new` leaves when it is killed before its rename."""
    done = subprocess.run(
        [sys.executable, "-c", KILLED_NEW, TOPIC, "--personas", "cognitive"],
        cwd=work,
        env=env,
        capture_output=True,
    )
    assert done.returncode == -9, done.stderr.decode()
    council = work / "_dream_context" / "council"
    [built] = [p for p in council.iterdir() if p.name.startswith(".new-")]
    assert re.fullmatch(r"\.new-council_[A-Za-z0-9]{8}\.\d+", built.name), built.name
    assert list(built.rglob("context-and-persona.md")), "killed before the personas were seated"
    return built


def test_new_removes_the_folder_a_killed_new_was_building(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(tmp_path / "home")
    built = kill_a_new(work, env)
    listed = run_council(["list", "--all", "--json"], env, work)
    assert listed.code == 0, listed.text
    assert json.loads(listed.out) == []  # never a debate: nothing lists it

    again = run_council(["new", TOPIC, "--personas", "cognitive"], env, work)

    assert again.code == 0, again.text
    assert not built.exists()
    council = work / "_dream_context" / "council"
    assert [p.name for p in council.iterdir() if p.is_dir()] == [again.last_line]
    assert problems(work / "_dream_context") == []


def test_run_removes_the_folder_a_killed_new_was_building(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(tmp_path / "home")
    first = run_council(["new", TOPIC, "--personas", "cognitive", "--rounds", "1"], env, work)
    assert first.code == 0, first.text
    built = kill_a_new(work, env)

    resumed = run_council(["run", first.last_line, "--quiet"], env, work)

    assert resumed.code == 0, resumed.text
    assert not built.exists()


def test_staging_sweep_removes_dead_writers_folders_only(tmp_path: Path) -> None:
    def folder(name: str, age: float = 0) -> Path:
        path = tmp_path / name
        (path / "council").mkdir(parents=True)
        return aged(path, age) if age else path

    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    dead = folder(f".new-council_AbC12345.{dead_pid}")
    live = folder(f".new-council_XyZ98765.{os.getpid()}")
    live_but_ancient = folder(f".new-council_Old11111.{os.getpid()}", 2 * 86400)
    pidless_stale = folder(".new-council_Pre22222", 2 * 3600)
    pidless_fresh = folder(".new-council_Pre33333")
    kept = [
        live,
        pidless_fresh,
        folder("council_AbC12345", 2 * 86400),  # a debate
        folder(".newer", 2 * 86400),  # not a staging name
        aged(tmp_path / f".new-council_File4444.{dead_pid}", 2 * 86400),  # a file, not a folder
    ]

    removed = leftovers.remove_leftover_staging(tmp_path)

    assert sorted(removed) == sorted([dead, live_but_ancient, pidless_stale])
    assert not any(p.exists() for p in removed)
    assert all(p.exists() for p in kept)
    assert leftovers.remove_leftover_staging(tmp_path) == []
    assert leftovers.remove_leftover_staging(tmp_path / "gone") == []


def test_the_staging_sweep_makes_no_system_call_for_a_debate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(40):
        (tmp_path / f"council_Deb{n:05d}").mkdir()
    stale = tmp_path / ".new-council_Pre22222"
    stale.mkdir()
    aged(stale, 2 * 3600)
    looked_at: list[str] = []

    def counting(real: Any) -> Any:
        def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            looked_at.append(os.fspath(path))
            return real(path, *args, **kwargs)

        return counted

    monkeypatch.setattr(os, "lstat", counting(os.lstat))
    monkeypatch.setattr(os, "stat", counting(os.stat))

    assert leftovers.remove_leftover_staging(tmp_path) == [stale]
    assert looked_at
    assert not [p for p in looked_at if "council_Deb" in p]


def test_new_builds_its_folder_without_a_root_of_its_own(
    root_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamcontext_council.actions import convene
    from dreamcontext_council.folder.paths import Root
    from dreamcontext_council.rules.roster import PersonaSpec

    written: list[str] = []
    real_replace = os.replace

    def recorded(source: str, target: str) -> None:
        written.append(os.fspath(target))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", recorded)
    specs = [PersonaSpec(f"persona-{n}", f"You are persona {n}.") for n in range(1, 5)]

    debate = convene.new_debate(Root(root_path), TOPIC, personas=specs)

    # Inside the hidden folder: the debate's own files, each once (debate.md too, with all
    # its personas); no index, live file or ignore file of a root of its own.
    staged = [p for p in written if "/.new-" in p]
    names = sorted(p.split(f"/{debate.id}/", 1)[-1] for p in staged)
    assert names == sorted(
        ["debate.md", "round-log.md", "verdicts.json"]
        + [
            f"persona-{n}/{name}"
            for n in range(1, 5)
            for name in ("context-and-persona.md", "report.md")
        ]
    )
    assert debate.personas == [f"persona-{n}" for n in range(1, 5)]
    assert not list(root_path.glob("council/.new-*"))


def test_new_refuses_a_persona_seated_twice_and_leaves_nothing(root_path: Path) -> None:
    from dreamcontext_council.actions import convene
    from dreamcontext_council.errors import UsageError
    from dreamcontext_council.folder.paths import Root
    from dreamcontext_council.rules.roster import PersonaSpec

    twice = [PersonaSpec("risk", "You weigh risk."), PersonaSpec("risk", "You weigh it again.")]
    with pytest.raises(UsageError, match="Persona 'risk' already sits on council_"):
        convene.new_debate(Root(root_path), TOPIC, personas=twice)
    with pytest.raises(UsageError, match="persona text for 'empty' is empty"):
        convene.new_debate(Root(root_path), TOPIC, personas=[PersonaSpec("empty", "  ")])
    assert not root_path.exists() or not list(root_path.glob("council/*"))


def test_writes_make_a_folder_only_when_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    real_mkdir = os.mkdir

    def counted(path: Any, *args: Any, **kwargs: Any) -> None:
        made.append(os.fspath(path))
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", counted)
    report = tmp_path / "council_AbC12345" / "persona-1" / "report.md"
    usage = tmp_path / "council_AbC12345" / "usage.jsonl"

    storage.atomic_write_text(report, "first\n", within=tmp_path)
    storage.append_line(usage, '{"n": 1}', within=tmp_path)
    assert set(made) == {str(report.parent.parent), str(report.parent)}
    made.clear()

    storage.atomic_write_text(report, "second\n", within=tmp_path)
    storage.append_line(usage, '{"n": 2}', within=tmp_path)
    assert made == []
    assert report.read_text() == "second\n"
    assert usage.read_text() == '{"n": 1}\n{"n": 2}\n'
