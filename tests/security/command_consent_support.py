"""What the consent and key tests share: a clean workspace's CLI, and `command:` programs
that leave a marker file behind when they run."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from council_run import ECHO_SCRIPT, Council
from offline import clean_environment


def workspace(tmp_path: Path, name: str = "work") -> Council:
    """The CLI against a fresh workspace, with a private HOME (so a private trust file)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    workdir = tmp_path / name
    workdir.mkdir()
    return Council(workdir / "_dream_context", workdir, clean_environment(os.environ, home))


def marking_command(tmp_path: Path, marker: Path) -> str:
    """A command line that creates `marker`, then answers like the scripted provider."""
    script = tmp_path / "marking_persona.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n" + ECHO_SCRIPT, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def trust_file(council: Council) -> Path:
    """Where the workspace's user keeps allowed commands (HOME/.config, no XDG set)."""
    return (
        Path(council.environment()["HOME"]) / ".config" / "dreamcontext" / "trusted-commands.json"
    )
