"""`dreamcontext council mcp`: the SDK's own client starts the server as a real process over
stdio and holds a council through it, as Claude Code or Cursor would.

No `__init__.py` here on purpose: a `tests/mcp` package would shadow the `mcp` SDK.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from council_run import echo_command  # noqa: F401 — a fixture, used by name
from debate_story import OPTIONS, TOPIC, Chair, entry, run_process
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextResourceContents
from offline import clean_environment

from dreamcontext_council.council_mcp.catalog import TOOLS
from dreamcontext_council.council_mcp.reading import read_debate_file
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root

Scenario = Callable[[Client], Awaitable[None]]


def server_environment(workdir: Path) -> dict[str, str]:
    """No key, no proxy, no council setting from the developer's shell: the scripted provider."""
    home = workdir.parent / "home"
    home.mkdir(exist_ok=True)
    return clean_environment(os.environ, home)


def hold(
    workdir: Path,
    scenario: Scenario,
    *flags: str,
    env: dict[str, str] | None = None,
    errlog: TextIO | None = None,
) -> None:
    """Start `dreamcontext council mcp` in `workdir` as a subprocess and run `scenario` on it;
    the server's stderr goes to `errlog` (a file) when given."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamcontext_council", "council", "mcp", *flags],
        env=server_environment(workdir) | (env or {}),
        cwd=workdir,
    )
    server = params if errlog is None else stdio_client(params, errlog=errlog)

    async def main() -> None:
        with anyio.fail_after(240):
            async with Client(server, read_timeout_seconds=120) as client:
                await scenario(client)

    anyio.run(main)


SEEN: list[str] = []  # every tool result and resource text of the test that is running


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    SEEN.append(json.dumps(result.structured_content))
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    (block,) = result.content
    return block.text  # type: ignore[union-attr]


def test_tools_have_schemas_and_help_names_them(workdir: Path) -> None:
    async def scenario(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(tools) == list(TOOLS)
        for tool in tools.values():
            assert tool.description and len(tool.description) > 40, tool.name
            assert tool.input_schema["type"] == "object"
            assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        start = tools["council_start"].input_schema["properties"]
        assert {"topic", "options", "personas", "rounds", "attachments", "model"} <= set(start)
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["council://{debate_id}/{+path}"]

    hold(workdir, scenario)
    helped = run_process(["mcp", "--help"], cwd=workdir, env=server_environment(workdir))
    assert helped.code == 0
    for name in TOOLS:
        assert name in helped.out


SECRET_KEY = "sk-proj-NeverInAResult0123456789abcdef"


def test_a_debate_started_through_mcp_runs_to_its_report(workdir: Path) -> None:
    progress: list[tuple[float, str | None]] = []
    SEEN.clear()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async def scenario(client: Client) -> None:
        started = data(
            await client.call_tool(
                "council_start",
                {"topic": TOPIC, "options": OPTIONS, "rounds": 2, "model": "scripted"},
            )
        )
        debate_id = started["id"]
        assert started["state"] == "running"  # returned at once; each call takes 0.05 s
        assert debate_id.startswith("council_")
        assert started["resources"] == f"council://{debate_id}/"
        status: dict[str, Any] = {}
        for _ in range(20):  # each wait returns when the run stops, or after its timeout
            status = data(
                await client.call_tool(
                    "council_wait",
                    {"debate_id": debate_id, "timeout_seconds": 30},
                    progress_callback=on_progress,
                )
            )
            if status["server_run"]["state"] != "running":
                break
        assert status["server_run"]["state"] == "finished", status["server_run"]
        assert status["status"] == "complete"
        assert status["has_final_report"]
        assert f"council://{debate_id}/final-report.md" in status["files"]

        report = data(await client.call_tool("council_report", {"debate_id": debate_id}))
        assert "Verdict" in report["sections"]
        verdict = data(
            await client.call_tool("council_report", {"debate_id": debate_id, "section": "verdict"})
        )
        assert verdict["text"] and verdict["text"] in report["text"]
        assert "## Verdict" not in verdict["text"]

        board = data(await client.call_tool("council_board", {"debate_id": debate_id}))
        assert board["id"] == debate_id and board["board"]
        listed = data(await client.call_tool("council_list", {"which": "all"}))
        assert [d["id"] for d in listed["debates"]] == [debate_id]

        promoted = data(await client.call_tool("council_promote", {"debate_id": debate_id}))
        assert promoted["changed"] and promoted["path"].endswith(".md")
        again = data(await client.call_tool("council_promote", {"debate_id": debate_id}))
        assert not again["changed"]

        read = await client.read_resource(f"council://{debate_id}/debate.md")
        (contents,) = read.contents
        assert isinstance(contents, TextResourceContents)
        assert TOPIC in contents.text
        for uri in status["files"]:
            for part in (await client.read_resource(uri)).contents:
                SEEN.append(getattr(part, "text", ""))

    hold(
        workdir,
        scenario,
        env={"OPENAI_API_KEY": SECRET_KEY, "DREAMCONTEXT_SCRIPTED_DELAY": "0.05"},
    )
    messages = [m or "" for _, m in progress]
    values = [v for v, _ in progress]
    assert values == sorted(values), "progress goes up"
    assert any(m.startswith("Round 1") for m in messages), messages
    assert any(m.startswith("Round 2") for m in messages), messages
    assert any(": done" in m for m in messages), messages  # one per persona call
    folder = workdir / "_dream_context" / "council"
    assert (folder / "index.json").exists()
    assert len(SEEN) > 10 and not any(SECRET_KEY in text for text in SEEN)
    assert list((workdir / "_dream_context" / "knowledge").glob("*.md"))


def test_a_path_outside_the_debate_is_refused(chair: Chair, workdir: Path) -> None:
    debate_id = chair.new()
    secret = workdir / "secret.txt"
    secret.write_text("the launch codes\n", encoding="utf-8")
    folder = chair.folder(debate_id)
    (folder / "notes.md").symlink_to(secret)

    async def scenario(client: Client) -> None:
        for path in ("notes.md", "../../secret.txt", "%2E%2E/%2E%2E/secret.txt"):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(f"council://{debate_id}/{path}")
            assert "launch codes" not in str(refused.value)
        with pytest.raises(MCPError) as linked:
            await client.read_resource(f"council://{debate_id}/notes.md")
        assert "is a link out of" in str(linked.value)
        read = await client.read_resource(f"council://{debate_id}/round-log.md")
        assert read.contents

    hold(workdir, scenario)


def test_the_reader_behind_the_resources_stays_in_the_debate(chair: Chair, workdir: Path) -> None:
    """The same refusals without the SDK's own URI checks in front of them."""
    debate_id = chair.new()
    (workdir / "secret.txt").write_text("the launch codes\n", encoding="utf-8")
    root = Root(workdir / "_dream_context")
    for path in ("../../../secret.txt", str(workdir / "secret.txt"), "", "growth-cfo"):
        with pytest.raises(CouncilError) as refused:
            read_debate_file(root, debate_id, path)
        assert "launch codes" not in str(refused.value)
    with pytest.raises(CouncilError):
        read_debate_file(root, "../council_x", "debate.md")
    assert TOPIC in read_debate_file(root, debate_id, "debate.md")


