"""Writes that cannot be lost: many real processes on one debate, and a holder killed mid-lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from debate_story import Chair, Runner, entry, spawn

from dreamcontext_council.folder import storage

SLUGS = [f"persona-{n}" for n in range(1, 9)]
FACTS = [f"Fact number {n} arrived mid-round" for n in range(1, 5)]


@pytest.mark.slow
def test_sixteen_processes_at_once_lose_nothing(chair: Chair, workdir: Path) -> None:
    debate_id = chair.new(personas=SLUGS)
    chair.ok("round", "start", debate_id, "1")

    jobs: list[subprocess.Popen[bytes]] = []
    for n, slug in enumerate(SLUGS):
        stance = "A" if n % 2 else "B"
        jobs.append(
            spawn(
                [
                    "verdict",
                    debate_id,
                    slug,
                    "1",
                    "--stance",
                    stance,
                    "--conviction",
                    str(50 + n),
                    "--headline",
                    f"{slug} holds {stance}",
                ],
                chair.root,
                workdir,
            )
        )
        jobs.append(
            spawn(
                [
                    "report",
                    "append",
                    debate_id,
                    slug,
                    "--round",
                    "1",
                    "--body",
                    entry(f"{slug} summary"),
                ],
                chair.root,
                workdir,
            )
        )
    jobs += [spawn(["inject", debate_id, fact], chair.root, workdir) for fact in FACTS]
    assert len(jobs) >= 16

    for job in jobs:
        _, err = job.communicate(timeout=120)
        assert job.returncode == 0, err.decode()

    folder = chair.folder(debate_id)
    verdicts = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))
    assert sorted(verdicts["rounds"]["1"]) == sorted(SLUGS)
    for n, slug in enumerate(SLUGS):
        assert verdicts["rounds"]["1"][slug]["conviction"] == 50 + n
        report = (folder / slug / "report.md").read_text(encoding="utf-8")
        assert report.count("## Round 1 — ") == 1
        assert f"{slug} summary" in report
    debate_md = (folder / "debate.md").read_text(encoding="utf-8")
    for fact in FACTS:
        assert debate_md.count(f"- **[Interlude R1]** {fact}") == 1, fact
    index = json.loads((chair.root / "council" / "index.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in index] == [debate_id]
    assert index[0]["status"] == "round_1_running"
    assert not list(folder.rglob("*.tmp")), "a temp file was left behind"

    # The round can close: every report is there.
    chair.ok("round", "end", debate_id, "1")


HOLDER = """
import sys, time
from pathlib import Path
from dreamcontext_council.folder.storage import locked
with locked(Path(sys.argv[1]), within=None):
    print("locked", flush=True)
    time.sleep(300)
"""


def test_a_killed_lock_holder_does_not_block_the_next_command(
    chair: Chair, council: Runner
) -> None:
    debate_id = chair.new(personas=("risk-auditor",))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(chair.folder(debate_id))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == b"locked"
        os.kill(holder.pid, signal.SIGKILL)
        holder.communicate(timeout=10)  # waits, and closes its pipes
    finally:
        if holder.poll() is None:
            holder.kill()
    started = time.monotonic()
    result = council("inject", debate_id, "The holder died")
    waited = time.monotonic() - started
    assert result.code == 0, result.err
    # Behaviour, not a benchmark: far below the 60 s lock timeout.
    assert waited < 20, f"the next command waited {waited:.1f}s for a dead holder's lock"
    debate_md = (chair.folder(debate_id) / "debate.md").read_text(encoding="utf-8")
    assert "- **[Interlude R0]** The holder died" in debate_md


def test_a_write_that_fails_half_way_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "debate.md"
    path.write_text("old\n")

    def power_cut(*_args: object) -> None:
        raise OSError("power cut before the rename")

    monkeypatch.setattr(storage.os, "replace", power_cut)
    with pytest.raises(OSError):
        storage.atomic_write_text(path, "new\n", within=tmp_path)
    monkeypatch.undo()
    with pytest.raises(UnicodeEncodeError):
        storage.atomic_write_text(path, "not encodable \udcff\n", within=tmp_path)
    assert path.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [path]


def test_the_lock_resolves_a_folder_once_and_stays_re_entrant_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "council_AbC12345"
    real.mkdir()
    link = tmp_path / "linked"
    link.symlink_to(real)
    resolved: list[Path] = []
    real_resolve = Path.resolve

    def counted(self: Path, strict: bool = False) -> Path:
        resolved.append(self)
        return real_resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", counted)
    monkeypatch.setattr(storage, "_lock_keys", {})

    for _ in range(5):
        with (
            storage.locked(real, within=None),
            storage.locked(link, within=None),
        ):  # the same lock: taken once
            pass

    assert resolved == [real, link]


def test_a_lock_held_past_the_timeout_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from dreamcontext_council.errors import CouncilError

    monkeypatch.setattr(storage, "LOCK_TIMEOUT_S", 0.05)
    folder = tmp_path / "council_AbC12345"
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with storage.locked(folder, within=tmp_path):
            taken.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(5)
        with pytest.raises(CouncilError) as refused, storage.locked(folder, within=tmp_path):
            pass
    finally:
        release.set()
        holder.join()
    assert str(refused.value) == (
        "council_AbC12345 stayed locked for 0s by another command; wait for it to finish "
        "and run this command again."
    )
    with storage.locked(folder, within=tmp_path):  # free again once its holder let go
        pass


def test_a_lock_file_that_is_a_link_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    from dreamcontext_council.errors import CouncilError

    folder = tmp_path / "council_AbC12345"
    folder.mkdir()
    (folder / ".council.lock").symlink_to(tmp_path / "not-there")

    with (
        pytest.raises(CouncilError, match="is a link, not a lock file"),
        storage.locked(folder, within=tmp_path),
    ):
        pass
    assert not (tmp_path / "not-there").exists()
