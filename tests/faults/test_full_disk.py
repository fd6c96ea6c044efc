"""A full disk: every writing command fails with a clear error and changes nothing.

The debate lives on a small tmpfs that the test fills (all data blocks, or all inodes),
which needs root to mount; the same cases also run with the write error injected by the
kernel without root, through a file-size limit (RLIMIT_FSIZE) on the command's process.
Every command then exits 1 naming the problem and the file, every file is byte-for-byte
what it was, no temporary file is left behind, and once space is freed the same commands
work.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dreamcontext_council import (
    Root,
    append_report,
    new_debate,
    record_verdict,
    start_round,
)
from dreamcontext_council.rules.roster import PRESETS

from .support import (
    asked_twice,
    clean_env,
    debate_ids,
    no_traceback,
    problems,
    report,
    run_council,
    scaled,
    temp_files,
    tree_bytes,
)

ENTRY = (
    "### Executive Summary\nMigrate, staged.\n\n### Position\nA.\n\n### Reasoning\nLoad.\n\n"
    "### Reactions to peers\nNone yet.\n\n### Open questions\nCost?\n"
)


def _mount(where: Path, options: str) -> str | None:
    """Mount a tmpfs at `where`; the reason it could not, or None."""
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        problem = f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode})"
        if os.geteuid() == 0:  # CI runs as root: there a mount that fails is a failure
            pytest.fail(problem)
        return f"{problem}; run as root"
    return None


# What each way of running out of room makes the kernel answer.
REFUSAL = {
    "blocks": "No space left on device",
    "inodes": "No space left on device",
    "file-size limit": "File too large",
}


@pytest.fixture(params=list(REFUSAL))
def disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A 4 MiB tmpfs (with few inodes for the `inodes` case), unmounted afterwards; for the
    file-size limit, a plain folder."""
    where = tmp_path / "disk"
    if request.param == "file-size limit":
        where.mkdir()
        yield where, str(request.param)
        return
    options = "size=4m,mode=0755" + (",nr_inodes=400" if request.param == "inodes" else "")
    reason = _mount(where, options)
    if reason:
        pytest.skip(reason)
    try:
        yield where, str(request.param)
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(where: Path, kind: str) -> list[Path]:
    """Use up the disk's data blocks or its inodes; returns the filler files."""
    fillers: list[Path] = []
    if kind == "file-size limit":
        return fillers  # the limit is set on each command's process instead
    if kind == "inodes":
        while True:
            path = where / f".filler-{len(fillers)}"
            try:
                path.touch()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                return fillers
            fillers.append(path)
    path = where / ".filler"
    fillers.append(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 1 << 12, 1):
            try:
                while os.write(fd, b"\0" * size):
                    pass
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return fillers


def _debate(where: Path) -> tuple[Root, str]:
    root = Root(where / "_dream_context")
    root.council.mkdir(parents=True)
    personas = PRESETS["cognitive"][:3]
    options = [{"key": "A", "label": "Migrate"}, {"key": "B", "label": "Stay"}]
    debate_id = new_debate(root, "Migrate?", options=options, personas=personas).id
    start_round(root, debate_id, 1)
    record_verdict(root, debate_id, "synthesizer", 1, stance="A", conviction=60, headline="Go")
    append_report(root, debate_id, "synthesizer", ENTRY, number=1)
    return root, debate_id


def _writers(debate_id: str) -> list[tuple[str, ...]]:
    return [
        ("verdict", debate_id, "contrarian", "1", "--stance", "B", "--conviction", "70",
         "--headline", "Stay on Redis"),
        ("report", "append", debate_id, "epistemologist", "--round", "1", "--body", ENTRY),
        ("inject", debate_id, "Peak load is 40k writes per second."),
        ("question", debate_id, "contrarian", "What breaks first under failover?"),
        ("research", "add", debate_id, "contrarian", "pool limits", "--body", "pgbouncer caps."),
        ("agent", "create", debate_id, "systems-thinker", "--body", "You trace feedback loops."),
        ("new", "Should we shard the sessions table?"),
        ("run", debate_id, "--quiet"),
        ("run", "--topic", "Should we shard the sessions table?", "--rounds", "1", "--quiet"),
    ]  # fmt: skip


