"""The tools file: what it may say, and the one line that says what is wrong when it does not."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dreamcontext_council.errors import FormatError, NotFoundError, UsageError
from dreamcontext_council.rules.tool_config import (
    ToolsConfig,
    expand,
    load_tools_config,
    parse_tools_config,
)

SOURCE = Path("tools.json")


def parsed(document: Any) -> ToolsConfig:
    return parse_tools_config(json.dumps(document).encode(), SOURCE)


def server(**fields: Any) -> dict[str, Any]:
    return {"mcpServers": {"lookup": {"command": "python", "allow": ["lookup"], **fields}}}


def refused(document: Any) -> str:
    with pytest.raises(FormatError) as caught:
        parse_tools_config(
            document if isinstance(document, bytes) else json.dumps(document).encode(), SOURCE
        )
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_server_with_defaults() -> None:
    config = parsed(server())
    (lookup,) = config.servers
    assert (lookup.name, lookup.command, lookup.args, lookup.env) == ("lookup", "python", (), ())
    assert lookup.allow == ("lookup",) and lookup.allows("lookup") and not lookup.allows("secret")
    assert config.source == SOURCE


def test_star_allows_every_tool() -> None:
    (lookup,) = parsed(server(allow=["*"])).servers
    assert lookup.allows_all and lookup.allows("anything")


@pytest.mark.parametrize(
    ("document", "says"),
    [
        (b"{not json", "The tools file tools.json is not JSON"),
        (b"\xff\xfe", "is not JSON"),
        ([], 'is not an object with "mcpServers"'),
        ({"servers": {}}, 'is not an object with "mcpServers"'),
        ({"mcpServers": {}, "extra": 1}, 'has the unknown key "extra"'),
        ({"mcpServers": {}}, "names no server under mcpServers"),
        ({"mcpServers": {"bad name!": {}}}, 'names the server "bad name!"; use 1 to 32'),
        ({"mcpServers": {"x" * 33: {}}}, "use 1 to 32 letters"),
        ({"mcpServers": {"lookup": []}}, "server lookup, is not an object"),
        (server(cwd="/tmp"), 'server lookup, has the unknown key "cwd"'),
        (server(command=""), 'needs "command": the program to start'),
        (server(command=["python"]), 'needs "command"'),
        (server(args="lookup_server.py"), '"args" that is not a list of strings'),
        (server(args=[1]), '"args" that is not a list of strings'),
        (server(env=["TOKEN"]), '"env" that is not a map'),
        (server(env={"TOKEN": 1}), '"env" that is not a map'),
        (server(allow="lookup"), '"allow" that is not a list of tool names'),
        (server(allow=[""]), '"allow" that is not a list of tool names'),
    ],
)
def test_each_error_is_one_line_naming_file_and_server(document: Any, says: str) -> None:
    assert says in refused(document)


@pytest.mark.parametrize("allow", [None, []])
def test_a_missing_or_empty_allow_list_says_to_add_one(allow: list[str] | None) -> None:
    body = {"command": "python"} | ({} if allow is None else {"allow": allow})
    message = refused({"mcpServers": {"lookup": body}})
    assert message == (
        'The tools file tools.json, server lookup, has no "allow" list; add "allow": '
        '["tool", ...] naming the tools personas may call, or ["*"] for all.'
    )


def test_a_file_over_a_megabyte_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(server(args=["x" * (1024 * 1024)])))
    with pytest.raises(FormatError, match="is over 1 MB"):
        load_tools_config(path)


def test_a_missing_file_and_a_folder(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist; check the path"):
        load_tools_config(tmp_path / "nope.json")
    with pytest.raises(UsageError, match="is not a regular file; name a JSON file"):
        load_tools_config(tmp_path)


def test_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    os.mkfifo(path)
    with pytest.raises(UsageError, match="is not a regular file"):
        load_tools_config(path)


def test_load_reads_a_real_file(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(server(args=["lookup_server.py"])))
    assert load_tools_config(path).servers[0].args == ("lookup_server.py",)


def test_expansion_from_the_environment_only_when_asked() -> None:
    environ = {"TOKEN": "s3cr3t-value"}
    assert expand("Bearer ${TOKEN}", environ, "here") == "Bearer s3cr3t-value"
    assert expand("${MISSING:-fallback}", environ, "here") == "fallback"
    assert expand("$TOKEN and ${not-a-name}", environ, "here") == "$TOKEN and ${not-a-name}"
    with pytest.raises(UsageError) as caught:
        expand("${MISSING}", environ, "The tools file t.json, server lookup, env KEY")
    assert str(caught.value) == (
        "The tools file t.json, server lookup, env KEY uses ${MISSING}, which is not set; "
        "export it and run again."
    )


def test_command_lines_and_fingerprint_hold_no_env_value() -> None:
    config = parsed(
        server(args=["--db", "my db"], env={"TOKEN": "${LOOKUP_TOKEN}", "PLAIN": "hunter22"})
    )
    assert config.command_lines() == ("lookup: python --db 'my db' (env TOKEN, PLAIN)",)
    everything = repr(config.command_lines()) + config.fingerprint()
    assert "hunter22" not in everything and "LOOKUP_TOKEN" not in everything


def test_fingerprint_is_stable_and_follows_what_runs() -> None:
    base = server(args=["a"], env={"K": "v"})
    fingerprint = parsed(base).fingerprint()
    assert parsed(json.loads(json.dumps(base))).fingerprint() == fingerprint
    assert len(fingerprint) == 64
    for changed in (
        server(args=["b"], env={"K": "v"}),
        server(args=["a"], env={"K": "w"}),
        server(args=["a"], env={"K": "v"}, allow=["*"]),
        server(args=["a"], env={"K": "v"}, command="python3"),
    ):
        assert parsed(changed).fingerprint() != fingerprint
