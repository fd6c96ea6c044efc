"""What an MCP client sends is bounded and checked off the server's event loop.

The SDK's client starts `dreamcontext council mcp` as a real process over stdio. An agent
can send any size and any argument name: a huge input is refused by its size with one
line, an argument no tool takes is refused by name, and one call that waits on the disk
never stops the server from answering the others.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from debate_story import OPTIONS, TOPIC, Chair, entry, run_process
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult
from offline import clean_environment

from dreamcontext_council.folder.storage import locked
from dreamcontext_council.rules import limits


def environment(workdir: Path) -> dict[str, str]:
    home = workdir.parent / "home"
    home.mkdir(exist_ok=True)
    return clean_environment(os.environ, home)


def server(workdir: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamcontext_council", "council", "mcp"],
        env=environment(workdir),
        cwd=workdir,
    )


def error_line(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    (block,) = result.content
    text = block.text  # type: ignore[union-attr]
    assert "\n" not in text, text
    return text


def debates(workdir: Path) -> list[Path]:
    return sorted((workdir / "_dream_context" / "council").glob("council_*"))


def test_thirty_thousand_options_are_refused_while_the_server_keeps_answering(
    workdir: Path, chair: Chair
) -> None:
    """400 KB of options used to run a quadratic check on the event loop for minutes."""
    before = chair.new()
    many = ",".join(f"K{i}=Option number {i}" for i in range(30_000))
    assert len(many) > 400_000
    answered: list[str] = []
    results: dict[str, CallToolResult] = {}

    async def call(client: Client, tool: str, arguments: dict[str, Any]) -> None:
        results[tool] = await client.call_tool(tool, arguments)
        answered.append(tool)

    async def main() -> None:
        async with Client(server(workdir), read_timeout_seconds=60) as client:
            with anyio.fail_after(60):  # the unbounded check took minutes here
                async with anyio.create_task_group() as calls:
                    calls.start_soon(
                        call, client, "council_start", {"topic": TOPIC, "options": many}
                    )
                    calls.start_soon(call, client, "council_list", {"which": "all"})

    anyio.run(main)
    assert sorted(answered) == ["council_list", "council_start"]
    listed = results["council_list"]
    assert not listed.is_error and listed.structured_content, listed.content
    assert [d["id"] for d in listed.structured_content["debates"]] == [before]
    refused = error_line(results["council_start"])
    assert "`options`" in refused and f"{limits.MAX_OPTIONS_CHARS}" in refused, refused
    assert [p.name for p in debates(workdir)] == [before]


def test_a_call_waiting_on_the_disk_does_not_stall_the_others(workdir: Path, running: str) -> None:
    """While the debate's lock is held elsewhere, a report append waits for it on a worker
    thread; a list asked after it is answered before it returns."""
    folder = workdir / "_dream_context" / "council" / running
    order: list[str] = []
    appended: list[CallToolResult] = []

    async def append(client: Client) -> None:
        # growth-cfo cross-examines a peer in round 2: its entry ends with the score.
        body = entry() + "### Cross-examination\n- The cutover is unpriced.\n\nScore: 6/10\n"
        arguments = {"debate_id": running, "persona": "growth-cfo", "round": 2, "body": body}
        appended.append(await client.call_tool("council_report_append", arguments))
        order.append("council_report_append")

    async def main() -> None:
        async with Client(server(workdir), read_timeout_seconds=120) as client:
            with anyio.fail_after(90):
                async with anyio.create_task_group() as calls:
                    # another writer holds the debate (up to 60 s)
                    with locked(folder, within=workdir / "_dream_context"):
                        calls.start_soon(append, client)
                        await anyio.sleep(0)  # the append goes out first
                        listed = await client.call_tool("council_list", {"which": "all"})
                        assert not listed.is_error, listed.content
                        order.append("council_list")
                        assert not appended  # still waiting for the lock
                    # The lock is released here; the append goes through.

    anyio.run(main)
    assert order == ["council_list", "council_report_append"]
    (result,) = appended
    assert not result.is_error, result.content
    report = (folder / "growth-cfo" / "report.md").read_text(encoding="utf-8")
    assert "## Round 2" in report


def test_an_argument_no_tool_takes_is_refused_by_name(workdir: Path) -> None:
    async def main() -> None:
        async with Client(server(workdir), read_timeout_seconds=60) as client:
            refused = error_line(
                await client.call_tool(
                    "council_start",
                    {"topic": TOPIC, "options": OPTIONS, "base_url": "http://attacker.test/v1"},
                )
            )
            assert "`base_url`" in refused, refused
            assert "topic, debate_id, options" in refused, refused  # the accepted ones
            listed = error_line(
                await client.call_tool("council_list", {"which": "all", "limit": 5, "sort": "x"})
            )
            assert "`limit`, `sort`" in listed and "It takes: which, evals." in listed, listed

    anyio.run(main)
    assert debates(workdir) == []  # nothing was started with the ignored key


def test_an_overlong_topic_and_an_oversized_roster_are_refused(workdir: Path) -> None:
    long_question = "Should we " + "really, " * 600 + "migrate the session store to Postgres?"
    assert len(long_question) > limits.MAX_TOPIC_CHARS
    body = "You weigh the cost of every option in detail. " * 700  # about 33 KB each
    huge = workdir / "huge-roster.json"
    huge.write_text(
        json.dumps([{"slug": f"p{i}", "body": body} for i in range(10)]), encoding="utf-8"
    )
    crowded = workdir / "crowded-roster.json"
    crowded.write_text(
        json.dumps([{"slug": f"p{i}", "body": "You answer plainly."} for i in range(40)]),
        encoding="utf-8",
    )

    async def main() -> None:
        async with Client(server(workdir), read_timeout_seconds=60) as client:
            topic = error_line(
                await client.call_tool(
                    "council_start",
                    {"topic": long_question, "options": OPTIONS, "skip_question_check": True},
                )
            )
            assert "`topic`" in topic and f"{limits.MAX_TOPIC_CHARS}" in topic, topic
            roster = error_line(
                await client.call_tool(
                    "council_start",
                    {"topic": TOPIC, "options": OPTIONS, "personas": huge.name},
                )
            )
            assert "256 KiB" in roster and "huge-roster.json" in roster, roster
            seated = error_line(
                await client.call_tool(
                    "council_start",
                    {"topic": TOPIC, "options": OPTIONS, "personas": crowded.name},
                )
            )
            assert "2-10 personas, not 40" in seated, seated
            attached = error_line(
                await client.call_tool(
                    "council_start",
                    {"topic": TOPIC, "attachments": [f"a{i}.md" for i in range(21)]},
                )
            )
            assert "`attachments`" in attached and "20" in attached, attached

    anyio.run(main)
    assert debates(workdir) == []


def test_what_a_persona_records_is_bounded(workdir: Path, running: str) -> None:
    async def main() -> None:
        async with Client(server(workdir), read_timeout_seconds=60) as client:
            verdict = error_line(
                await client.call_tool(
                    "council_verdict",
                    {
                        "debate_id": running,
                        "persona": "growth-cfo",
                        "round": 2,
                        "stance": "B",
                        "conviction": 60,
                        "headline": "Stay " * 200,
                    },
                )
            )
            assert "`headline`" in verdict, verdict
            body = entry() + "\nMore reasoning.\n" * 20_000
            report = error_line(
                await client.call_tool(
                    "council_report_append",
                    {"debate_id": running, "persona": "growth-cfo", "body": body},
                )
            )
            assert "`body`" in report, report

    anyio.run(main)
    folder = workdir / "_dream_context" / "council" / running
    assert "## Round 2" not in (folder / "growth-cfo" / "report.md").read_text(encoding="utf-8")


def test_every_argument_of_every_tool_has_a_bound(workdir: Path) -> None:
    """Each string and list in the input schemas has a maximum length, each number a
    maximum, so a client can see the limits and the server refuses past them."""

    def bounded(name: str, schema: dict[str, Any]) -> None:
        if "anyOf" in schema:
            for option in schema["anyOf"]:
                bounded(name, option)
            return
        kind = schema.get("type")
        if kind == "string":
            assert "maxLength" in schema or "enum" in schema, name
        elif kind in ("integer", "number"):
            assert "maximum" in schema or "exclusiveMaximum" in schema, name
        elif kind == "array":
            assert "maxItems" in schema, name
            bounded(f"{name}[]", schema["items"])
        else:
            assert kind in ("boolean", "null"), (name, schema)

    async def main() -> None:
        async with Client(server(workdir), read_timeout_seconds=60) as client:
            for tool in (await client.list_tools()).tools:
                for name, schema in tool.input_schema["properties"].items():
                    bounded(f"{tool.name}.{name}", schema)

    anyio.run(main)


def test_the_command_line_has_the_same_limits(workdir: Path) -> None:
    env = environment(workdir)
    options = ",".join(f"K{i}=Option {i}" for i in range(limits.MAX_OPTIONS + 1))
    too_many = run_process(["new", TOPIC, "--options", options], cwd=workdir, env=env)
    assert too_many.code == 2, too_many
    assert f"at most {limits.MAX_OPTIONS}" in too_many.err
    topic = "Should we " + "x" * limits.MAX_TOPIC_CHARS + "?"
    too_long = run_process(["new", topic], cwd=workdir, env=env)
    assert too_long.code == 2, too_long
    assert f"the limit is {limits.MAX_TOPIC_CHARS:,}" in too_long.err
    assert len(too_long.err.strip().splitlines()) == 1
    assert debates(workdir) == []


def test_the_documented_limits_are_the_enforced_ones() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
    table = doc[doc.index("### Arguments and limits") :]
    for shown in (
        f"| topic | {limits.MAX_TOPIC_CHARS:,} characters |",
        f"| options | {limits.MAX_OPTIONS} options; a key {limits.MAX_OPTION_KEY_CHARS} "
        f"characters, a label {limits.MAX_OPTION_LABEL_CHARS}; the whole text "
        f"{limits.MAX_OPTIONS_CHARS:,} |",
        f"| personas | {limits.MIN_PERSONAS}–{limits.MAX_PERSONAS}; a roster file "
        f"{limits.MAX_ROSTER_FILE_BYTES // 1024} KiB,",
        f"| rounds | 1–{limits.MAX_ROUNDS} |",
        f"| attachments | {limits.MAX_ATTACHMENTS} files",
        f"a path {limits.MAX_PATH_CHARS:,} characters |",
        f"| a model | {limits.MAX_MODEL_CHARS:,} characters |",
        f"| max_calls, max_cost | 0–{limits.MAX_CALLS:,} calls, 0–{limits.MAX_COST_USD:,.0f} dollars |",
        f"| {limits.MAX_NAME_CHARS} characters (then their exact form) |",
        f"| a report section title | {limits.MAX_SECTION_CHARS} characters |",
        f"| {limits.MAX_STANCE_CHARS}, {limits.MAX_HEADLINE_CHARS} and "
        f"{limits.MAX_CONCESSION_CHARS:,} characters |",
        f"| a round entry | {limits.MAX_ENTRY_CHARS:,} characters |",
        f"most {limits.MAX_OPTIONS_CHARS} characters.",
    ):
        assert shown in table, shown
