"""What the research tests share: a tools file that starts the real stdio MCP server in
lookup_server.py, and a check that a server process is gone."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from dreamcontext_council.rules.tool_config import ToolsConfig, parse_tools_config

LOOKUP_SERVER = Path(__file__).with_name("lookup_server.py")
SOURCE = Path("tools.json")


def lookup_server(allow: list[str], **fields: Any) -> dict[str, Any]:
    """One server entry that starts lookup_server.py with this interpreter."""
    return {"command": sys.executable, "args": [str(LOOKUP_SERVER)], "allow": allow, **fields}


def tools_file(**servers: dict[str, Any]) -> ToolsConfig:
    """A tools file naming `servers`, parsed as `--tools` would parse it."""
    return parse_tools_config(json.dumps({"mcpServers": servers}).encode(), SOURCE)


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie waiting to be reaped does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"
