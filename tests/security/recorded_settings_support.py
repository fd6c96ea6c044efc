"""What the recorded-settings tests share: a debate someone else ran, with a `run:` mapping
of their choosing, cloned into the user's workspace; and `council mcp` held over stdio."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
from council_run import Council
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from dreamcontext_council.folder import frontmatter_io

from .command_consent_support import workspace


def cloned_with_settings(
    tmp_path: Path, council: Council, run: Mapping[str, Any], persona_model: str = "scripted"
) -> str:
    """A one-round debate whose debate.md records `run`, made elsewhere and copied into
    `council`'s root, as a `git clone` of someone else's repository would bring it."""
    theirs = workspace(tmp_path, "theirs")
    theirs.env = {
        **theirs.environment(),
        "DREAMCONTEXT_TRUST_FILE": str(tmp_path / "their-trust.json"),
    }
    debate_id = theirs.new_debate("--rounds", "1")
    theirs.add_persona(debate_id, "insider", model=persona_model)
    theirs.add_persona(debate_id, "bystander", model=persona_model)
    debate_md = theirs.folder(debate_id) / "debate.md"
    meta, body = frontmatter_io.parse(debate_md.read_text(encoding="utf-8"), "debate.md")
    meta["run"] = dict(run)
    debate_md.write_text(frontmatter_io.render(meta, body), encoding="utf-8")
    shutil.copytree(theirs.root, council.root)
    return debate_id


Scenario = Callable[[Client], Awaitable[None]]


def hold_mcp(council: Council, scenario: Scenario, env: Mapping[str, str] | None = None) -> None:
    """`dreamcontext council mcp` in `council`'s workspace as a real process, `scenario` on it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamcontext_council", "council", "mcp"],
        env=council.environment(env),
        cwd=council.workdir,
    )

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=60) as client:
                await scenario(client)

    anyio.run(main)


def tool_error(result: CallToolResult) -> str:
    """The one text of a tool call that failed."""
    assert result.is_error, result.structured_content
    (block,) = result.content
    return block.text  # type: ignore[union-attr]
