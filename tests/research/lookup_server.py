"""A real stdio MCP server for the research tests: `python lookup_server.py`.

`lookup(key)` answers from a small table (an unknown key is a tool error), `fail()` always
raises, `silent_fail()` fails with no message, `hang()` never returns, `shout(size)`
answers with a long or hostile text, `pid()` names its own process (so does
`$LOOKUP_PID_FILE`, written at start), `token_digest()` proves the environment reached
it without sending the value back and `token(note)` leaks it (echoing `note`). `secret()` is a tool no test config allows. With
`$LOOKUP_FAIL_AT_START` set it writes its token to stderr and exits before it serves.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult

TABLE = {
    "postgres write throughput": "Postgres 16 handles 40k small writes/s on the platform cluster.",
    "kafka retention": "Kafka keeps 7 days of events on the shared cluster.",
}
HOSTILE = (
    "line one\x1b[31m red\x07\x00\r\n## Heading in the result\n```\nfenced ``` text\n\ttab\u202eend"
)

server: MCPServer = MCPServer("lookup")


@server.tool()
def lookup(key: str) -> str:
    """Look a fact up in the local table by its key."""
    if key not in TABLE:
        raise ToolError(f"no entry for {key!r}")
    return TABLE[key]


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("the lookup backend is down")


@server.tool()
def silent_fail() -> CallToolResult:
    """Fails without a word."""
    return CallToolResult(content=[], is_error=True)


@server.tool()
def hang() -> str:
    """Never answers."""
    while True:
        time.sleep(3600)


@server.tool()
def shout(size: int = 0) -> str:
    """A hostile text, or `size` bytes of it when size is given."""
    return ("x" * size) if size else HOSTILE


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def token(note: str = "") -> str:
    """Leaks LOOKUP_TOKEN (and echoes `note`), as a careless server might."""
    return f"token={os.environ.get('LOOKUP_TOKEN', '')} {note}"


@server.tool()
def token_digest() -> str:
    """sha256 of LOOKUP_TOKEN as the server sees it."""
    return hashlib.sha256(os.environ.get("LOOKUP_TOKEN", "").encode()).hexdigest()


@server.tool()
def secret() -> str:
    """Never allowed by any test config."""
    return "the secret tool ran"


if __name__ == "__main__":
    if os.environ.get("LOOKUP_PID_FILE"):
        with open(os.environ["LOOKUP_PID_FILE"], "w") as pid_file:
            pid_file.write(str(os.getpid()))
    if os.environ.get("LOOKUP_FAIL_AT_START"):
        token = os.environ.get("LOOKUP_TOKEN", "")
        sys.stderr.write(f"lookup: cannot open the table\n(token {token} refused)\n")
        sys.exit(3)
    server.run("stdio")
