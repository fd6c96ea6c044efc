"""A person's seat on a council an MCP client started: `council_start(human=[...])` seats
the person, `council_wait` says the run waits for them, and the hand-driven tools
(`council_round_context`, `council_verdict`, `council_report_append`) record their entry;
the run goes on, and no model is ever called for the seat."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from debate_story import OPTIONS, TOPIC, entry
from mcp import Client
from test_server import data, error_text, hold


def test_a_person_answers_a_council_started_over_mcp(workdir: Path) -> None:
    progress: list[str] = []
    seen: dict[str, Any] = {}

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def scenario(client: Client) -> None:
        started = data(
            await client.call_tool(
                "council_start",
                {
                    "topic": TOPIC,
                    "options": OPTIONS,
                    "rounds": 1,
                    "compact": False,
                    "human": ["alice"],
                    "skip_question_check": True,
                },
            )
        )
        debate_id = seen["id"] = started["id"]
        with anyio.fail_after(120):
            while not any("waiting for alice" in line for line in progress):
                status = data(
                    await client.call_tool(
                        "council_wait",
                        {"debate_id": debate_id, "timeout_seconds": 3},
                        progress_callback=on_progress,
                    )
                )
                assert status["server_run"]["state"] == "running", status
        status = data(await client.call_tool("council_status", {"debate_id": debate_id}))
        waiting = [call for call in status["in_flight"] if call["persona"] == "alice"]
        assert waiting and waiting[0]["state"] == "waiting"
        context = await client.call_tool(
            "council_round_context", {"debate_id": debate_id, "persona": "alice"}
        )
        assert not context.is_error and TOPIC[:30] in json.dumps(context.structured_content)
        data(
            await client.call_tool(
                "council_verdict",
                {
                    "debate_id": debate_id,
                    "persona": "alice",
                    "round": 1,
                    "stance": "A",
                    "conviction": 70,
                    "headline": "Migrate: the pool limits are already hurting us",
                },
            )
        )
        data(
            await client.call_tool(
                "council_report_append",
                {"debate_id": debate_id, "persona": "alice", "round": 1, "body": entry()},
            )
        )
        with anyio.fail_after(120):
            while True:
                status = data(
                    await client.call_tool(
                        "council_wait", {"debate_id": debate_id, "timeout_seconds": 10}
                    )
                )
                if status["server_run"]["state"] != "running":
                    break
        seen["status"] = status

    hold(workdir, scenario)
    status = seen["status"]
    assert status["status"] == "complete", status
    folder = workdir / "_dream_context" / "council" / seen["id"]
    context = (folder / "alice" / "context-and-persona.md").read_text(encoding="utf-8")
    assert "\nmodel: human\n" in context
    assert "## Round 1" in (folder / "alice" / "report.md").read_text(encoding="utf-8")
    calls = [json.loads(line) for line in (folder / "usage.jsonl").read_text().splitlines()]
    assert calls and all(call["persona"] != "alice" for call in calls)
    assert not list((folder / ".in-flight").glob("*.json"))


def test_a_person_seat_with_a_bad_slug_is_refused_in_one_line(workdir: Path) -> None:
    async def scenario(client: Client) -> None:
        message = error_text(
            await client.call_tool(
                "council_start",
                {"topic": TOPIC, "options": OPTIONS, "human": ["../alice"]},
            )
        )
        assert "alice" in message and "\n" not in message

    hold(workdir, scenario)
    assert not (workdir / "_dream_context" / "council").exists() or not any(
        p.is_dir() and p.name.startswith("council_")
        for p in (workdir / "_dream_context" / "council").iterdir()
    )
