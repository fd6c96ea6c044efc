"""SIGKILL `council run` at random moments, then resume until the debate is complete.

The scripted provider answers after DREAMCONTEXT_SCRIPTED_DELAY seconds, which widens
every window between a call and its write. After each kill every file must parse; at the
end every debate is complete, usage.jsonl shows no persona answer asked for twice, and
the temps the kills left (a kill between a temp's creation and its rename) are gone, as
are the hidden folders of a `new` killed before it renamed the debate into place.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dreamcontext_council.folder import frontmatter_io

from .support import (
    asked_twice,
    clean_env,
    council_argv,
    debate_ids,
    problems,
    report,
    run_council,
    scaled,
    temp_files,
    usage_records,
)

TOPIC = "Should we migrate the session store from Redis to Postgres?"
NEW = ["run", "--topic", TOPIC, "--options", "A=Migrate now,B=Stay on Redis", "--rounds", "3"]
SEED = int(os.environ.get("DREAMCONTEXT_FAULT_SEED", "7"))


@dataclass
class KillLog:
    """Where each kill landed, for the long suite's report."""

    kills: int = 0
    landed: Counter[str] = field(default_factory=Counter)
    debates: int = 0
    temps_by_kills: int = 0  # temps that appeared with a kill (killed before the rename)
    built_by_kills: int = 0  # hidden folders of a `new` killed before its rename


def _status(root: Path) -> str:
    ids = debate_ids(root)
    debate_md = root / "council" / ids[0] / "debate.md" if ids else None
    if debate_md is None or not debate_md.exists():
        return "before the debate existed"
    meta, _ = frontmatter_io.parse(debate_md.read_text(encoding="utf-8"), "debate.md")
    return str(meta.get("status"))


def _kill_after(argv: list[str], env: dict[str, str], cwd: Path, delay: float) -> bool:
    """Start `argv`, SIGKILL it after `delay` seconds; False when it finished first."""
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        process.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return True


def kill_and_resume(base: Path, kills: int, per_debate: int, rng: random.Random) -> KillLog:
    """Hold debates, each killed up to `per_debate` times, until `kills` kills have landed."""
    log = KillLog()
    env = clean_env(base / "home", DREAMCONTEXT_SCRIPTED_DELAY="0.05")
    # One run without a kill: how long a whole debate takes here, so kills spread over it.
    probe = base / "probe"
    probe.mkdir()
    started = time.perf_counter()
    process = subprocess.Popen(
        council_argv(*NEW, "--quiet"), env=env, cwd=probe, stdout=subprocess.DEVNULL
    )
    born = None  # when the debate folder appeared: before it, the interpreter is starting
    while process.poll() is None:
        if born is None and debate_ids(probe / "_dream_context"):
            born = time.perf_counter() - started
        time.sleep(0.005)
    span = time.perf_counter() - started
    assert process.returncode == 0
    born = born if born is not None else 0.0
    while log.kills < kills:
        log.debates += 1
        work = base / f"debate-{log.debates}"
        work.mkdir()
        root = work / "_dream_context"
        temps: set[Path] = set()
        built: set[Path] = set()
        for _ in range(per_debate):
            if log.kills >= kills:
                break
            ids = [i for i in debate_ids(root) if (root / "council" / i / "debate.md").exists()]
            args = ["run", ids[0], "--quiet"] if ids else [*NEW, "--quiet"]
            # One kill in ten lands while the interpreter starts; the others while it works.
            moment = rng.uniform(0.0, born) if rng.random() < 0.1 else rng.uniform(born, span)
            if not _kill_after(council_argv(*args), env, work, moment):
                break  # the debate finished before this kill
            log.kills += 1
            log.landed[_status(root)] += 1
            log.temps_by_kills += len(set(temp_files(root)) - temps)
            temps.update(temp_files(root))
            log.built_by_kills += len(set((root / "council").glob(".new-*")) - built)
            built.update((root / "council").glob(".new-*"))
            broken = problems(root)
            assert not broken, f"after kill {log.kills}: {broken}"
        ids = [i for i in debate_ids(root) if (root / "council" / i / "debate.md").exists()]
        if not ids:  # every kill landed before the debate was written: start it once more
            done = run_council([*NEW, "--quiet"], env, work)
            assert done.code == 0, done.text
            ids = debate_ids(root)
        for debate_id in ids:
            done = run_council(["run", debate_id, "--quiet"], env, work)
            assert done.code == 0, f"resume of {debate_id} failed: {done.text}"
            assert "complete" in done.text
            folder = root / "council" / debate_id
            twice = asked_twice(folder)
            assert not twice, f"{debate_id}: persona answers asked twice: {twice}"
            assert usage_records(folder), f"{debate_id}: no usage recorded"
            left = temp_files(folder)
            assert not left, f"{debate_id}: temps left after the resume: {left}"
        # The resume also tidies index.json's folder and the live file's.
        left = [p for p in temp_files(root) if p.parent in (root / "council", root / "tmp")]
        assert not left, f"temps left after the resumes: {left}"
        staging = [p.name for p in (root / "council").glob(".new-*")]
        assert not staging, f"folders a killed `new` was building, left after resumes: {staging}"
        broken = problems(root, complete=True)
        assert not broken, broken
    return log


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_finishes_cleanly(tmp_path: Path) -> None:
    log = kill_and_resume(tmp_path, scaled(5, 50), scaled(3, 5), random.Random(SEED))
    assert log.kills == scaled(5, 50)
    report(
        "sigkill",
        kills=log.kills,
        debates=log.debates,
        landed=dict(log.landed),
        temp_files_by_kills=log.temps_by_kills,
        new_folders_by_kills=log.built_by_kills,
        new_folders_left=len(list(tmp_path.glob("*/_dream_context/council/.new-*"))),
        temp_files_left=len(temp_files(tmp_path)),
    )
