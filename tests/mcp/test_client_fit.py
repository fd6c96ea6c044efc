"""What an MCP client sees before it calls anything, through the SDK's client over stdio:
the server's version, tool descriptions without source indentation, a default wait under
the usual 60 s request timeout, the recent debates' main files in resources/list, and
argument errors on one line."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from debate_story import run_process
from mcp import Client
from test_server import data, error_text, hold, server_environment

from dreamcontext_council import new_debate
from dreamcontext_council.council_mcp.reading import RECENT_DEBATES
from dreamcontext_council.folder.paths import Root

CLIENT_REQUEST_TIMEOUT = 60  # Claude Desktop's and the TypeScript SDK's default, in seconds


def test_the_server_introduces_itself_as_a_client_shows_it(workdir: Path) -> None:
    async def scenario(client: Client) -> None:
        assert client.server_info is not None
        assert client.server_info.version == version("dreamcontext-council")
        tools = (await client.list_tools()).tools
        for tool in tools:
            assert tool.description, tool.name
            lines = tool.description.splitlines()
            assert not any(line.startswith(" ") for line in lines), tool.description
        wait = next(tool for tool in tools if tool.name == "council_wait")
        default = wait.input_schema["properties"]["timeout_seconds"]["default"]
        assert 10 <= default <= CLIENT_REQUEST_TIMEOUT / 2

    hold(workdir, scenario)


def test_resources_list_the_recent_debates_main_files(
    workdir: Path, root_path: Path, finished: str
) -> None:
    newer = [
        new_debate(Root(root_path), f"Question number {n}?").id for n in range(RECENT_DEBATES + 1)
    ]

    async def scenario(client: Client) -> None:
        listed = (await client.list_resources()).resources
        uris = [str(resource.uri) for resource in listed]
        # The newest first, bounded: the oldest (finished) falls out of the 20 newest.
        assert uris[0] == f"council://{newer[-1]}/debate.md"
        assert f"council://{newer[0]}/debate.md" not in uris
        assert len({uri.split("/")[2] for uri in uris}) == RECENT_DEBATES
        assert all(resource.description for resource in listed)
        shown = await client.read_resource(uris[0])
        assert "Question number" in shown.contents[0].text  # type: ignore[union-attr]

    hold(workdir, scenario)


def test_a_complete_debate_lists_its_final_report(
    workdir: Path, root_path: Path, finished: str
) -> None:
    async def scenario(client: Client) -> None:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert uris == [f"council://{finished}/debate.md", f"council://{finished}/final-report.md"]

    hold(workdir, scenario)


def test_an_argument_error_is_one_line(workdir: Path) -> None:
    async def scenario(client: Client) -> None:
        for tool, arguments in (
            ("council_wait", {"debate_id": "council_x", "timeout_seconds": "soon"}),
            ("council_wait", {"debate_id": "council_x", "timeout_seconds": 10_000}),
            ("council_start", {"topic": "Go?", "rounds": 0, "max_cost": -1}),
            ("council_verdict", {"debate_id": "council_x"}),
        ):
            text = error_text(await client.call_tool(tool, arguments))
            assert "\n" not in text, text
            assert "http" not in text, text
            assert text.startswith(f"{tool} refused its arguments; nothing was done."), text

    hold(workdir, scenario)


def test_council_list_leaves_eval_debates_out_unless_asked(workdir: Path) -> None:
    questions = workdir / "set.jsonl"
    questions.write_text(
        '{"id": "ship", "question": "Ship it?", "options": {"A": "Ship", "B": "Wait"}, '
        '"answer": "A"}\n',
        encoding="utf-8",
    )
    env = server_environment(workdir)
    assert run_process(["eval", str(questions)], cwd=workdir, env=env).code == 0
    mine = run_process(["new", "Adopt Postgres?"], cwd=workdir, env=env).out.split()[-1]

    async def scenario(client: Client) -> None:
        plain = data(await client.call_tool("council_list", {"which": "all"}))
        assert [d["id"] for d in plain["debates"]] == [mine]
        assert plain["evals_left_out"] == 1
        every = data(await client.call_tool("council_list", {"which": "all", "evals": True}))
        assert len(every["debates"]) == 2 and every["evals_left_out"] == 0

    hold(workdir, scenario)
