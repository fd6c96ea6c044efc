"""`@last` over MCP: the reads (council_status, council_board, council_report and the
council:// resources) take the newest debate; a tool that writes still needs the id."""

from __future__ import annotations

from pathlib import Path

from debate_story import Chair
from mcp import Client
from mcp.types import TextResourceContents
from test_server import data, error_text, hold


def test_the_reads_take_at_last_for_the_newest_debate(chair: Chair, workdir: Path) -> None:
    older = chair.new("An older question: hire a second SRE?")
    newest = chair.reference_story()
    chair.close(newest)

    async def scenario(client: Client) -> None:
        status = data(await client.call_tool("council_status", {"debate_id": "@last"}))
        assert status["id"] == newest and status["status"] == "complete"
        board = data(await client.call_tool("council_board", {"debate_id": "@last"}))
        assert board["id"] == newest and board["board"]["round"] == 2
        report = data(
            await client.call_tool("council_report", {"debate_id": "@last", "section": "Verdict"})
        )
        assert report["id"] == newest
        assert report["text"].startswith("Migrate now (A). Confidence: medium.")
        listed = data(await client.call_tool("council_list", {"which": "all"}))["debates"]
        assert [d["id"] for d in listed] == [newest, older]
        assert listed[0]["verdict"] == {"sentence": "Migrate now (A).", "confidence": "medium"}
        read = await client.read_resource("council://@last/debate.md")
        [content] = read.contents
        assert isinstance(content, TextResourceContents)
        assert f"id: {newest}" in content.text and older not in content.text
        # Writing needs the debate named: `@last` is not an id there.
        refused = await client.call_tool(
            "council_verdict",
            {
                "debate_id": "@last",
                "persona": "risk-auditor",
                "round": 1,
                "stance": "A",
                "conviction": 50,
                "headline": "No id, no write",
            },
        )
        assert "'@last' is not a debate id" in error_text(refused)

    hold(workdir, scenario)


def test_at_last_with_no_debate_says_how_to_start(workdir: Path, root_path: Path) -> None:
    (root_path / "council").mkdir(parents=True)

    async def scenario(client: Client) -> None:
        said = error_text(await client.call_tool("council_status", {"debate_id": "@last"}))
        assert said.startswith("No debates under ") and "--topic" in said

    hold(workdir, scenario)
