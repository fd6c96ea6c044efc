"""The MCP servers of a tools file, started over stdio for one run and stopped after it.

Only the servers the user's file names are started, before any model call; a model's
words can name a tool, never a program. Each server's tool list is cut to its `allow`
list and offered as `<server>__<tool>`. On exit every server process is stopped (the
SDK closes its stdin, then ends its process group), even when a call hangs or the run
is cancelled.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Literal

import anyio

from dreamcontext_council.engine.providers.keys import MIN_KEY_LENGTH, env_keys, hide_keys
from dreamcontext_council.engine.providers.tools import ToolSpec
from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.tool_config import ToolsConfig, ToolServerConfig, expand
from dreamcontext_council.views.terminal import printable

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult

TOOL_NAME_LIMIT = 64
DESCRIPTION_LIMIT = 1024
START_TIMEOUT_S = 30.0
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_STDERR_TAIL_BYTES = 4096
_LISTING_PAGES = 50

Outcome = Literal["ok", "error", "timeout"]


class ToolServerUnavailable(UsageError):
    """A server of the tools file did not start or list its tools; no model was called."""


@dataclass(frozen=True)
class ServedTool:
    """A tool offered to personas: the name they call, and where it lives."""

    spec: ToolSpec
    server: str
    tool: str


@dataclass(frozen=True)
class ToolReply:
    """What one call gave: the text for the model and how it went."""

    text: str
    outcome: Outcome

    @property
    def is_error(self) -> bool:
        return self.outcome != "ok"


class ToolServers:
    """`async with ToolServers(config) as servers:` starts, lists and, on exit, stops them all."""

    def __init__(
        self,
        config: ToolsConfig,
        *,
        environ: Mapping[str, str] | None = None,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self.config = config
        self.specs: tuple[ToolSpec, ...] = ()
        self._environ = environ
        self._start_timeout_s = start_timeout_s
        self._tools: dict[str, ServedTool] = {}
        self._clients: dict[str, Client] = {}
        self._stack = AsyncExitStack()
        # Values no tool result may carry into a note or a prompt: the servers' expanded
        # env and args, and the provider keys of the environment the run was started in.
        self._secrets: list[str] = []

    async def __aenter__(self) -> ToolServers:
        environ = os.environ if self._environ is None else self._environ
        self._secrets = env_keys(environ) + env_keys(os.environ)
        try:
            listed: list[tuple[ToolServerConfig, list[Any]]] = []
            for server in self.config.servers:
                listed.append((server, await self._start(server, environ)))
        except BaseException:
            await self._stack.aclose()
            raise
        served = offered_tools(listed)
        self._tools = {tool.spec.name: tool for tool in served}
        self.specs = tuple(tool.spec for tool in served)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._clients.clear()
        await self._stack.aclose()

    def served(self, name: str) -> ServedTool | None:
        """The tool a persona may call by `name`, or None (not offered, not allowed)."""
        return self._tools.get(name)

    async def call(
        self, name: str, arguments: Mapping[str, Any], timeout_s: float
    ) -> tuple[str, bool]:
        """Call an offered tool: (text, is_error). Never raises for a tool's failure."""
        reply = await self.reply(name, arguments, timeout_s)
        return reply.text, reply.is_error

    async def reply(self, name: str, arguments: Mapping[str, Any], timeout_s: float) -> ToolReply:
        """Call an offered tool; a tool error, a lost server or a timeout is a reply, too.

        Any secret the servers were given, and any provider key, is hidden in the reply."""
        reply = await self._reply(name, arguments, timeout_s)
        return ToolReply(hide_keys(reply.text, self._secrets), reply.outcome)

    async def _reply(self, name: str, arguments: Mapping[str, Any], timeout_s: float) -> ToolReply:
        from mcp import MCPError
        from mcp.types import REQUEST_TIMEOUT

        served = self._tools.get(name)
        if served is None or served.server not in self._clients:
            return ToolReply(f"{name} is not a tool offered in this debate.", "error")
        client = self._clients[served.server]
        timed_out = f"{served.server}/{served.tool} timed out after {timeout_s:g} s."
        try:
            with anyio.fail_after(timeout_s):
                result = await client.call_tool(
                    served.tool, dict(arguments), read_timeout_seconds=timeout_s
                )
        except TimeoutError:
            return ToolReply(timed_out, "timeout")
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                return ToolReply(timed_out, "timeout")
            return ToolReply(f"{served.server}/{served.tool} failed: {exc.error.message}", "error")
        except Exception as exc:  # a dead server, a reply that does not parse
            return ToolReply(f"{served.server}/{served.tool} failed: {_named(exc)}", "error")
        text = result_text(result)
        if result.is_error:
            return ToolReply(
                text or f"{served.server}/{served.tool} failed without a message.", "error"
            )
        return ToolReply(text, "ok")

    async def _start(self, server: ToolServerConfig, environ: Mapping[str, str]) -> list[Any]:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        where = f"The tools file {self.config.source}, server {server.name}"
        env = {name: expand(value, environ, f"{where}, env {name}") for name, value in server.env}
        args = [expand(arg, environ, f"{where}, args") for arg in server.args]
        expanded = [
            *(
                value
                for value, (_, raw) in zip(env.values(), server.env, strict=True)
                if value != raw
            ),
            *(a for a, raw in zip(args, server.args, strict=True) if a != raw),
        ]
        self._secrets += sorted(
            (v for v in expanded if len(v) >= MIN_KEY_LENGTH), key=len, reverse=True
        )
        # An unnamed file: the server's stderr stays off the run's terminal and is kept
        # only to quote its last lines if it fails to start.
        stderr = self._stack.enter_context(
            tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        )
        params = StdioServerParameters(command=server.command, args=args, env=env)
        client = Client(
            stdio_client(params, errlog=stderr), read_timeout_seconds=self._start_timeout_s
        )
        try:
            # The SDK's read timeout bounds the handshake and each listing page.
            await self._stack.enter_async_context(client)
            tools = await _list_tools(client)
        except Exception as exc:
            secrets = [
                *env.values(),
                *(a for a, raw in zip(args, server.args, strict=True) if a != raw),
            ]
            raise ToolServerUnavailable(
                _start_failure(server, exc, _tail(stderr), secrets)
            ) from None
        self._clients[server.name] = client
        return _allowed(server, tools)


