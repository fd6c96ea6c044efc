"""The tools file's servers, started as real stdio processes with the SDK's client: only
what the file names starts, only what `allow` names is offered, and nothing outlives them."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)

from dreamcontext_council.engine.research.servers import (
    ToolServers,
    ToolServerUnavailable,
    offered_tools,
    result_text,
)
from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.tool_config import ToolsConfig

from .tools_support import alive, lookup_server, tools_file

SECRET = "sk-test-4f9a1c0e7d"


def served(
    config: ToolsConfig,
    scenario: Callable[[ToolServers], Awaitable[None]],
    environ: dict[str, str] | None = None,
) -> None:
    async def main() -> None:
        async with ToolServers(config, environ=environ or {}, start_timeout_s=60) as servers:
            await scenario(servers)

    anyio.run(main)


def refused(
    config: ToolsConfig,
    environ: dict[str, str] | None = None,
    error: type[UsageError] = ToolServerUnavailable,
) -> str:
    async def nothing(servers: ToolServers) -> None:
        raise AssertionError("the servers started")

    with pytest.raises(error) as caught:
        served(config, nothing, environ)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_named_allow_list_offers_only_those_tools() -> None:
    async def scenario(servers: ToolServers) -> None:
        assert [spec.name for spec in servers.specs] == ["lookup__fail", "lookup__lookup"]
        lookup = servers.specs[1]
        assert lookup.description == "Look a fact up in the local table by its key."
        assert lookup.input_schema["required"] == ["key"]
        assert servers.served("lookup__secret") is None
        assert await servers.call("lookup__lookup", {"key": "kafka retention"}, 30) == (
            "Kafka keeps 7 days of events on the shared cluster.",
            False,
        )
        text, is_error = await servers.call("lookup__secret", {}, 30)
        assert is_error and "not a tool offered" in text

    served(tools_file(lookup=lookup_server(["lookup", "fail"])), scenario)


def test_a_tool_error_without_a_message_still_says_which_tool_failed() -> None:
    async def scenario(servers: ToolServers) -> None:
        assert await servers.call("lookup__silent_fail", {}, 30) == (
            "lookup/silent_fail failed without a message.",
            True,
        )

    served(tools_file(lookup=lookup_server(["silent_fail"])), scenario)


def test_star_offers_every_tool_the_server_lists() -> None:
    async def scenario(servers: ToolServers) -> None:
        names = {spec.name for spec in servers.specs}
        assert {"lookup__lookup", "lookup__hang", "lookup__secret", "lookup__pid"} <= names

    served(tools_file(lookup=lookup_server(["*"])), scenario)


def test_an_allow_list_naming_a_tool_the_server_lacks_is_refused() -> None:
    message = refused(tools_file(lookup=lookup_server(["lookup", "lokup"])))
    assert message.startswith('The server lookup does not list the tool "lokup" that its allow')
    assert (
        "it lists fail, hang, lookup, pid, secret, shout, silent_fail, token, token_digest"
        in message
    )


def test_env_reaches_the_server_expanded_and_its_value_is_shown_nowhere() -> None:
    config = tools_file(
        lookup=lookup_server(["token_digest"], env={"LOOKUP_TOKEN": "${COUNCIL_LOOKUP_KEY}"})
    )

    async def scenario(servers: ToolServers) -> None:
        text, _ = await servers.call("lookup__token_digest", {}, 30)
        assert text == hashlib.sha256(SECRET.encode()).hexdigest()
        assert SECRET not in repr(servers.specs) + repr(servers.config)

    served(config, scenario, {"COUNCIL_LOOKUP_KEY": SECRET})
    assert SECRET not in repr(config) + "".join(config.command_lines()) + config.fingerprint()


def test_a_tool_that_leaks_its_secret_or_a_provider_key_has_them_hidden_in_its_reply() -> None:
    config = tools_file(
        lookup=lookup_server(["token"], env={"LOOKUP_TOKEN": "${COUNCIL_LOOKUP_KEY}"})
    )
    provider_key = "sk-test-provider-0123456789"

    async def scenario(servers: ToolServers) -> None:
        text, is_error = await servers.call("lookup__token", {"note": provider_key}, 30)
        assert not is_error
        assert text == "token=[redacted] [redacted]"

    served(config, scenario, {"COUNCIL_LOOKUP_KEY": SECRET, "OPENAI_API_KEY": provider_key})


def test_an_unset_variable_stops_before_anything_starts(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    config = tools_file(
        lookup=lookup_server(
            ["lookup"], env={"LOOKUP_PID_FILE": str(pid_file), "LOOKUP_TOKEN": "${NOT_SET}"}
        )
    )
    assert refused(config, error=UsageError) == (
        "The tools file tools.json, server lookup, env LOOKUP_TOKEN uses ${NOT_SET}, which "
        "is not set; export it and run again."
    )
    assert not pid_file.exists()


def test_a_server_that_exits_at_start_is_one_line_with_its_stderr_and_no_secret() -> None:
    config = tools_file(
        lookup=lookup_server(
            ["lookup"], env={"LOOKUP_FAIL_AT_START": "1", "LOOKUP_TOKEN": "${COUNCIL_LOOKUP_KEY}"}
        )
    )
    message = refused(config, {"COUNCIL_LOOKUP_KEY": SECRET})
    assert message.startswith("The tool server lookup (")
    assert "did not start or list its tools" in message
    assert "it said: lookup: cannot open the table | (token *** refused)" in message
    assert message.endswith("Check that the command runs on its own.")
    assert SECRET not in message


def test_a_program_that_does_not_exist() -> None:
    config = tools_file(missing={"command": "/nonexistent/tool-server", "allow": ["*"]})
    message = refused(config)
    assert message.startswith("The tool server missing (/nonexistent/tool-server) did not start")


def test_a_failing_server_stops_the_ones_started_before_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    config = tools_file(
        first=lookup_server(["lookup"], env={"LOOKUP_PID_FILE": str(pid_file)}),
        second=lookup_server(["lookup"], env={"LOOKUP_FAIL_AT_START": "1"}),
    )
    assert "The tool server second" in refused(config)
    assert not alive(int(pid_file.read_text()))


def test_a_cancelled_run_leaves_no_server_even_mid_call() -> None:
    pids: list[int] = []

    async def main() -> None:
        config = tools_file(lookup=lookup_server(["hang", "pid"]))
        async with (
            anyio.create_task_group() as group,
            ToolServers(config, environ={}, start_timeout_s=60) as servers,
        ):
            text, _ = await servers.call("lookup__pid", {}, 30)
            pids.append(int(text))

            async def stop_soon() -> None:
                await anyio.sleep(0.5)
                group.cancel_scope.cancel()

            group.start_soon(stop_soon)
            await servers.call("lookup__hang", {}, 600)
            raise AssertionError("the hanging call returned")

    anyio.run(main)
    assert pids and not alive(pids[0])


def tool(name: str) -> Tool:
    return Tool(name=name, description=f"the {name} tool", input_schema={"type": "object"})


def test_names_are_safe_unique_and_independent_of_listing_order() -> None:
    config = tools_file(
        search=lookup_server(["*"]), s=lookup_server(["*"]), **{"a" * 32: lookup_server(["*"])}
    )
    search, s, long = config.servers
    tools = [tool("web.query"), tool("web_query"), tool("x" * 40)]
    listed = [(search, tools), (s, [tool("search__web_query")]), (long, [tool("t" * 40)])]
    names = [t.spec.name for t in offered_tools(listed)]
    again = [t.spec.name for t in offered_tools([(search, tools[::-1]), *listed[1:]])]
    assert sorted(names) == sorted(again)
    assert len(set(names)) == len(names) == 5
    assert "search__web_query" in names  # the plain name keeps its plain form
    assert all(len(n) <= 64 and n.replace("_", "a").replace("-", "a").isalnum() for n in names)
    by_tool = {(t.server, t.tool): t.spec.name for t in offered_tools(listed)}
    assert by_tool[("search", "web.query")].startswith("search__web_query-")
    assert by_tool[("s", "search__web_query")] == "s__search__web_query"


def test_content_blocks_become_text_without_inlining_binaries() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="plain answer"),
            ImageContent(type="image", data="aGVsbG8h", mime_type="image/png"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///notes.txt", text="resource text"),
            ),
            ResourceLink(type="resource_link", uri="file:///big.bin", name="big"),
        ]
    )
    assert result_text(result) == (
        "plain answer\n\n[image image/png, about 6 bytes, not shown]\n\n"
        "[resource file:///notes.txt]\nresource text\n\n[resource link file:///big.bin: big]"
    )
    structured = CallToolResult(content=[], structured_content={"rows": 3})
    assert result_text(structured) == '{\n  "rows": 3\n}'
