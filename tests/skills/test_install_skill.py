"""`dreamcontext install-skill`: install, reinstall, merge with other packs, uninstall."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamcontext_council import skills
from dreamcontext_council.cli import cli
from dreamcontext_council.errors import UsageError
from dreamcontext_council.resources import skill_packs_dir

from .pack_commands import PACK_DIR, REPO

COUNCIL_FILES = [
    "agents/council-persona.md",
    "agents/council-synthesizer.md",
    "skills/council/SKILL.md",
    "skills/council/debate-protocol.md",
]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["install-skill", *args])
    return result.exit_code, result.stdout, result.stderr


def manifest(target: Path) -> dict:
    return json.loads((target / ".claude" / ".dreamcontext-skills.json").read_text())


def tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.fixture
def two_packs(tmp_path: Path) -> Path:
    """A packs folder with the real council pack and a second pack `review`."""
    packs = tmp_path / "packs"
    shutil.copytree(skill_packs_dir(), packs)
    (packs / "review").mkdir()
    (packs / "review" / "SKILL.md").write_text("---\nname: review\n---\n\n# Review\n")
    (packs / "agents" / "review-critic.md").write_text("---\nname: review-critic\n---\n")
    return packs


def test_install_copies_the_pack_and_records_it(tmp_path: Path) -> None:
    code, out, _ = invoke("--packs", "council", "--target", str(tmp_path))
    assert code == 0
    assert "Installed council" in out
    claude = tmp_path / ".claude"
    assert (claude / "skills/council/SKILL.md").read_text() == (
        PACK_DIR / "council/SKILL.md"
    ).read_text()
    assert (claude / "agents/council-persona.md").read_text() == (
        PACK_DIR / "agents/council-persona.md"
    ).read_text()
    recorded = manifest(tmp_path)["packs"]["council"]["files"]
    assert sorted(recorded) == COUNCIL_FILES
    for relative, digest in recorded.items():
        assert hashlib.sha256((claude / relative).read_bytes()).hexdigest() == digest


def test_target_defaults_to_the_current_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke()[0] == 0
    assert (tmp_path / ".claude/skills/council/SKILL.md").is_file()


def test_reinstall_is_idempotent(tmp_path: Path) -> None:
    invoke("--target", str(tmp_path))
    before = {p: (tmp_path / p).read_bytes() for p in tree(tmp_path) if (tmp_path / p).is_file()}
    code, out, _ = invoke("--target", str(tmp_path))
    assert code == 0
    assert "4 file(s) already up to date" in out
    after = {p: (tmp_path / p).read_bytes() for p in tree(tmp_path) if (tmp_path / p).is_file()}
    assert after == before


def test_a_second_pack_merges_into_the_manifest(tmp_path: Path, two_packs: Path) -> None:
    target = tmp_path / "project"
    target.mkdir()
    skills.install_packs(target, ["council"], packs_dir=two_packs)
    skills.install_packs(target, ["review"], packs_dir=two_packs)
    assert skills.installed_packs(target) == {
        "council": COUNCIL_FILES,
        "review": ["agents/review-critic.md", "skills/review/SKILL.md"],
    }
    skills.uninstall_packs(target, ["council"])
    assert skills.installed_packs(target) == {
        "review": ["agents/review-critic.md", "skills/review/SKILL.md"],
    }
    assert (target / ".claude/skills/review/SKILL.md").is_file()
    assert (target / ".claude/agents/review-critic.md").is_file()
    assert not (target / ".claude/skills/council").exists()
    skills.uninstall_packs(target, ["review"])
    assert not (target / ".claude").exists()


def test_uninstall_removes_exactly_what_it_installed(tmp_path: Path) -> None:
    claude = tmp_path / ".claude"
    (claude / "agents").mkdir(parents=True)
    (claude / "agents" / "mine.md").write_text("my own agent\n")
    (claude / "settings.json").write_text("{}\n")
    invoke("--target", str(tmp_path))
    (claude / "skills" / "council" / "notes.md").write_text("my notes\n")

    code, out, err = invoke("--target", str(tmp_path), "--uninstall")
    assert code == 0, err
    assert "Removed 4 file(s)" in out
    assert tree(tmp_path) == [
        ".claude",
        ".claude/agents",
        ".claude/agents/mine.md",
        ".claude/settings.json",
        ".claude/skills",
        ".claude/skills/council",
        ".claude/skills/council/notes.md",
    ]


def test_uninstall_removes_the_folders_it_created(tmp_path: Path) -> None:
    invoke("--target", str(tmp_path))
    invoke("--target", str(tmp_path), "--uninstall")
    assert tree(tmp_path) == []


def test_uninstall_keeps_a_file_the_user_changed(tmp_path: Path) -> None:
    invoke("--target", str(tmp_path))
    skill = tmp_path / ".claude/skills/council/SKILL.md"
    skill.write_text(skill.read_text() + "\nOur team's extra rule.\n")
    code, _, err = invoke("--target", str(tmp_path), "--uninstall")
    assert code == 0
    assert "kept" in err and "SKILL.md" in err
    assert tree(tmp_path) == [
        ".claude",
        ".claude/skills",
        ".claude/skills/council",
        ".claude/skills/council/SKILL.md",
    ]


def test_uninstall_of_a_pack_not_installed_changes_nothing(tmp_path: Path) -> None:
    code, out, _ = invoke("--target", str(tmp_path), "--uninstall")
    assert code == 0
    assert "council was not installed there." in out
    assert tree(tmp_path) == []


def test_install_refuses_to_overwrite_a_file_it_did_not_install(tmp_path: Path) -> None:
    agents = tmp_path / ".claude/agents"
    agents.mkdir(parents=True)
    (agents / "council-persona.md").write_text("someone else's persona\n")
    code, _, err = invoke("--target", str(tmp_path))
    assert code == 2
    assert "agents/council-persona.md" in err and "--force" in err
    assert tree(tmp_path) == [".claude", ".claude/agents", ".claude/agents/council-persona.md"]

    code, _, _ = invoke("--target", str(tmp_path), "--force")
    assert code == 0
    assert (agents / "council-persona.md").read_text() == (
        PACK_DIR / "agents/council-persona.md"
    ).read_text()


def test_reinstall_upgrades_unchanged_files_but_not_changed_ones(tmp_path: Path) -> None:
    invoke("--target", str(tmp_path))
    recorded = manifest(tmp_path)
    # An older version of the pack was installed: the file on disk matches the manifest.
    old = "old version\n"
    protocol = tmp_path / ".claude/skills/council/debate-protocol.md"
    protocol.write_text(old)
    recorded["packs"]["council"]["files"]["skills/council/debate-protocol.md"] = hashlib.sha256(
        old.encode()
    ).hexdigest()
    (tmp_path / ".claude/.dreamcontext-skills.json").write_text(json.dumps(recorded))
    code, out, _ = invoke("--target", str(tmp_path))
    assert code == 0 and "skills/council/debate-protocol.md" in out
    assert protocol.read_text() == (PACK_DIR / "council/debate-protocol.md").read_text()


def test_unknown_pack_names_the_available_ones(tmp_path: Path) -> None:
    code, _, err = invoke("--packs", "council,nope", "--target", str(tmp_path))
    assert code == 2
    assert err.strip() == "Error: Unknown skill pack 'nope'; available: council."
    assert tree(tmp_path) == []
    with pytest.raises(UsageError):
        skills.install_packs(tmp_path, [" "])


def test_missing_target_is_an_error(tmp_path: Path) -> None:
    code, _, err = invoke("--target", str(tmp_path / "nowhere"))
    assert code == 1
    assert "does not exist" in err


def test_a_broken_manifest_is_reported_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/.dreamcontext-skills.json").write_text("{not json")
    code, _, err = invoke("--target", str(tmp_path))
    assert code == 1
    assert "not valid JSON" in err
    assert (tmp_path / ".claude/.dreamcontext-skills.json").read_text() == "{not json"


def test_json_output(tmp_path: Path) -> None:
    code, out, _ = invoke("--target", str(tmp_path), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["packs"] == ["council"] and sorted(data["written"]) == COUNCIL_FILES


@pytest.mark.slow
def test_works_from_a_non_editable_install(tmp_path: Path) -> None:
    """Build a wheel, install it into a folder, and install the pack from there."""
    # Without hatchling in this environment, pip fetches the build backend itself.
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation,
         "-q", "-w", str(wheels), str(REPO)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, f"cannot build a wheel: {built.stderr.strip()[-300:]}"
    site = tmp_path / "site"
    wheel = next(wheels.glob("dreamcontext_council-*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    probe = subprocess.run(
        [sys.executable, "-c",
         "import dreamcontext_council.resources as r; print(r.skill_packs_dir())"],
        cwd=project, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert Path(probe.stdout.strip()).is_relative_to(site)
    done = subprocess.run(
        [sys.executable, "-m", "dreamcontext_council", "install-skill", "--packs", "council"],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert tree(project / ".claude") == sorted(
        [".dreamcontext-skills.json", "agents", "skills", "skills/council", *COUNCIL_FILES]
    )
