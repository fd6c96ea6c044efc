"""Every shell block in README.md runs as written: offline, in a temporary folder, exit 0.

Blocks that call real models run against the stub server (both APIs) and a `claude` program
on PATH that answers like the scripted provider, and must reach them: a block that names a
provider and quietly ran on the scripted one fails. Files a block attaches are created first.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from council_run import ECHO_SCRIPT, scripted_responder
from debate_story import REPO
from offline import clean_environment
from stub_server import StubServer

README = REPO / "README.md"
_BLOCK = re.compile(r"^(`{3,})bash\n(.*?)^\1$", re.MULTILINE | re.DOTALL)
_LOCAL_BASE_URL = re.compile(r"--base-url http://(?:localhost|127\.0\.0\.1):(\d+)")
_ATTACHED = re.compile(r"--attach (\S+)")
# The one block not run here, and why.
NOT_RUN_HERE = {"make test": "it runs this suite; CI runs it as .ci/run"}
# Blocks that install rather than hold a debate, and the file each must leave in the folder.
INSTALLS = {"dreamcontext install-skill --packs council --mcp": ".mcp.json"}

ATTACHMENT_TEXT = {
    ".md": "# Migration plan\n\nCopy sessions to Postgres with dual writes for a week.\n",
    ".sql": "CREATE TABLE sessions (id text PRIMARY KEY, data jsonb NOT NULL);\n",
}


def readme_blocks() -> list[str]:
    return [b for _, b in _BLOCK.findall(README.read_text(encoding="utf-8")) if b.strip()]


def _name(block: str) -> str:
    return block.strip().split("\n", 1)[0][:60]


def test_the_readme_has_its_two_set_up_commands_first() -> None:
    blocks = readme_blocks()
    assert [b.strip() for b in blocks[:2]] == ["make demo", "make test"]
    assert all(b.strip() not in NOT_RUN_HERE for b in blocks[2:])


@pytest.fixture
def stubs(request: pytest.FixtureRequest) -> Iterator[list[StubServer]]:
    """One stub on a free port (the SDKs' base URL), plus one per local --base-url port of the
    block, each on a free port too (see `on_free_ports`)."""
    block: str = request.param
    with ExitStack() as stack:
        servers = [stack.enter_context(StubServer(responder=scripted_responder))]
        for _ in sorted({int(p) for p in _LOCAL_BASE_URL.findall(block)}):
            servers.append(stack.enter_context(StubServer(scripted_responder)))
        yield servers


def on_free_ports(block: str, stubs: list[StubServer]) -> str:
    """The block with each local --base-url port it names (11434, a local model server's)
    moved to its stub's free port: a fixed port is taken by whatever else runs beside."""
    ports = sorted({int(p) for p in _LOCAL_BASE_URL.findall(block)})
    for port, server in zip(ports, stubs[1:], strict=True):
        block = re.sub(
            rf"(--base-url http://(?:localhost|127\.0\.0\.1)):{port}\b",
            rf"\g<1>:{server.port}",
            block,
        )
    return block


def _claude_program(folder: Path) -> None:
    """`claude` on PATH: reads the prompt on stdin, answers as the scripted provider would."""
    folder.mkdir()
    program = folder / "claude"
    program.write_text(f"#!{sys.executable}\n{ECHO_SCRIPT}", encoding="utf-8")
    program.chmod(0o755)


def _statuses(root: Path) -> list[str]:
    index = root / "council" / "index.json"
    if not index.exists():
        return []
    return [str(entry.get("status")) for entry in json.loads(index.read_text())]


@pytest.mark.parametrize(
    ("block", "stubs"),
    [(b, b) for b in readme_blocks() if b.strip() not in NOT_RUN_HERE],
    ids=[_name(b) for b in readme_blocks() if b.strip() not in NOT_RUN_HERE],
    indirect=["stubs"],
)
def test_a_readme_block_runs_as_written(
    block: str, stubs: list[StubServer], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name in _ATTACHED.findall(block):
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ATTACHMENT_TEXT.get(path.suffix, "notes\n"), encoding="utf-8")
    _claude_program(tmp_path / "bin")
    env = clean_environment(os.environ, tmp_path / "home")
    env["PATH"] = os.pathsep.join(
        [str(tmp_path / "bin"), str(Path(sys.executable).parent), env["PATH"]]
    )
    if "API_KEY" in block:  # a block that sets a key calls the stub through these
        env["ANTHROPIC_BASE_URL"] = stubs[0].url
        env["OPENAI_BASE_URL"] = stubs[0].openai_url
    root = work / "_dream_context"
    where = work
    if block.strip().startswith("make "):
        where, env["DREAMCONTEXT_ROOT"] = REPO, str(root)  # make runs in the checkout
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", on_free_ports(block, stubs)],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"{_name(block)} exited {done.returncode}:\n{done.stderr[-2000:]}"
    if block.strip() in INSTALLS:
        assert (work / INSTALLS[block.strip()]).is_file(), f"{_name(block)} installed nothing"
        return
    statuses = _statuses(root)
    assert statuses, "the block made no debate"
    if "council run" in block or block.strip() == "make demo":
        assert set(statuses) == {"complete"}, statuses
    for server in stubs:
        if "ANTHROPIC_API_KEY" in block or server is not stubs[0]:
            assert server.requests, f"no call reached the stub at {server.url}"
