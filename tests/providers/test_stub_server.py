"""The stub server's own contract, for the other suites that drive whole debates through it."""

from __future__ import annotations

from typing import Any

from stub_server import StubResponse, StubServer

from dreamcontext_council.engine.providers.base import Prompt
from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider
from dreamcontext_council.engine.providers.retry import RetryPolicy

from .conftest import TEST_KEY, completed

PROMPT = Prompt(system="You are the Systems Thinker.", user="What feeds back into what?")


def ask_openai(server: StubServer, model: str = "gpt-4o-mini") -> str:
    provider = OpenAIProvider(
        api_key=TEST_KEY, base_url=server.openai_url, env={}, retry=RetryPolicy(base_delay_s=0)
    )
    return completed(provider, PROMPT, model).text


def test_a_responder_answers_from_the_request() -> None:
    seen: list[dict[str, Any]] = []

    def responder(request_json: dict[str, Any]) -> str:
        seen.append(request_json)
        return f"answer for {request_json['model']}"

    with StubServer(responder) as server:
        assert ask_openai(server, "m1") == "answer for m1"
        assert ask_openai(server, "m2") == "answer for m2"

    assert [r["model"] for r in seen] == ["m1", "m2"]
    assert seen[0]["messages"][0] == {"role": "system", "content": PROMPT.system}


def test_queued_answers_come_before_the_responder() -> None:
    with StubServer(lambda request_json: "from responder") as server:
        server.enqueue("queued")
        assert ask_openai(server) == "queued"
        assert ask_openai(server) == "from responder"
        assert server.pending == 0


def test_a_responder_may_return_a_status_headers_body_tuple() -> None:
    answers = iter(
        [
            (429, {"Retry-After": "0"}, {"error": {"message": "later"}}),
            StubResponse.reply("after the tuple", model="served"),
        ]
    )

    with StubServer(lambda request_json: next(answers)) as server:
        assert ask_openai(server) == "after the tuple"
        assert [r.api for r in server.requests] == ["openai", "openai"]


def test_usage_is_estimated_from_the_prompt_when_not_scripted() -> None:
    with StubServer() as server:
        provider = OpenAIProvider(api_key=TEST_KEY, base_url=server.openai_url, env={})
        completion = completed(provider, PROMPT, "gpt-4o-mini")

    prompt_chars = len(PROMPT.system) + 1 + len(PROMPT.user)
    assert completion.usage.input_tokens == prompt_chars // 4
    assert completion.usage.output_tokens == len("stub answer") // 4
    assert completion.model == "gpt-4o-mini"


def test_requests_are_recorded_with_headers_and_body() -> None:
    with StubServer() as server:
        ask_openai(server)
        [request] = server.requests

    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["content-type"] == "application/json"
    assert request.json["model"] == "gpt-4o-mini"
    assert server.max_in_flight == 1
    assert server.in_flight == 0
