"""The merge drivers `git-setup` registers, attacked through a cloned repository with real
git: code committed in the work tree is never imported, a driver aimed at a file that is
not a council file leaves it to git's line merge, and a driver that cannot run still
leaves both sides in the file with conflict markers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from debate_story import Chair, inprocess_runner
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment

PERSONAS = ("risk-auditor", "growth-cfo", "user-advocate", "ops-lead")


class Repo:
    """A git repository in a temp folder, with its own config and none of the user's."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path = path
        self.env = env

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=self.env, capture_output=True, text=True
        )
        assert not check or done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
        return done

    def commit_all(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def conflicted(self) -> list[str]:
        return self.git("diff", "-z", "--name-only", "--diff-filter=U").stdout.split("\0")


@pytest.fixture
def repo(tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Repo]:
    """`workdir` as a fresh git repository on branch main, with one empty commit."""
    config = tmp_path / "gitconfig"
    config.write_text("")
    # git-setup (in-process) and the drivers git runs read this config, never the user's.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repository = Repo(workdir, clean_environment(os.environ, tmp_path / "home"))
    repository.git("init", "-q", "-b", "main")
    repository.git("config", "user.name", "Council Test")
    repository.git("config", "user.email", "council@example.invalid")
    repository.commit_all("start")
    yield repository


def _two_branches_move_one_debate(repo: Repo, chair: Chair) -> None:
    """Each branch adds a debate and moves a shared one, so index.json and the shared
    debate.md change on both sides: their drivers run, and merge cleanly."""
    shared = chair.new("Adopt Rust?", personas=("risk-auditor",))
    repo.commit_all("a first debate")
    repo.git("checkout", "-q", "-b", "other")
    chair.new("Move to Postgres?", personas=("growth-cfo",))
    chair.ok("round", "start", shared, "1")
    repo.commit_all("a debate, and round 1, on the other branch")
    repo.git("checkout", "-q", "main")
    chair.new("Hire a DBA?", personas=("user-advocate",))
    chair.ok("inject", shared, "The platform team already runs Postgres.")
    repo.commit_all("a debate, and a fact, on main")


PLANTED = {
    # A module the driver's own imports would find first on the import path.
    "json.py": "open({marker!r}, 'w').write('json.py ran')\n",
    "yaml.py": "open({marker!r}, 'w').write('yaml.py ran')\n",
    # The tool's own package name, committed at the top of the work tree.
    "dreamcontext_council/__init__.py": "open({marker!r}, 'w').write('package ran')\n",
}


@pytest.mark.parametrize("planted", sorted(PLANTED))
def test_a_merge_imports_nothing_from_the_work_tree(
    repo: Repo, root_path: Path, tmp_path: Path, planted: str
) -> None:
    chair = Chair(inprocess_runner(root_path), root_path)
    chair.ok("git-setup")
    marker = tmp_path / "planted-code-ran"
    module = repo.path / planted
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(PLANTED[planted].format(marker=str(marker)))
    repo.commit_all(f"a branch commits {planted}")
    _two_branches_move_one_debate(repo, chair)

    merged = repo.git("merge", "--no-edit", "other", check=False)

    assert not marker.exists(), f"the merge driver imported the committed {planted}"
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert repo.git("status", "--porcelain").stdout == ""


def _line_merge(tmp_path: Path, base: str, ours: str, theirs: str) -> str:
    """git's own line merge of three texts, labelled as the drivers label it."""
    paths = []
    for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
        paths.append(tmp_path / f"line-merge-{name}")
        paths[-1].write_text(text)
    done = subprocess.run(
        ["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs"]
        + [str(p) for p in paths],
        capture_output=True,
        text=True,
    )
    assert done.returncode > 0, "the texts are meant to conflict"
    return done.stdout


# A file outside the council, and versions the council's append-only merges would take.
AIMED = {
    "usage": (
        "my notes.txt",  # git quotes `%P` for the shell: one argument
        "first paragraph\n\nsecond paragraph\n",
        "first paragraph\n\nsecond paragraph\n\nours added this\n",
        "first paragraph\n\nsecond paragraph\n\ntheirs added that\n",
    ),
    "round-log": (
        "docs/plan.md",
        "# Plan\n\n## Step one — 2026-01-01\n\nDo it.\n",
        "# Plan\n\n## Step one — 2026-01-01\n\nDo it.\n\n\n## Ours — 2026-01-02\n\nA.\n",
        "# Plan\n\n## Step one — 2026-01-01\n\nDo it.\n\n## Theirs — 2026-01-03\n\n\nB.\n",
    ),
}


@pytest.mark.parametrize("kind", sorted(AIMED))
def test_a_driver_aimed_at_another_file_leaves_it_to_gits_line_merge(
    repo: Repo, root_path: Path, tmp_path: Path, kind: str
) -> None:
    name, base, ours, theirs = AIMED[kind]
    chair = Chair(inprocess_runner(root_path), root_path)
    chair.ok("git-setup")
    target = repo.path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    # A committed .gitattributes at the top aims a council driver at an ordinary file.
    pattern = "*" + name[name.rindex(".") :]
    (repo.path / ".gitattributes").write_text(f"{pattern} merge=dreamcontext-{kind}\n")
    target.write_text(base)
    repo.commit_all("notes")
    repo.git("checkout", "-q", "-b", "other")
    target.write_text(theirs)
    repo.commit_all("theirs")
    repo.git("checkout", "-q", "main")
    target.write_text(ours)
    repo.commit_all("ours")

    merged = repo.git("merge", "--no-edit", "other", check=False)

    assert merged.returncode != 0, "git's line merge conflicts here; nothing merged silently"
    assert name in repo.conflicted()
    assert target.read_text() == _line_merge(tmp_path, base, ours, theirs)
    assert "could not run" not in merged.stderr  # the driver ran, and chose git's merge


def _broken_tool(tmp_path: Path) -> Path:
    """An interpreter that starts and fails, as a half-removed environment does."""
    program = tmp_path / "broken env" / "bin" / "python"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\necho 'No module named dreamcontext_council' >&2\nexit 1\n")
    program.chmod(0o755)
    return program


@pytest.mark.parametrize("program", ["gone", "broken"])
def test_a_driver_that_cannot_run_leaves_both_sides_marked(
    repo: Repo, root_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, program: str
) -> None:
    cli = inprocess_runner(root_path)
    chair = Chair(cli, root_path)
    # Registered from an environment that was later moved (a path with a space in it).
    interpreter = (
        tmp_path / "moved env" / "bin" / "python" if program == "gone" else _broken_tool(tmp_path)
    )
    with monkeypatch.context() as patch:
        patch.setattr(sys, "executable", str(interpreter))
        setup = cli("git-setup")
    assert setup.code == 0, setup.err
    assert "git-setup` again" in setup.out  # how to register again after a move
    debate_id = chair.new(personas=PERSONAS)
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

    assert merged.returncode != 0
    verdicts = f"_dream_context/council/{debate_id}/verdicts.json"
    assert verdicts in repo.conflicted()
    text = (repo.path / verdicts).read_text()
    assert text.count("<<<<<<< ours") >= 1 and ">>>>>>> theirs" in text
    assert all(f'"{persona}"' in text for persona in PERSONAS), text  # nothing dropped
    assert "git-setup" in merged.stderr  # the fallback says why, and what to run
    if program == "broken":  # the quoted path (with a space) is the program that ran
        assert "No module named dreamcontext_council" in merged.stderr

    if program == "gone":
        doctor = cli("doctor")
        assert doctor.code == 1
        (line,) = [line for line in doctor.out.split("\n") if str(interpreter) in line]
        assert "no longer exists" in line and "council git-setup" in line


def test_a_real_conflict_is_marked_once(repo: Repo, root_path: Path) -> None:
    """A conflict the working driver marks is not merged a second time by the fallback."""
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
    text = (root_path / "council" / debate_id / "verdicts.json").read_text()
    assert text.count("<<<<<<<") == 1 and text.count(">>>>>>>") == 1, text
    assert "could not run" not in merged.stderr


def test_doctor_names_a_driver_an_older_version_registered(repo: Repo, root_path: Path) -> None:
    cli = inprocess_runner(root_path)
    Chair(cli, root_path).new(personas=("risk-auditor",))
    assert cli("git-setup").code == 0
    # The command older versions registered: `-m` without `-I` imports from the work tree.
    old = f"{sys.executable} -m dreamcontext_council council merge-driver usage %O %A %B"
    repo.git("config", "merge.dreamcontext-usage.driver", old)

    doctor = cli("doctor")

    assert doctor.code == 1
    (line,) = [line for line in doctor.out.split("\n") if "dreamcontext-usage" in line]
    assert line.startswith("git config: ") and "council git-setup` again" in line
    assert cli("git-setup").code == 0
    assert cli("doctor").code == 0
