"""What the consent and key tests share: a clean workspace's CLI, and `command:` programs
that leave a marker file behind when they run."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from council_run import ECHO_SCRIPT, Council, Result
from debate_story import OPTIONS, TOPIC
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


def run_on_server(
    council: Council, roster: str, url: str, key: str, *, rounds: int = 2, interrupt: bool = True
) -> Result:
    """A new debate of `roster` run on the server `url` named with `--base-url` (paused
    after its first round unless `interrupt` is False), with `key` as the OpenAI key."""
    return council.proc(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster,
        "--rounds", str(rounds), *(["--interrupt"] if interrupt else []), "--yes",
        "--base-url", url, env={"OPENAI_API_KEY": key},
    )  # fmt: skip