@pytest.mark.may_skip("mounting a tmpfs needs root")
def test_a_full_disk_fails_every_write_cleanly_and_leaves_the_files_intact(
    disk: tuple[Path, str], tmp_path: Path
) -> None:
    where, kind = disk
    root, debate_id = _debate(where)
    env = clean_env(
        tmp_path / "home", DREAMCONTEXT_ROOT=str(root.path), DREAMCONTEXT_SCRIPTED_DELAY="0"
    )
    fillers = _fill(where, kind)
    limit = 0 if kind == "file-size limit" else None
    before = tree_bytes(root.path)
    for args in _writers(debate_id):
        done = run_council(args, env, where, file_size_limit=limit)
        assert done.code == 1, f"{args[0]}: {done.text}"
        assert no_traceback(done), done.text
        errors = [line for line in done.err.splitlines() if line.startswith("Error: ")]
        assert errors and REFUSAL[kind] in errors[-1], f"{args[0]}: {done.err}"
        assert f"({root.path}{os.sep}" in errors[-1], f"{args[0]} names no file: {errors[-1]}"
        assert f"{os.sep}.new-" not in errors[-1], f"{args[0]} names a hidden path: {errors[-1]}"
        if kind != "file-size limit":
            assert errors[-1].endswith("Free some space and run it again."), errors[-1]
        assert tree_bytes(root.path) == before, f"{args[0]} changed files on a full disk"
        assert not temp_files(root.path), f"{args[0]} left {temp_files(root.path)}"
    for args in (("board", debate_id, "--plain"), ("list", "--all"), ("show", debate_id)):
        done = run_council(args, env, where, file_size_limit=limit)
        assert done.code == 0, f"{args[0]} must still read a full disk: {done.text}"
    assert tree_bytes(root.path) == before
    # With room again, the same debate goes on.
    for path in fillers:
        path.unlink()
    for args in _writers(debate_id)[:3]:
        done = run_council(args, env, where)
        assert done.code == 0, f"{args[0]} after freeing space: {done.text}"
    assert not problems(root.path)
    assert not temp_files(root.path)
    report("full-disk", filled=kind, refused_commands=len(_writers(debate_id)))


@pytest.mark.may_skip("mounting a tmpfs needs root")
@pytest.mark.parametrize("room", [4096 * n for n in (1, 3, 9, 20)][: scaled(2, 4)])
def test_a_disk_that_fills_up_during_a_run_stops_it_cleanly_and_it_resumes(
    tmp_path: Path, room: int
) -> None:
    """With only `room` bytes left, `run` gets some way, then stops with a clean error."""
    where = tmp_path / "disk"
    reason = _mount(where, "size=4m,mode=0755")
    if reason:
        pytest.skip(reason)
    try:
        env = clean_env(tmp_path / "home", DREAMCONTEXT_SCRIPTED_DELAY="0")
        debate_id = _new_debate(where, env)
        (filler,) = _fill(where, "blocks")
        os.truncate(filler, filler.stat().st_size - room)
        first = _run_out_of_room_then_resume(
            where, env, debate_id, "No space left on device", free=filler.unlink
        )
        report("disk-fills-mid-run", room_bytes=room, first_run=first)
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.parametrize("limit", [2048, 4096, 8192][: scaled(2, 3)])
def test_writes_refused_part_way_through_a_run_stop_it_cleanly_and_it_resumes(
    tmp_path: Path, limit: int
) -> None:
    """No file may grow past `limit` bytes (RLIMIT_FSIZE): `run` stops where one would."""
    where = tmp_path / "disk"
    where.mkdir()
    env = clean_env(tmp_path / "home", DREAMCONTEXT_SCRIPTED_DELAY="0")
    debate_id = _new_debate(where, env)
    first = _run_out_of_room_then_resume(where, env, debate_id, "File too large", limit=limit)
    report("file-size-limit-mid-run", limit_bytes=limit, first_run=first)


def _new_debate(where: Path, env: dict[str, str]) -> str:
    topic = "Should we migrate the session store from Redis to Postgres?"
    done = run_council(["new", topic, "--personas", "cognitive", "--rounds", "3"], env, where)
    assert done.code == 0, done.text
    return debate_ids(where / "_dream_context")[0]


def _run_out_of_room_then_resume(
    where: Path,
    env: dict[str, str],
    debate_id: str,
    refusal: str,
    *,
    free: Callable[[], None] | None = None,
    limit: int | None = None,
) -> str:
    """`run` until the writes are refused, check nothing is broken, give room, resume;
    returns how the first run ended ("stopped" or "complete")."""
    root = where / "_dream_context"
    done = run_council(["run", debate_id, "--quiet"], env, where, file_size_limit=limit)
    assert no_traceback(done), done.text
    assert done.code in (0, 1), done.text
    stopped = done.code == 1
    if stopped:
        assert refusal in done.err, done.err
    assert not problems(root), problems(root)
    assert not temp_files(root), temp_files(root)
    if free is not None:
        free()
    done = run_council(["run", debate_id, "--quiet"], env, where)
    assert done.code == 0, done.text
    assert not problems(root, complete=True)
    assert not asked_twice(root / "council" / debate_id)
    return "stopped" if stopped else "complete"