def test_a_tool_error_carries_the_cli_one_line_message(workdir: Path, chair: Chair) -> None:
    chair.new()
    shown = run_process(["show", "council_NoSuch12"], cwd=workdir, env=server_environment(workdir))
    assert shown.code != 0
    cli_message = shown.err.strip().removeprefix("Error: ")

    async def scenario(client: Client) -> None:
        text = error_text(
            await client.call_tool("council_status", {"debate_id": "council_NoSuch12"})
        )
        assert text == cli_message
        assert "\n" not in text

    hold(workdir, scenario)


def test_a_persona_can_sit_on_a_council_through_mcp(
    workdir: Path, running: str, chair: Chair
) -> None:
    async def scenario(client: Client) -> None:
        context = data(
            await client.call_tool(
                "council_round_context", {"debate_id": running, "persona": "growth-cfo"}
            )
        )
        assert TOPIC in context["text"]
        peer = chair.assignment(running, "growth-cfo")
        assert f"## Your cross-examination assignment: {peer}" in context["text"]
        recorded = data(
            await client.call_tool(
                "council_verdict",
                {
                    "debate_id": running,
                    "persona": "growth-cfo",
                    "round": 2,
                    "stance": "B",
                    "conviction": 65,
                    "headline": "Stay until the p99 budget is known",
                },
            )
        )
        assert recorded["verdict"]["stance"] == "B"
        appended = data(
            await client.call_tool(
                "council_report_append",
                {
                    "debate_id": running,
                    "persona": "growth-cfo",
                    "round": 2,
                    "body": entry()
                    + f"### Cross-examination\n- {peer} skips the p99.\nScore: 5/10\n",
                },
            )
        )
        assert appended["round"] == 2 and not appended["replaced"]
        missing = error_text(
            await client.call_tool(
                "council_report_append",
                {
                    "debate_id": running,
                    "persona": "user-advocate",
                    "body": entry(drop=("Position",)),
                },
            )
        )
        assert "Position" in missing and "\n" not in missing

    hold(workdir, scenario)
    report = workdir / "_dream_context" / "council" / running / "growth-cfo" / "report.md"
    assert "## Round 2" in report.read_text(encoding="utf-8")


def started_debates(workdir: Path) -> list[Path]:
    council = workdir / "_dream_context" / "council"
    return sorted(p for p in council.glob("council_*")) if council.is_dir() else []


