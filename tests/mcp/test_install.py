"""`install-skill --mcp`: the council server in the project's .mcp.json, merged and atomic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from dreamcontext_council.cli import cli
from dreamcontext_council.council_mcp.client_config import SERVER_NAME

OTHER = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}


def install(target: Path, *flags: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """`dreamcontext install-skill --packs council --mcp` as a real process; `path` is its
    PATH (default: this installation's bin folder, where `dreamcontext` is)."""
    command = [sys.executable, "-m", "dreamcontext_council", "install-skill"]
    bin_folder = str(Path(sys.executable).parent)
    return subprocess.run(
        [*command, "--packs", "council", "--mcp", "--target", str(target), *flags],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"PATH": bin_folder if path is None else path},
    )


def servers(target: Path) -> dict:
    return json.loads((target / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]


def test_install_merges_the_server_into_mcp_json(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"memory": OTHER}, "note": "kept"}), encoding="utf-8"
    )
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Added the council MCP server" in done.stdout
    found = servers(tmp_path)
    assert found["memory"] == OTHER
    assert found[SERVER_NAME]["command"] == "dreamcontext"
    assert found[SERVER_NAME]["args"] == ["council", "mcp"]
    assert json.loads((tmp_path / ".mcp.json").read_text())["note"] == "kept"
    assert (tmp_path / ".claude" / "skills" / "council" / "SKILL.md").is_file()

    # The user's own entry (with an allowance) is kept unless --force.
    mine = {"command": "dreamcontext", "args": ["council", "mcp", "--allow-command", "x"]}
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"memory": OTHER, SERVER_NAME: mine}}), encoding="utf-8"
    )
    again = install(tmp_path)
    assert again.returncode == 0 and "Kept your own" in again.stdout
    assert servers(tmp_path)[SERVER_NAME] == mine

    removed = install(tmp_path, "--uninstall")
    assert removed.returncode == 0, removed.stderr
    assert servers(tmp_path) == {"memory": OTHER}


def test_a_broken_mcp_json_stops_before_anything_is_written(tmp_path: Path) -> None:
    broken = '{"mcpServers": ["not", "an", "object"]}'
    (tmp_path / ".mcp.json").write_text(broken, encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["install-skill", "--packs", "council", "--mcp", "--target", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert '"mcpServers" object; fix it or move it away' in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (tmp_path / ".mcp.json").read_text(encoding="utf-8") == broken
    assert not (tmp_path / ".claude").exists()


def test_without_dreamcontext_on_path_the_entry_names_it_whole(tmp_path: Path) -> None:
    """A client started from a desktop has its own PATH: when `dreamcontext` is not on the
    installing shell's PATH, .mcp.json runs it by its absolute path, and says so."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    done = install(tmp_path, path=str(empty))
    assert done.returncode == 0, done.stderr
    entry = servers(tmp_path)[SERVER_NAME]
    command = Path(entry["command"])
    assert command.is_absolute() and command.is_file(), entry
    assert "is not on PATH, so it runs" in done.stdout
    started = subprocess.run(
        [str(command), *entry["args"], "--help"], capture_output=True, text=True, timeout=60
    )
    assert started.returncode == 0 and "MCP" in started.stdout, started.stderr
