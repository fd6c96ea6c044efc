"""Helpers for the `council run` tests: run the CLI, read a debate folder back, build stubs.

The CLI runner, rosters, report reading and scripted answers live in tests/council_run.py,
shared with the synthesis and grounding suites; the engine tests import them from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from council_run import Council as Council
from council_run import h2_titles as h2_titles
from council_run import request_task as request_task
from council_run import roster_file as roster_file
from council_run import scripted_responder as scripted_responder
from council_run import section as section
from debate_story import OPTIONS as OPTIONS
from debate_story import TOPIC as TOPIC
from debate_story import Result as Result
from debate_story import entry as entry
from stub_server import StubResponse, prompt_text


def ok_answers(records: Iterable[dict[str, Any]]) -> dict[tuple[str, int], int]:
    """Successful persona answers (first asks and repairs) per (persona, round)."""
    counts: dict[tuple[str, int], int] = {}
    for r in records:
        if r["outcome"] == "ok" and r["phase"] in ("opening", "cross-exam", "rebuttal"):
            key = (r["persona"], r["round"])
            counts[key] = counts.get(key, 0) + 1
    return counts


def wait_for(condition: Callable[[], bool], timeout: float = 60.0, step: float = 0.01) -> None:
    """Poll until `condition()` holds; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition never held")
        time.sleep(step)


def fail_model(model: str, response: StubResponse) -> Callable[[dict[str, Any]], Any]:
    """A responder that sends `response` to calls for `model` and scripted answers otherwise."""

    def responder(request_json: dict[str, Any]) -> Any:
        if request_json.get("model") == model:
            return response
        return scripted_responder(request_json)

    return responder


TEST_KEY = "sk-test-engine-0123456789abcdef"


def openai_env(server_url: str, key: str = TEST_KEY) -> dict[str, str]:
    """Environment that sends every default (openai) call to the stub server."""
    return {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": server_url}


def calls_by(requests: Iterable[Any]) -> dict[tuple[str, int, str], list[str]]:
    """Prompt texts a stub received, by (persona, round, phase) as the prompt text names them."""
    found: dict[tuple[str, int, str], list[str]] = {}
    for request in requests:
        task = request_task(request.json)
        if not task:
            continue
        phase = "repair" if task.get("repair") else str(task.get("phase"))
        key = (str(task.get("persona", "orchestrator")), int(task.get("round", 0)), phase)
        found.setdefault(key, []).append(prompt_text(request.json))
    return found