def test_a_stopped_run_resumes_through_council_start(workdir: Path) -> None:
    async def follow(client: Client, debate_id: str) -> dict[str, Any]:
        for _ in range(20):
            status = data(
                await client.call_tool(
                    "council_wait", {"debate_id": debate_id, "timeout_seconds": 30}
                )
            )
            if status["server_run"]["state"] != "running":
                return status
        raise AssertionError("the run never stopped")

    async def scenario(client: Client) -> None:
        arguments = {"topic": TOPIC, "options": OPTIONS, "rounds": 2, "max_calls": 2}
        debate_id = data(await client.call_tool("council_start", arguments))["id"]
        stopped = await follow(client, debate_id)
        assert stopped["status"] != "complete", stopped["server_run"]
        assert stopped["server_run"]["stopped"] == "budget", stopped["server_run"]
        # Stopped before the end, not finished, with the reason the debate's status shows.
        assert stopped["server_run"]["state"] == "stopped", stopped["server_run"]
        reason = "budget: --max-calls 2 reached after 2 calls"
        assert stopped["server_run"]["reason"] == reason, stopped["server_run"]
        resumed = {"debate_id": debate_id, "max_calls": 100}
        assert data(await client.call_tool("council_start", resumed))["id"] == debate_id
        done = await follow(client, debate_id)
        assert done["status"] == "complete", done["server_run"]

    hold(workdir, scenario)


def test_a_command_model_named_by_the_agent_is_not_consent(
    workdir: Path,
    echo_command: str,  # noqa: F811
) -> None:
    roster = workdir / "roster.json"
    roster.write_text(
        json.dumps(
            [
                {"slug": "echo", "body": "You echo.", "model": echo_command},
                {"slug": "plain", "body": "You answer plainly."},
            ]
        ),
        encoding="utf-8",
    )

    async def refused(client: Client) -> None:
        for arguments in ({"model": echo_command}, {"personas": str(roster)}):
            text = error_text(
                await client.call_tool(
                    "council_start", {"topic": TOPIC, "options": OPTIONS, **arguments}
                )
            )
            assert "not the user's consent" in text and "--allow-command" in text
            assert "\n" not in text

    hold(workdir, refused)
    assert started_debates(workdir) == []  # refused before anything was written

    async def allowed(client: Client) -> None:
        started = data(
            await client.call_tool(
                "council_start",
                {"topic": TOPIC, "options": OPTIONS, "model": echo_command, "compact": True},
            )
        )
        for _ in range(20):
            status = data(
                await client.call_tool(
                    "council_wait", {"debate_id": started["id"], "timeout_seconds": 30}
                )
            )
            if status["server_run"]["state"] != "running":
                break
        assert status["server_run"]["state"] == "finished", status["server_run"]

    hold(workdir, allowed, "--allow-command", echo_command)
    assert len(started_debates(workdir)) == 1


def test_files_outside_the_project_cannot_be_named(workdir: Path) -> None:
    outside = workdir.parent / "outside.md"
    outside.write_text("Private notes that must not reach a model provider.\n", encoding="utf-8")
    inside = workdir / "brief.md"
    inside.write_text("The platform team's brief on the session store.\n", encoding="utf-8")

    async def scenario(client: Client) -> None:
        for arguments in (
            {"attachments": [str(outside)]},
            {"attachments": ["../outside.md"]},
            {"personas": str(outside)},
        ):
            text = error_text(
                await client.call_tool(
                    "council_start", {"topic": TOPIC, "options": OPTIONS, **arguments}
                )
            )
            assert "is outside the project" in text, text
        assert started_debates(workdir) == []
        started = data(
            await client.call_tool(
                "council_start",
                {"topic": TOPIC, "options": OPTIONS, "attachments": ["brief.md"], "compact": True},
            )
        )
        assert started["id"]

    hold(workdir, scenario)


def test_a_run_cut_short_by_the_server_shutting_down_says_so(workdir: Path) -> None:
    started: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        started.update(
            data(
                await client.call_tool(
                    "council_start",
                    {"topic": TOPIC, "options": OPTIONS, "rounds": 2, "model": "scripted"},
                )
            )
        )
        # The client closes here, mid-run: the server shuts down with the run in flight.

    log = workdir.parent / "server-stderr.log"
    with log.open("w", encoding="utf-8") as errlog:
        hold(workdir, scenario, env={"DREAMCONTEXT_SCRIPTED_DELAY": "2"}, errlog=errlog)
    logged = log.read_text("utf-8")
    assert "Traceback" not in logged, logged
    shown = run_process(
        ["show", started["id"], "--json"], cwd=workdir, env=server_environment(workdir)
    )
    assert shown.code == 0, shown.err
    state = json.loads(shown.out)
    assert "the MCP server shut down" in json.dumps(state)
    assert "Ctrl-C" not in json.dumps(state)
    assert state["run"]["line"].startswith("stopped: the MCP server shut down, resume with")
