"""`dreamcontext council mcp` keeps its stderr for warnings and errors: MCP clients show
whatever a server writes there as errors, so the requests it handles and the HTTP calls of
a run it holds are logged only with `--verbose`.

No `__init__.py` here on purpose: a `tests/mcp` package would shadow the `mcp` SDK.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from council_run import scripted_responder
from debate_story import OPTIONS, TOPIC
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from offline import clean_environment
from stub_server import StubServer

KEY = "sk-proj-QuietServerTest0123456789abcdef"


def serve_one_debate(workdir: Path, flags: list[str], stub: StubServer) -> str:
    """Start the server with `flags`, run a one-round debate on openai (the stub) through it
    to its end, with one refused tool call on the way; the server's stderr."""
    home = workdir.parent / "home"
    home.mkdir(exist_ok=True)
    env = clean_environment(os.environ, home) | {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": stub.openai_url,
        "COLUMNS": "400",  # the log's lines unwrapped
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamcontext_council", "council", "mcp", *flags],
        env=env,
        cwd=workdir,
    )

    async def scenario(client: Client) -> None:
        refused = await client.call_tool("council_start", {"topic": TOPIC, "no_such": 1})
        assert refused.is_error
        started = await client.call_tool(
            "council_start",
            {"topic": TOPIC, "options": OPTIONS, "rounds": 1, "model": "openai:gpt-4o-mini"},
        )
        assert not started.is_error, started.content
        debate_id = (started.structured_content or {})["id"]
        status: dict[str, Any] = {}
        for _ in range(20):
            waited = await client.call_tool(
                "council_wait", {"debate_id": debate_id, "timeout_seconds": 30}
            )
            status = waited.structured_content or {}
            if status["server_run"]["state"] != "running":
                break
        assert status["server_run"]["state"] == "finished", status["server_run"]

    log = workdir.parent / f"stderr{len(flags)}.log"
    with log.open("w", encoding="utf-8") as errlog:

        async def main() -> None:
            with anyio.fail_after(240):
                async with Client(
                    stdio_client(params, errlog=errlog), read_timeout_seconds=120
                ) as client:
                    await scenario(client)

        anyio.run(main)
    return log.read_text("utf-8")


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_the_server_logs_requests_only_when_asked(workdir: Path, verbose: bool) -> None:
    with StubServer(responder=scripted_responder) as stub:
        logged = serve_one_debate(workdir, ["--verbose"] if verbose else [], stub)
        calls = [r for r in stub.requests if r.path.endswith("/chat/completions")]

    assert len(calls) >= 4  # the personas' calls went over HTTP, in both cases
    if verbose:
        assert "HTTP Request: POST" in logged and "/v1/chat/completions" in logged
        assert "council_start" in logged  # the refused tool call
    else:
        assert logged == ""
    assert KEY not in logged
