"""Every reader shows what it can of a debate a merge left conflict markers in (no
`git-setup`), with the line naming the file: `agent list`, `list`, the dashboard's list and
the MCP tools. A debate whose debate.md frontmatter is conflicted is listed as conflicted,
never left out. Real `git` in temporary repositories; the CLI as a real process; the MCP
server as a real process through the SDK's client."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult
from offline import clean_environment
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.folder.paths import Root

from .test_gitmany import PERSONAS, Repo, answer_by_hand, debate_with_personas

CAUSE = (
    "holds git conflict markers: resolve them, or run `dreamcontext council git-setup` "
    "before merging next time; `dreamcontext council doctor` shows where."
)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    return Repo(tmp_path / "repo", home)


def merged_with_markers(repo: Repo, ours: Callable[[], None], theirs: Callable[[], None]) -> None:
    """`theirs` on a branch, `ours` on main, merged without the drivers and committed with
    the conflict markers in."""
    repo.git("checkout", "-q", "-b", "theirs")
    theirs()
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    ours()
    repo.commit("ours")
    assert repo.git("merge", "--no-edit", "theirs", check=False).returncode != 0
    repo.commit("merge, conflict markers and all")


def frontmatter_and_index_conflicted(repo: Repo) -> tuple[str, str]:
    """Two debates; the second's rounds extended differently on two branches, so its
    debate.md frontmatter and index.json both hold conflict markers."""
    other = debate_with_personas(repo)
    debate_id = debate_with_personas(repo)
    repo.commit("two debates")
    merged_with_markers(
        repo,
        lambda: repo.ok("round", "extend", debate_id, "--by", "1"),
        lambda: repo.ok("round", "extend", debate_id, "--by", "2"),
    )
    council = repo.path / "_dream_context" / "council"
    assert "<<<<<<<" in (council / "index.json").read_text(encoding="utf-8")
    assert "<<<<<<<" in (council / debate_id / "debate.md").read_text(encoding="utf-8")
    return debate_id, other


def test_list_shows_a_debate_whose_frontmatter_and_index_are_conflicted(repo: Repo) -> None:
    debate_id, other = frontmatter_and_index_conflicted(repo)
    where = f"_dream_context/council/{debate_id}/debate.md"

    listed = repo.council.proc("list", "--all")
    assert listed.code == 0, listed.err
    lines = listed.out.split("\n")
    at = next(i for i, line in enumerate(lines) if debate_id in line)
    assert "conflicted" in lines[at] and "Should we migrate" in lines[at + 1]
    assert other in listed.out
    assert f"Warning: {where} {CAUSE} Listed from what the file still says." in listed.err
    as_json = repo.council.proc("list", "--all", "--json")
    entries = {e["id"]: e for e in json.loads(as_json.out)}
    assert set(entries) == {debate_id, other}
    assert entries[debate_id]["conflicted"] == f"{where} {CAUSE}"
    assert entries[debate_id]["rounds_planned"] == 3  # our side: 2, extended by one
    assert "conflicted" not in entries[other]
    # Still listed, and still flagged, once another debate's write has rebuilt the index.
    repo.ok("round", "start", other, "1")
    again = json.loads(repo.council.proc("list", "--all", "--json").out)
    assert [e.get("conflicted") for e in again if e["id"] == debate_id] == [f"{where} {CAUSE}"]

    with TestClient(create_app(Root(repo.path / "_dream_context"))) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert f'href="/d/{debate_id}"' in page.text
        assert '<span class="badge tone-conflicted">conflicted</span>' in page.text
        assert "debate.md holds git conflict markers" in page.text
        assert f'href="/d/{other}"' in page.text


def test_a_debate_conflicted_after_the_index_was_written_is_flagged(repo: Repo) -> None:
    debate_id = debate_with_personas(repo)
    repo.commit("a debate")
    merged_with_markers(
        repo,
        lambda: repo.ok("round", "extend", debate_id, "--by", "1"),
        lambda: repo.ok("round", "extend", debate_id, "--by", "2"),
    )
    council = repo.path / "_dream_context" / "council"
    repo.git("checkout", "--ours", "--", "_dream_context/council/index.json")  # the index stands
    os.utime(council / debate_id / "debate.md")  # written after the index, as a merge may
    listed = json.loads(repo.council.proc("list", "--all", "--json").out)
    assert [e["id"] for e in listed] == [debate_id]
    assert listed[0]["conflicted"].startswith(f"_dream_context/council/{debate_id}/debate.md")


def one_persona_conflicted(repo: Repo) -> str:
    """Round 1 with risk-auditor answered differently on two branches (its report.md and
    verdicts.json conflict) and questioned differently (its context file conflicts)."""
    debate_id = debate_with_personas(repo)
    repo.ok("round", "start", debate_id, "1")
    repo.commit("round 1 started")

    def side(stance: str, conviction: int, question: str) -> Callable[[], None]:
        def answer() -> None:
            answer_by_hand(repo, debate_id, "risk-auditor", stance, conviction)
            repo.ok("question", debate_id, "risk-auditor", question)

        return answer

    merged_with_markers(
        repo,
        side("A", 60, "What would a rollback cost?"),
        side("B", 70, "Who runs Postgres at night?"),
    )
    folder = repo.council.folder(debate_id) / "risk-auditor"
    for name in ("context-and-persona.md", "report.md"):
        assert "<<<<<<<" in (folder / name).read_text(encoding="utf-8"), name
    return debate_id


def test_agent_list_shows_the_roster_around_a_conflicted_persona(repo: Repo) -> None:
    debate_id = one_persona_conflicted(repo)
    folder = f"_dream_context/council/{debate_id}/risk-auditor"

    listed = repo.council.proc("agent", "list", debate_id)
    assert listed.code == 0, listed.err
    assert all(slug in listed.out for slug in PERSONAS)
    for name in ("context-and-persona.md", "report.md"):
        assert f"Warning: {folder}/{name} {CAUSE} Shown without it." in listed.err
    rows = {
        r["slug"]: r
        for r in json.loads(repo.council.proc("agent", "list", debate_id, "--json").out)
    }
    assert rows["risk-auditor"]["conflicts"] == [
        f"{folder}/context-and-persona.md {CAUSE}",
        f"{folder}/report.md {CAUSE}",
    ]
    assert rows["risk-auditor"]["rounds_reported"] == []
    assert rows["growth-cfo"]["conflicts"] == [] and rows["growth-cfo"]["aspects"] == [
        "risk",
        "cost",
    ]
    assert rows["risk-auditor"]["aspects"] == []  # its context file is left out


def hold(repo: Repo, scenario: Callable[[Client], Awaitable[None]]) -> None:
    """`dreamcontext council mcp` as a real process in the repository, driven by `scenario`."""
    home = repo.path.parent / "mcp-home"
    home.mkdir(exist_ok=True)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamcontext_council", "council", "mcp"],
        env=clean_environment(repo.env, home),
        cwd=repo.path,
    )

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=60) as client:
                await scenario(client)

    anyio.run(main)


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def test_mcp_status_board_and_list_read_around_conflicts(repo: Repo) -> None:
    debate_id = one_persona_conflicted(repo)
    folder = f"_dream_context/council/{debate_id}"
    seen: dict[str, dict[str, Any]] = {}

    async def scenario(client: Client) -> None:
        seen["status"] = data(await client.call_tool("council_status", {"debate_id": debate_id}))
        seen["board"] = data(await client.call_tool("council_board", {"debate_id": debate_id}))
        seen["list"] = data(await client.call_tool("council_list", {"which": "all"}))

    hold(repo, scenario)

    status = seen["status"]
    assert status["status"] == "round_1_running" and status["id"] == debate_id
    assert f"{folder}/verdicts.json {CAUSE}" in status["conflicts"]
    assert f"{folder}/risk-auditor/report.md {CAUSE}" in status["conflicts"]
    assert f"{folder}/risk-auditor/context-and-persona.md {CAUSE}" in status["conflicts"]
    board = seen["board"]
    assert board["conflicts"] == status["conflicts"]
    assert {row["slug"] for row in board["board"]["rows"]} == set(PERSONAS)
    assert [d["id"] for d in seen["list"]["debates"]] == [debate_id]


def test_mcp_list_names_a_debate_whose_frontmatter_is_conflicted(repo: Repo) -> None:
    debate_id, other = frontmatter_and_index_conflicted(repo)
    seen: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        seen["list"] = data(await client.call_tool("council_list", {"which": "all"}))

    hold(repo, scenario)
    listed = {d["id"]: d for d in seen["list"]["debates"]}
    assert set(listed) == {debate_id, other}
    assert listed[debate_id]["conflicted"].endswith(CAUSE)
