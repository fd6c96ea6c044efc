"""Debates in a git repository: nothing machine-local is staged, and after `git-setup`
branches that each moved debates on merge without a conflict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from debate_story import Chair, inprocess_runner, subprocess_runner
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment

from dreamcontext_council.folder import frontmatter_io


class Repo:
    """A git repository in a temp folder, with its own config and none of the user's."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path = path
        self.env = env

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=self.env, capture_output=True, text=True
        )
        if check:
            assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
        return done

    def commit_all(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def staged(self) -> list[str]:
        self.git("add", "-A")
        return self.git("diff", "--cached", "--name-only").stdout.split()


@pytest.fixture
def repo(tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Repo]:
    """`workdir` as a fresh git repository on branch main, with one empty commit."""
    config = tmp_path / "gitconfig"
    config.write_text("")
    # The driver git runs, and every git a command runs, read this config, never the user's.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    env = clean_environment(os.environ, tmp_path / "home")
    repository = Repo(workdir, env)
    repository.git("init", "-q", "-b", "main")
    repository.git("config", "user.name", "Council Test")
    repository.git("config", "user.email", "council@example.invalid")
    repository.commit_all("start")
    yield repository


def _machine_local(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name in (".council.lock", ".run.lock", "run.json", ".council-live.json")
        or name.endswith(".tmp")
        or "/.new-" in path
        or (path.startswith("_dream_context/tmp/") and name != ".gitignore")
    )


def test_a_run_stages_only_debate_content(repo: Repo, root_path: Path) -> None:
    council = subprocess_runner(repo.path, root_path)
    result = council("run", "--topic", "Redis or Postgres?", "--options", "A=Migrate,B=Stay")
    assert result.code == 0, result.err
    (debate_id,) = (p.name for p in (root_path / "council").iterdir() if p.is_dir())
    folder = root_path / "council" / debate_id
    # What a run killed mid-write leaves beside the files a finished run leaves.
    (folder / "run.json").write_text('{"pid": 4242, "host": "box", "started_at": "x"}\n')
    (folder / "growth-cfo").mkdir(exist_ok=True)
    (folder / "growth-cfo" / ".report.md.4242-0123456789ab.tmp").write_text("half")
    (root_path / "council" / ".new-council_Zz9Zz9Zz.4242").mkdir()
    (root_path / "council" / ".new-council_Zz9Zz9Zz.4242" / "debate.md").write_text("half")
    local = [
        folder / ".council.lock",
        folder / ".run.lock",
        root_path / "council" / ".council.lock",
    ]
    assert all(p.exists() for p in local)
    assert (root_path / "tmp" / ".council-live.json").exists()

    staged = repo.staged()

    assert [p for p in staged if _machine_local(p)] == []
    assert f"_dream_context/council/{debate_id}/debate.md" in staged
    assert f"_dream_context/council/{debate_id}/round-log.md" in staged
    assert "_dream_context/council/index.json" in staged
    # The ignore files are committed with the debates, so every clone has them from the start.
    assert {"_dream_context/council/.gitignore", "_dream_context/tmp/.gitignore"} <= set(staged)


def test_a_node_tool_ignore_in_tmp_is_kept(repo: Repo, root_path: Path) -> None:
    (root_path / "tmp").mkdir(parents=True)
    (root_path / "tmp" / ".gitignore").write_text("*\n!keep.txt\n")
    chair = Chair(inprocess_runner(root_path), root_path)
    chair.new(personas=("risk-auditor",))
    assert (root_path / "tmp" / ".gitignore").read_text() == "*\n!keep.txt\n"
    assert [p for p in repo.staged() if _machine_local(p)] == []


def test_git_setup_is_idempotent_and_needs_a_repository(
    repo: Repo, root_path: Path, tmp_path: Path
) -> None:
    cli = inprocess_runner(root_path)
    first = cli("git-setup", "--json")
    assert first.code == 0, first.err
    assert first.json()["registered"] and first.json()["added_attributes"]
    attributes = (root_path / ".gitattributes").read_text()
    second = cli("git-setup", "--json")
    assert second.code == 0
    assert second.json()["registered"] == [] and second.json()["added_attributes"] == []
    assert (root_path / ".gitattributes").read_text() == attributes
    drivers = repo.git("config", "--local", "--get-regexp", r"^merge\.dreamcontext-").stdout
    assert "merge-driver verdicts %O %A %B" in drivers
    check = repo.git("check-attr", "merge", "_dream_context/council/council_AbC12345/verdicts.json")
    assert check.stdout.strip().endswith("merge: dreamcontext-verdicts")

    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    refused = inprocess_runner(elsewhere / "_dream_context")("git-setup")
    assert refused.code == 2
    assert "not inside a git repository; run `git init`" in refused.err
    assert list(elsewhere.iterdir()) == []  # nothing written on an error


def test_install_skill_offers_git_setup_and_runs_it_when_asked(repo: Repo) -> None:
    offered = council_cli(repo, "install-skill", "--target", str(repo.path), "--json")
    assert "council git-setup" in offered["git_setup"]
    assert repo.git("config", "--get-regexp", "merge", check=False).stdout == ""
    done = council_cli(repo, "install-skill", "--target", str(repo.path), "--git-setup", "--json")
    assert "Git merge drivers set up" in done["git_setup"]
    assert "merge-driver report" in repo.git("config", "--get-regexp", "merge").stdout
    again = council_cli(repo, "install-skill", "--target", str(repo.path), "--json")
    assert again["git_setup"] is None  # set up already: nothing more to offer


def council_cli(repo: Repo, *args: str) -> Any:
    """`dreamcontext ARGS` (top level) as a real process in the repository; its JSON."""
    done = subprocess.run(
        [sys.executable, "-m", "dreamcontext_council", *args],
        cwd=repo.path,
        env=repo.env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _debate_meta(root_path: Path, debate_id: str) -> dict[str, object]:
    text = (root_path / "council" / debate_id / "debate.md").read_text()
    return frontmatter_io.parse(text, "debate.md")[0]


def test_two_branches_with_a_debate_each_merge_cleanly(repo: Repo, root_path: Path) -> None:
    chair = Chair(inprocess_runner(root_path), root_path)
    chair.ok("git-setup")
    first = chair.new("Adopt Rust?", personas=("risk-auditor",))
    repo.commit_all("a first debate")
    repo.git("checkout", "-q", "-b", "other")
    on_other = chair.new("Move to Postgres?", personas=("growth-cfo",))
    repo.commit_all("a debate on the other branch")
    repo.git("checkout", "-q", "main")
    chair.ok("round", "start", first, "1")
    on_main = chair.new("Hire a DBA?", personas=("user-advocate",))
    repo.commit_all("a debate on main")

    merged = repo.git("merge", "--no-edit", "other", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    index = json.loads((root_path / "council" / "index.json").read_text())
    assert sorted(e["id"] for e in index) == sorted([first, on_other, on_main])
    assert next(e for e in index if e["id"] == first)["status"] == "round_1_running"
    listed = chair.ok("list", "--all", "--json")
    assert {d["id"] for d in json.loads(listed)} == {first, on_other, on_main}
    assert repo.git("status", "--porcelain").stdout == ""


def test_personas_answered_on_two_branches_merge_cleanly(repo: Repo, root_path: Path) -> None:
    chair = Chair(inprocess_runner(root_path), root_path)
    chair.ok("git-setup")
    personas = ("risk-auditor", "growth-cfo", "user-advocate", "ops-lead")
    debate_id = chair.new(personas=personas)
    chair.ok("round", "start", debate_id, "1")
    repo.commit_all("round 1 started")
    repo.git("checkout", "-q", "-b", "other")
    chair.submit(debate_id, "user-advocate", 1, "B", 55)
    chair.submit(debate_id, "ops-lead", 1, "A", 50)
    repo.commit_all("two personas answered on the other branch")
    repo.git("checkout", "-q", "main")
    chair.submit(debate_id, "risk-auditor", 1, "A", 60)
    chair.submit(debate_id, "growth-cfo", 1, "A", 65)
    repo.commit_all("two personas answered on main")

    merged = repo.git("merge", "--no-edit", "other", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    verdicts = json.loads((root_path / "council" / debate_id / "verdicts.json").read_text())
    assert sorted(verdicts["rounds"]["1"]) == sorted(personas)
    ended = chair.run("round", "end", debate_id, "1")
    assert ended.code == 0, ended.err
    assert _debate_meta(root_path, debate_id)["status"] == "round_1_complete"


def test_a_real_verdict_conflict_is_left_for_git_to_report(repo: Repo, root_path: Path) -> None:
    chair = Chair(inprocess_runner(root_path), root_path)
    chair.ok("git-setup")
    debate_id = chair.new(personas=("risk-auditor",))
    chair.ok("round", "start", debate_id, "1")
    repo.commit_all("round 1 started")
    repo.git("checkout", "-q", "-b", "other")
    chair.submit(debate_id, "risk-auditor", 1, "B", 40)
    repo.commit_all("risk-auditor says B")
    repo.git("checkout", "-q", "main")
    chair.submit(debate_id, "risk-auditor", 1, "A", 90)
    repo.commit_all("risk-auditor says A")

    merged = repo.git("merge", "--no-edit", "other", check=False)

    assert merged.returncode != 0
    conflicted = repo.git("diff", "--name-only", "--diff-filter=U").stdout.split()
    assert f"_dream_context/council/{debate_id}/verdicts.json" in conflicted
    text = (root_path / "council" / debate_id / "verdicts.json").read_text()
    assert "<<<<<<< ours" in text and ">>>>>>> theirs" in text


def test_a_command_adds_only_lines_to_the_round_log(repo: Repo, root_path: Path) -> None:
    chair = Chair(inprocess_runner(root_path), root_path)
    debate_id = chair.new(personas=("risk-auditor",), rounds=1)
    repo.commit_all("a debate")
    log = f"_dream_context/council/{debate_id}/round-log.md"
    steps = [
        lambda: chair.ok("round", "start", debate_id, "1"),
        lambda: chair.submit(debate_id, "risk-auditor", 1),
        lambda: chair.ok("round", "end", debate_id, "1"),
        lambda: chair.close(debate_id),
    ]
    added = 0
    for step in steps:
        step()
        diff = repo.git("diff", "--unified=0", "--", log).stdout
        changed = [
            line
            for line in diff.split("\n")
            if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))
        ]
        assert all(line.startswith("+") for line in changed), diff
        added += len(changed)
        repo.commit_all("a step")
    assert added >= 6  # round start, round end and complete each log an entry


def test_reading_commands_change_nothing_git_sees(repo: Repo, root_path: Path) -> None:
    chair = Chair(inprocess_runner(root_path), root_path)
    debate_id = chair.new(personas=("risk-auditor",))
    chair.ok("round", "start", debate_id, "1")
    chair.submit(debate_id, "risk-auditor", 1)
    repo.commit_all("a debate in round 1")
    for args in (
        ("list",),
        ("show", debate_id),
        ("board", debate_id),
        ("timeline", debate_id),
        ("summaries", debate_id, "1"),
    ):
        chair.ok(*args)
    assert repo.git("status", "--porcelain").stdout == ""
