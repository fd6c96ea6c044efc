"""The project-level MCP configuration Claude Code reads: `.mcp.json` at the project root."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder.storage import atomic_write_json

CONFIG_NAME = ".mcp.json"
SERVER_NAME = "dreamcontext-council"


COMMAND = "dreamcontext"


def server_command() -> tuple[str, list[str]]:
    """How a client starts the server: `dreamcontext` when it is on this PATH; else the
    absolute path of this installation's `dreamcontext` (next to its Python); else this
    Python with `-m dreamcontext_council`."""
    if shutil.which(COMMAND):
        return COMMAND, []
    beside = Path(sys.executable).parent / COMMAND
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside), []
    return sys.executable, ["-m", "dreamcontext_council"]


def server_entry() -> dict[str, Any]:
    """The entry that starts the council server: `dreamcontext council mcp`."""
    command, prefix = server_command()
    return {"type": "stdio", "command": command, "args": [*prefix, "council", "mcp"], "env": {}}


@dataclass(frozen=True)
class ConfigChange:
    """What happened to `.mcp.json`: `added`, `unchanged`, `kept` (a different entry is
    there and was left alone), `replaced`, `removed` or `absent`; `command` is what the
    entry runs when it was written."""

    path: Path
    outcome: str
    command: str = ""


def add_server(target: Path, *, force: bool = False) -> ConfigChange:
    """Add the council server to `target/.mcp.json`, keeping every other server and key.

    An entry of the same name that differs (the user added `--allow-command`, say) is kept
    unless `force`. The file is written atomically; an unreadable one is left as it is.
    """
    path = target / CONFIG_NAME
    config = _load(path)
    servers = config.setdefault("mcpServers", {})
    wanted = server_entry()
    current = servers.get(SERVER_NAME)
    if current == wanted:
        return ConfigChange(path, "unchanged")
    if current is not None and not force:
        return ConfigChange(path, "kept")
    servers[SERVER_NAME] = wanted
    atomic_write_json(path, config, within=None)  # the project's own .mcp.json
    return ConfigChange(path, "added" if current is None else "replaced", wanted["command"])


def remove_server(target: Path) -> ConfigChange:
    """Take the council server out of `target/.mcp.json`; other servers stay."""
    path = target / CONFIG_NAME
    if not path.exists():
        return ConfigChange(path, "absent")
    config = _load(path)
    if config.get("mcpServers", {}).pop(SERVER_NAME, None) is None:
        return ConfigChange(path, "absent")
    atomic_write_json(path, config, within=None)  # the project's own .mcp.json
    return ConfigChange(path, "removed")


def check_config(target: Path) -> None:
    """FormatError when `target/.mcp.json` exists but cannot be merged with."""
    _load(target / CONFIG_NAME)


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"Cannot read {path} ({exc}); fix it or move it away.") from exc
    try:
        config = json.loads(text) if text.strip() else {}
    except ValueError:
        config = None
    if not isinstance(config, dict) or not isinstance(config.get("mcpServers", {}), dict):
        raise FormatError(
            f'{path} is not a JSON object with an "mcpServers" object; fix it or move it away.'
        )
    return config
