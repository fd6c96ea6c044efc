"""Packaging: the module runs, and a wheel installed into a fresh venv carries its templates."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from debate_story import REPO


def run(args: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False, **kwargs
    )  # type: ignore[call-overload,no-any-return]


def test_python_dash_m_prints_help_with_an_example(workdir: Path) -> None:
    done = run([sys.executable, "-m", "dreamcontext_council", "--help"], workdir)
    assert done.returncode == 0, done.stderr
    assert "council" in done.stdout
    assert "Example" in done.stdout


def test_version_is_reported(workdir: Path) -> None:
    done = run([sys.executable, "-m", "dreamcontext_council", "--version"], workdir)
    assert done.returncode == 0, done.stderr
    assert "0." in done.stdout


@pytest.mark.slow
def test_wheel_installed_into_a_fresh_venv_runs_a_debate_from_anywhere(tmp_path: Path) -> None:
    # Built offline: hatchling comes from the dev extras instead of an isolated download.
    assert importlib.util.find_spec("hatchling"), "install the dev extras: pip install -e '.[dev]'"
    wheels = tmp_path / "wheels"
    built = run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(wheels),
            str(REPO),
        ],
        tmp_path,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("dreamcontext_council-*.whl")

    venv = tmp_path / "venv"
    made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        tmp_path,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # The dependencies come from the test venv; the package itself only from the wheel.
    purelib = Path(
        run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            tmp_path,
        ).stdout.strip()
    )
    (purelib / "_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONIOENCODING": "utf-8"}
    where = run(
        [str(python), "-c", "import dreamcontext_council.resources as r; print(r.templates_dir())"],
        elsewhere,
        env=env,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    script = venv / "bin" / "dreamcontext"
    new = run(
        [str(script), "council", "new", "Packaged or not?", "--options", "A=Yes,B=No"],
        elsewhere,
        env=env,
    )
    assert new.returncode == 0, new.stderr
    debate_id = new.stdout.strip().split("\n")[-1]
    assert debate_id.startswith("council_")
    assert (elsewhere / "_dream_context" / "council" / debate_id / "debate.md").is_file()

    seat = run(
        [
            str(script),
            "council",
            "agent",
            "create",
            debate_id,
            "risk-auditor",
            "--body",
            "You audit risk.",
        ],
        elsewhere,
        env=env,
    )
    assert seat.returncode == 0, seat.stderr
    context = run(
        [str(script), "council", "round-context", debate_id, "risk-auditor"], elsewhere, env=env
    )
    assert context.returncode == 0, context.stderr
    assert "Round 1 context — risk-auditor" in context.stdout
    assert "You audit risk." in context.stdout
    assert "**A**: Yes" in context.stdout
