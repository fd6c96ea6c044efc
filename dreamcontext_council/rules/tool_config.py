"""The tools file: which MCP servers personas may use, and which of their tools.

The file is the usual MCP client config with one more key per server, `allow`:

    {"mcpServers": {"lookup": {"command": "python", "args": ["lookup_server.py"],
                               "env": {"TOKEN": "${LOOKUP_TOKEN}"},
                               "allow": ["lookup"]}}}

`allow` is required: the tool names a persona may call on that server, or `["*"]` for
every tool it lists. `env` values and `args` may name environment variables as `${VAR}`
(or `${VAR:-default}`); they are expanded only when the server starts, so the parsed
config, its fingerprint and its command lines never hold a secret's value.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamcontext_council.errors import FormatError, NotFoundError, UsageError

MAX_TOOLS_FILE_BYTES = 1024 * 1024
ALLOW_ALL = "*"
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
SERVER_KEYS = ("command", "args", "env", "allow")
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ToolServerConfig:
    """One MCP server of the tools file, as written (`${VAR}` not yet expanded)."""

    name: str
    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    allow: tuple[str, ...]

    @property
    def allows_all(self) -> bool:
        return ALLOW_ALL in self.allow

    def allows(self, tool: str) -> bool:
        """Whether personas may call the server's tool `tool`."""
        return self.allows_all or tool in self.allow

    @property
    def command_line(self) -> str:
        """The program and arguments this server starts, as a shell would read them."""
        return shlex.join([self.command, *self.args])


@dataclass(frozen=True)
class ToolsConfig:
    """Every server of one tools file, in the file's order."""

    servers: tuple[ToolServerConfig, ...]
    source: Path

    def command_lines(self) -> tuple[str, ...]:
        """`<server>: <command line>` for each server: what this file would start.

        Environment values are left out (they may be secrets); the names are shown."""
        lines = []
        for server in self.servers:
            names = ", ".join(name for name, _ in server.env)
            lines.append(
                f"{server.name}: {server.command_line}" + (f" (env {names})" if names else "")
            )
        return tuple(lines)

    def fingerprint(self) -> str:
        """A stable digest of everything that decides what runs and what may be called.

        Environment values count (NODE_OPTIONS or LD_PRELOAD change what a program does)
        but only as written: `${VAR}` is hashed as the reference, so rotating a secret in
        the environment keeps the fingerprint; only the digest is ever shown or kept."""
        canonical = [
            [s.name, s.command, list(s.args), sorted(map(list, s.env)), sorted(s.allow)]
            for s in self.servers
        ]
        text = json.dumps(canonical, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def load_tools_config(path: Path) -> ToolsConfig:
    """Read and check the tools file at `path` (at most 1 MB); one-line errors name the file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise NotFoundError(f"The tools file {path} does not exist; check the path.") from None
    except OSError as exc:
        raise UsageError(f"The tools file {path} cannot be read ({exc.strerror}).") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"The tools file {path} is not a regular file; name a JSON file.")
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as stream:
            data = stream.read(MAX_TOOLS_FILE_BYTES + 1)
    finally:
        os.close(fd)
    return parse_tools_config(data, path)


def parse_tools_config(data: bytes, source: Path) -> ToolsConfig:
    """The servers of a tools file's bytes; FormatError (one line) for anything off."""
    where = f"The tools file {source}"
    if len(data) > MAX_TOOLS_FILE_BYTES:
        raise FormatError(f"{where} is over 1 MB; a tools file names a few servers, trim it.")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise FormatError(
            f'{where} is not JSON; write {{"mcpServers": {{"name": {{"command": ..., '
            '"allow": [...]}}}}.'
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        raise FormatError(f'{where} is not an object with "mcpServers": {{name: server}}.')
    extra = sorted(set(document) - {"mcpServers"})
    if extra:
        raise FormatError(f"{where} has the unknown key {_shown(extra[0])}; only mcpServers.")
    servers = document["mcpServers"]
    if not servers:
        raise FormatError(f"{where} names no server under mcpServers; add one or drop --tools.")
    return ToolsConfig(tuple(_server(name, body, where) for name, body in servers.items()), source)


def _server(name: str, body: Any, where: str) -> ToolServerConfig:
    if not SERVER_NAME.fullmatch(name):
        raise FormatError(
            f"{where} names the server {_shown(name)}; use 1 to 32 letters, digits, '_' or '-'."
        )
    at = f"{where}, server {name},"
    if not isinstance(body, dict):
        raise FormatError(f'{at} is not an object with "command" and "allow".')
    extra = [key for key in body if key not in SERVER_KEYS]
    if extra:
        raise FormatError(
            f"{at} has the unknown key {_shown(extra[0])}; use command, args, env, allow."
        )
    command = body.get("command")
    if not isinstance(command, str) or not command.strip() or "\x00" in command:
        raise FormatError(f'{at} needs "command": the program to start, as a non-empty string.')
    args = body.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) and "\x00" not in a for a in args):
        raise FormatError(f'{at} has "args" that is not a list of strings.')
    env = body.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(v, str) and "\x00" not in v and k and "=" not in k and "\x00" not in k
        for k, v in env.items()
    ):
        raise FormatError(f'{at} has "env" that is not a map of names to strings.')
    allow = body.get("allow")
    if allow is None or allow == []:
        raise FormatError(
            f'{at} has no "allow" list; add "allow": ["tool", ...] naming the tools personas '
            'may call, or ["*"] for all.'
        )
    if not isinstance(allow, list) or not all(isinstance(t, str) and t.strip() for t in allow):
        raise FormatError(f'{at} has "allow" that is not a list of tool names.')
    return ToolServerConfig(
        name, command, tuple(args), tuple(env.items()), tuple(dict.fromkeys(allow))
    )


def expand(value: str, environ: Mapping[str, str], where: str) -> str:
    """`value` with each `${VAR}` (or `${VAR:-default}`) replaced from `environ`.

    An unset variable without a default is a UsageError naming it (never a value)."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise UsageError(f"{where} uses ${{{name}}}, which is not set; export it and run again.")

    return _REFERENCE.sub(replace, value)


def _shown(value: str) -> str:
    return json.dumps(value[:80])