async def _list_tools(client: Client) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(_LISTING_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _allowed(server: ToolServerConfig, tools: list[Any]) -> list[Any]:
    """The server's tools its allow list names; one it names but does not list is refused
    (a typo or a rename), so the user learns it before the debate rather than after."""
    listed = {tool.name for tool in tools}
    absent = [name for name in server.allow if name != "*" and name not in listed]
    if absent:
        offered = ", ".join(sorted(listed)[:20]) or "no tool"
        raise ToolServerUnavailable(
            f"The server {server.name} does not list the tool {json.dumps(absent[0])} that its "
            f"allow list names; it lists {printable(offered)}. Fix the allow list."
        )
    return [tool for tool in tools if server.allows(tool.name)]


def offered_tools(listed: list[tuple[ToolServerConfig, list[Any]]]) -> list[ServedTool]:
    """The allowed tools of every server, named `<server>__<tool>` and unique.

    A tool name with characters the model APIs refuse, or too long, gets a safe name cut
    to fit plus 8 hex digits of a digest of `server/tool`; plain names are given first, so
    the result does not depend on the order a server lists its tools in."""
    served: list[ServedTool] = []
    taken: set[str] = set()
    later: list[tuple[ToolServerConfig, Any]] = []
    for server, tools in listed:
        for tool in sorted(tools, key=lambda t: t.name):
            name = f"{server.name}__{tool.name}"
            if _NAME_UNSAFE.search(tool.name) or len(name) > TOOL_NAME_LIMIT or name in taken:
                later.append((server, tool))
                continue
            taken.add(name)
            served.append(_served(server, tool, name))
    for server, tool in later:
        digest = hashlib.sha256(f"{server.name}/{tool.name}".encode()).hexdigest()
        base = _NAME_UNSAFE.sub("_", f"{server.name}__{tool.name}")[: TOOL_NAME_LIMIT - 9]
        name = f"{base}-{digest[:8]}"
        count = 1
        while name in taken:
            count += 1
            name = f"{base[: TOOL_NAME_LIMIT - 9 - len(str(count))]}{count}-{digest[:8]}"
        taken.add(name)
        served.append(_served(server, tool, name))
    return served


def _served(server: ToolServerConfig, tool: Any, name: str) -> ServedTool:
    description = printable(tool.description or tool.title or tool.name)[:DESCRIPTION_LIMIT]
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
    return ServedTool(ToolSpec(name, description, schema), server.name, tool.name)


def result_text(result: CallToolResult) -> str:
    """A tool result as text: text blocks as they are, anything else described, not inlined."""
    parts: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)  # type: ignore[union-attr]
        elif kind in ("image", "audio"):
            size = len(getattr(block, "data", "") or "") * 3 // 4
            mime = getattr(block, "mime_type", None) or kind
            parts.append(f"[{kind} {mime}, about {size} bytes, not shown]")
        elif kind == "resource":
            resource = block.resource  # type: ignore[union-attr]
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(f"[resource {resource.uri}]\n{text}")
            else:
                parts.append(
                    f"[resource {resource.uri}, {resource.mime_type or 'binary'}, not shown]"
                )
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}: {block.name}]")  # type: ignore[union-attr]
        else:
            parts.append(f"[{kind or 'unknown'} content, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    return "\n\n".join(parts)


def _start_failure(
    server: ToolServerConfig, exc: Exception, stderr: str, secrets: list[str]
) -> str:
    said = f"; it said: {stderr}" if stderr else ""
    message = (
        f"The tool server {server.name} ({printable(server.command_line)[:200]}) did not start "
        f"or list its tools ({_named(exc)}){said}. Check that the command runs on its own."
    )
    for value in sorted(secrets, key=len, reverse=True):
        if len(value) >= 4:  # a value the environment gave may be a key: never shown
            message = message.replace(value, "***")
    return message


def _tail(stderr: IO[str]) -> str:
    """The last lines the server wrote to stderr, on one printable line."""
    try:
        stderr.flush()
        size = stderr.seek(0, 2)
        stderr.seek(max(0, size - _STDERR_TAIL_BYTES))
        text = stderr.read()
    except (OSError, ValueError):
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()][-3:]
    return printable(" | ".join(lines))[-300:]


def _named(exc: BaseException) -> str:
    """An exception in a few words, on one line; a group by its first member."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {printable(text)}" if text else type(exc).__name__
