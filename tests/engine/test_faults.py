"""Faults through `run`, with the real anthropic and openai SDKs talking to the stub server."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from stub_server import StubResponse, StubServer

from dreamcontext_council.errors import EXIT_STOPPED

from .support import (
    OPTIONS,
    TEST_KEY,
    TOPIC,
    Council,
    request_task,
    roster_file,
    scripted_responder,
)

SLUGS = ("risk-auditor", "growth-cfo")
TARGET = "growth-cfo"
MODELS = {"anthropic": "anthropic:claude-sonnet-5-5", "openai": "openai:gpt-4o-mini"}
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def provider_env(kind: str, stub: StubServer) -> dict[str, str]:
    if kind == "anthropic":
        return {"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": stub.url}
    return {"OPENAI_API_KEY": TEST_KEY, "OPENAI_BASE_URL": stub.openai_url}


def first_fails(*faults: StubResponse) -> Callable[[dict[str, Any]], Any]:
    """TARGET's first round-1 requests get `faults`, in order; everything else is answered."""
    left = list(faults)
    lock = threading.Lock()

    def responder(request_json: dict[str, Any]) -> Any:
        task = request_task(request_json)
        with lock:
            if task.get("persona") == TARGET and task.get("round") == 1 and left:
                return left.pop(0)
        return scripted_responder(request_json)

    return responder


def run_debate(
    council: Council, tmp_path: Path, kind: str, stub: StubServer, *extra: str, count: int = 2
) -> Any:
    slugs = [*SLUGS, "platform-lead", "data-steward", "ops-chief", "sec-lead"][:count]
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(slugs, MODELS[kind]))
    return council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster,
        "--rounds",
        "1",
        "--synth-model",
        "scripted",
        *extra,
        env=provider_env(kind, stub),
    )


def target_requests(stub: StubServer) -> list[Any]:
    return [r for r in stub.requests if request_task(r.json).get("persona") == TARGET]


def target_usage(council: Council, debate_id: str) -> list[dict[str, Any]]:
    return [r for r in council.usage(debate_id) if r["persona"] == TARGET]


KINDS = pytest.mark.parametrize("kind", ["anthropic", "openai"])


@KINDS
@pytest.mark.parametrize(
    "fault",
    [
        StubResponse.error(429, "slow down", headers={"Retry-After": "1"}),
        StubResponse.error(500, "boom"),
        StubResponse.error(503, "unavailable"),
        StubResponse.error(529, "overloaded"),
        StubResponse.dropped(),
        StubResponse.cut_off("cut", keep_bytes=10),
        StubResponse.raw("{not json"),
    ],
    ids=["429", "500", "503", "529", "dropped", "cut-off", "malformed"],
)
def test_transient_faults_are_retried(
    council: Council, tmp_path: Path, kind: str, fault: StubResponse
) -> None:
    with StubServer(responder=first_fails(fault)) as stub:
        result = run_debate(council, tmp_path, kind, stub)
        requests = target_requests(stub)

    assert result.code == 0, result.err
    debate_id = result.last_line
    assert len(requests) == 2
    [record] = target_usage(council, debate_id)
    assert (record["outcome"], record["attempt"]) == ("ok", 2)
    assert "Persona failed" not in council.log(debate_id)
    if fault.status == 429:
        assert requests[1].received_at - requests[0].received_at >= 0.9  # Retry-After: 1


@KINDS
def test_a_call_past_the_timeout_is_retried(council: Council, tmp_path: Path, kind: str) -> None:
    with StubServer(responder=first_fails(StubResponse.slow(3.0))) as stub:
        result = run_debate(council, tmp_path, kind, stub, "--timeout", "0.5")
        requests = target_requests(stub)

    assert result.code == 0, result.err
    assert len(requests) == 2
    [record] = target_usage(council, result.last_line)
    assert (record["outcome"], record["attempt"]) == ("ok", 2)


@KINDS
def test_retries_run_out_and_the_persona_is_excused(
    council: Council, tmp_path: Path, kind: str
) -> None:
    faults = [StubResponse.error(503, "down")] * 3
    with StubServer(responder=first_fails(*faults)) as stub:
        result = run_debate(council, tmp_path, kind, stub, "--retries", "1")
        requests = target_requests(stub)

    assert result.code == 0, result.err
    assert len(requests) == 2  # one try and one retry
    [record] = target_usage(council, result.last_line)
    assert record["outcome"] == "failed"
    assert f"{kind} still failing after 2 attempts (503 unavailable: down)." in record["error"]
    assert f"Missing: {TARGET}" in council.log(result.last_line)


@KINDS
def test_a_bad_key_fails_at_once_naming_the_provider_and_the_variable(
    council: Council, tmp_path: Path, kind: str
) -> None:
    with StubServer(responder=lambda _r: StubResponse.error(401, "invalid key")) as stub:
        result = run_debate(council, tmp_path, kind, stub)
        requests = list(stub.requests)

    assert result.code == EXIT_STOPPED  # stopped, resumable once the key is fixed
    assert len(requests) == len(SLUGS)  # nobody retried
    assert f"{kind} rejected the API key (401)" in result.err
    # Inside the stop message's parentheses, without a full stop of its own.
    assert f"Set {KEY_ENV[kind]} to a valid key)." in result.err
    assert "Traceback" not in result.err


@KINDS
def test_a_bad_request_fails_at_once_naming_the_provider_and_the_model(
    council: Council, tmp_path: Path, kind: str
) -> None:
    with StubServer(
        responder=lambda _r: StubResponse.error(400, "max_tokens is too large")
    ) as stub:
        result = run_debate(council, tmp_path, kind, stub)
        requests = list(stub.requests)

    assert result.code == EXIT_STOPPED
    assert len(requests) == len(SLUGS)
    model = MODELS[kind].split(":", 1)[1]
    assert f"{kind} refused the request for model {model} (400): max_tokens is too large" in (
        result.err
    )


@KINDS
def test_concurrency_is_limited_per_provider(council: Council, tmp_path: Path, kind: str) -> None:
    # Long enough that a loaded machine still starts the second call before the first ends.
    with StubServer(responder=scripted_responder, default_delay_s=0.8) as stub:
        result = run_debate(council, tmp_path, kind, stub, "--concurrency", "2", count=6)
        most = stub.max_in_flight

    assert result.code == 0, result.err
    assert most == 2


def test_the_default_limit_holds_without_the_option(council: Council, tmp_path: Path) -> None:
    with StubServer(responder=scripted_responder, default_delay_s=0.3) as stub:
        result = run_debate(council, tmp_path, "openai", stub, count=6)
        most = stub.max_in_flight

    assert result.code == 0, result.err
    assert 2 <= most <= 4
