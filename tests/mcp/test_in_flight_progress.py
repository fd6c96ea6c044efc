"""Calls in progress over MCP: `council_wait` tells the characters each call has received and
who a seat waits for; `council_status` lists the calls. The calls are kept by a real
separate process, as `council run` keeps them, in the debate the server is running."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from debate_story import OPTIONS, TOPIC
from in_flight_writer import Writer
from mcp import Client
from test_server import data, hold


def test_council_wait_tells_the_calls_in_progress_and_status_lists_them(workdir: Path) -> None:
    progress: list[tuple[float, str]] = []
    statuses: list[dict[str, Any]] = []
    root = workdir / "_dream_context"

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message or ""))

    async def scenario(client: Client) -> None:
        started = data(
            await client.call_tool(
                "council_start",
                {"topic": TOPIC, "options": OPTIONS, "rounds": 1, "model": "scripted"},
            )
        )
        debate_id = started["id"]
        with (
            Writer(root, debate_id, "outsider") as outsider,
            Writer(root, debate_id, "alice") as alice,
        ):
            outsider.send("add", "x" * 1234)
            alice.send("wait")
            statuses.append(
                data(
                    await client.call_tool(
                        "council_wait",
                        {"debate_id": debate_id, "timeout_seconds": 3},
                        progress_callback=on_progress,
                    )
                )
            )
            statuses.append(
                data(await client.call_tool("council_status", {"debate_id": debate_id}))
            )
        statuses.append(data(await client.call_tool("council_status", {"debate_id": debate_id})))

    # Each scripted call takes 30 s: the run is still in its first round while it is followed,
    # its own calls in flight beside the ones the writers keep.
    hold(workdir, scenario, env={"DREAMCONTEXT_SCRIPTED_DELAY": "30"})
    lines = [message for _, message in progress if "outsider 1,234 chars" in message]
    assert lines, progress
    assert lines[0].startswith("round 1: ")
    assert lines[0].endswith("; waiting for alice")
    values = [value for value, _ in progress]
    assert values == sorted(values), "progress goes up"
    waited, status, after = statuses
    assert waited["server_run"]["state"] == "running"
    calls = {call["persona"]: call for call in status["in_flight"]}
    assert status["details"]["in_flight"] == status["in_flight"], "one reading, told twice"
    assert calls["outsider"]["chars"] == 1234
    assert calls["outsider"]["state"] == "streaming" and calls["outsider"]["round"] == 1
    own = set(calls) - {"outsider", "alice"}
    assert own, "the run's own calls are in flight too"
    assert all(calls[slug]["chars"] == 0 for slug in own)  # before their answers come
    assert calls["alice"]["state"] == "waiting"
    assert set(calls["alice"]) == {
        "persona",
        "phase",
        "round",
        "state",
        "chars",
        "elapsed_s",
        "detail",
    }
    assert {"outsider", "alice"}.isdisjoint(call["persona"] for call in after["in_flight"])
