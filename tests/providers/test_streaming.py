"""Streamed answers: the real SDKs read the stub server's event streams, on both HTTP stacks.

A prompt with `on_text` is streamed. The listener hears the answer piece by piece;
the completion is the whole answer; a stream that stalls past the timeout or breaks
off is a failed attempt, retried whole, and the listener is told of the retry before
the text starts over. A server that cannot stream is asked plainly, from then on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any

import pytest
from stub_server import StubResponse, StubServer, tool_results

from dreamcontext_council.engine.providers.anthropic_provider import AnthropicProvider
from dreamcontext_council.engine.providers.base import (
    Completion,
    Prompt,
    ProviderCallError,
    Reply,
    RetryNotice,
)
from dreamcontext_council.engine.providers.diagnosis import CallTarget
from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider
from dreamcontext_council.engine.providers.retry import RetryPolicy
from dreamcontext_council.engine.providers.sdk_provider import HTTP_ENV, SdkProvider
from dreamcontext_council.engine.providers.tool_turn import ToolOffer
from dreamcontext_council.engine.providers.tools import ToolCall, ToolOutcome, ToolSpec

from .conftest import TEST_KEY, closed

MODEL = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-4o-mini"}
STACKS = ["aiohttp", "httpx"]
ANSWER_PIECES = ("The table ", "has forty-two ", "rows, and ", "nobody counted ", "them twice.")
ANSWER = "".join(ANSWER_PIECES)
LOOKUP = ToolSpec(
    name="table__lookup",
    description="Look a key up in the project's table.",
    input_schema={"type": "object", "properties": {"key": {"type": "string"}}},
)


class Listener:
    """Hears what a provider tells a prompt's listeners: text pieces and retries, in order."""

    def __init__(self) -> None:
        self.heard: list[str | RetryNotice] = []

    def text(self, piece: str) -> None:
        self.heard.append(piece)

    def retry(self, notice: RetryNotice) -> None:
        self.heard.append(notice)

    @property
    def pieces(self) -> list[str]:
        return [p for p in self.heard if isinstance(p, str)]

    @property
    def retries(self) -> list[RetryNotice]:
        return [p for p in self.heard if isinstance(p, RetryNotice)]

    @property
    def told(self) -> list[str | RetryNotice]:
        """What was heard with the pieces between two retries joined: a provider may tell
        the pieces that arrived together as one."""
        told: list[str | RetryNotice] = []
        for item in self.heard:
            if isinstance(item, str) and told and isinstance(told[-1], str):
                told[-1] += item
            else:
                told.append(item)
        return told

    def since_last_retry(self) -> list[str]:
        """The pieces told after the last retry (all of them when there was none)."""
        last = max((i for i, p in enumerate(self.heard) if isinstance(p, RetryNotice)), default=-1)
        return [p for p in self.heard[last + 1 :] if isinstance(p, str)]

    def prompt(self, **options: Any) -> Prompt:
        return Prompt(
            system="You are the Empiricist.",
            user="How big is the table?",
            max_tokens=200,
            on_text=self.text,
            on_retry=self.retry,
            **options,
        )


class TableToolBox:
    """Answers `table__lookup` from a dict and records each call it is handed."""

    def __init__(self, table: dict[str, str]) -> None:
        self.specs = (LOOKUP,)
        self.max_calls = 4
        self.table = table
        self.calls: list[ToolCall] = []

    async def call(self, call: ToolCall) -> ToolOutcome:
        self.calls.append(call)
        return ToolOutcome(self.table.get(str(call.arguments.get("key")), "no such key"))


def build(
    kind: str,
    server: StubServer,
    retry: RetryPolicy,
    *,
    stack: str = "aiohttp",
    timeout_s: float = 5.0,
) -> SdkProvider:
    cls = AnthropicProvider if kind == "anthropic" else OpenAIProvider
    return cls(
        api_key=TEST_KEY,
        base_url=server.url if kind == "anthropic" else server.openai_url,
        timeout_s=timeout_s,
        retry=retry,
        env={HTTP_ENV: stack},
    )


def ask_all(provider: SdkProvider, prompts: Sequence[Prompt]) -> list[Completion]:
    """The prompts one after the other on one event loop, as one run asks them."""

    async def run() -> list[Completion]:
        try:
            return [await provider.complete(prompt, MODEL[provider.name]) for prompt in prompts]
        finally:
            await closed(provider)

    return asyncio.run(run())


def ask(provider: SdkProvider, prompt: Prompt) -> Completion:
    [completion] = ask_all(provider, [prompt])
    return completion


@pytest.fixture(params=["anthropic", "openai"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=STACKS)
def stack(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- pieces as they come ----------------------------------------------------------------


def test_pieces_arrive_in_order_and_join_to_the_whole_answer(
    kind: str, stack: str, stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.enqueue(
        StubResponse.streamed(
            ANSWER, pieces=ANSWER_PIECES, model="served-model", input_tokens=31, output_tokens=12
        )
    )
    listener = Listener()

    completion = ask(build(kind, stub, fast_retry, stack=stack), listener.prompt())

    assert listener.told == [ANSWER]
    assert completion.text == ANSWER
    assert completion.model == "served-model"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (31, 12)
    assert completion.attempts == 1
    [request] = stub.requests
    assert request.json["stream"] is True
    if kind == "openai":
        assert request.json["stream_options"] == {"include_usage": True}


def test_a_prompt_without_a_listener_is_asked_plainly(
    kind: str, stub: StubServer, fast_retry: RetryPolicy
) -> None:
    completion = ask(build(kind, stub, fast_retry), Prompt(system="", user="How big?"))

    assert completion.text == "stub answer"
    [request] = stub.requests
    assert "stream" not in request.json and "stream_options" not in request.json


def _same_ids(reply: Reply) -> str:
    """A reply as JSON with the stub's fresh call ids made equal (each answer gets new ones)."""
    return re.sub(r"(toolu|call)_stub\d+", "ID", json.dumps(dataclasses.asdict(reply)))


@pytest.mark.parametrize(
    "answer",
    [
        StubResponse.streamed(ANSWER, input_tokens=40, output_tokens=9),
        StubResponse.tool_calls([("table__lookup", {"key": "rows"})], text="Let me look. "),
        StubResponse.tool_calls([("table__lookup", {"key": "a"}), ("table__lookup", {})]),
        StubResponse.tool_calls([("table__lookup", '{"key": ')]),
        StubResponse.tool_calls([("table__lookup", "[1, 2]")]),
    ],
    ids=["text", "text-and-call", "two-calls", "bad-json", "not-an-object"],
)
def test_a_streamed_reply_equals_the_plain_reply_to_the_same_answer(
    kind: str, stub: StubServer, fast_retry: RetryPolicy, answer: StubResponse
) -> None:
    provider = build(kind, stub, fast_retry)
    prompt = Listener().prompt()
    target = CallTarget(provider=kind, model=MODEL[kind])
    offer = ToolOffer((LOOKUP,), allowed=True)
    stub.enqueue(answer, answer)

    async def both() -> tuple[Reply, tuple[Reply, bool]]:
        client = provider.build_client(provider.client_options())
        messages = provider.opening(prompt)
        try:
            plain = await provider.send(client, prompt, MODEL[kind], target, messages, offer)
            streamed = await provider.send_streamed(
                client, prompt, MODEL[kind], target, messages, offer, prompt.on_text, lambda: None
            )
            return plain, streamed
        finally:
            await client.close()

    plain, (streamed, was_streamed) = asyncio.run(both())

    assert was_streamed
    assert [r.json.get("stream") for r in stub.requests] == [None, True]
    assert _same_ids(streamed) == _same_ids(plain)


# -- stalls and cuts --------------------------------------------------------------------


def test_a_stream_that_stalls_past_the_timeout_is_retried(
    kind: str, stack: str, stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.enqueue(StubResponse.streamed(ANSWER, pieces=ANSWER_PIECES, stall_s=30.0))
    stub.enqueue(StubResponse.streamed("Forty-two rows.", pieces=["Forty-two ", "rows."]))
    listener = Listener()

    completion = ask(build(kind, stub, fast_retry, stack=stack, timeout_s=1.0), listener.prompt())

    assert completion.text == "Forty-two rows."
    assert completion.attempts == 2
    [notice] = listener.retries
    assert notice.reason == "timed out after 1s"
    assert listener.told == [ANSWER_PIECES[0], notice, "Forty-two rows."]


def test_a_long_answer_that_keeps_coming_is_not_cut_by_the_timeout(
    kind: str, stub: StubServer, fast_retry: RetryPolicy
) -> None:
    # Eight pieces a quarter of a second apart: twice the timeout in all, never a stall.
    pieces = [f"piece {n}. " for n in range(8)]
    stub.enqueue(StubResponse.streamed("".join(pieces), pieces=pieces, stall_s=0.25))
    listener = Listener()

    completion = ask(build(kind, stub, fast_retry, timeout_s=1.0), listener.prompt())

    assert completion.text == "".join(pieces)
    assert completion.attempts == 1
    assert listener.heard == pieces


@pytest.mark.parametrize("cut", ["drop", "end", "error"])
def test_a_stream_cut_mid_answer_is_retried_whole_and_its_text_is_never_the_answer(
    kind: str, stack: str, stub: StubServer, fast_retry: RetryPolicy, cut: str
) -> None:
    stub.enqueue(StubResponse.streamed(ANSWER, pieces=ANSWER_PIECES, cut_after=2, cut=cut))
    stub.enqueue(StubResponse.streamed(ANSWER, pieces=ANSWER_PIECES))
    listener = Listener()

    completion = ask(build(kind, stub, fast_retry, stack=stack), listener.prompt())

    assert completion.text == ANSWER
    assert completion.attempts == 2
    assert len(stub.requests) == 2
    [notice] = listener.retries
    assert listener.told == ["".join(ANSWER_PIECES[:2]), notice, ANSWER]
    if cut == "error":
        assert "stub stream failed" in notice.reason


def test_a_stream_cut_every_time_fails_with_the_cut_and_no_text(
    kind: str, stub: StubServer, fast_retry: RetryPolicy
) -> None:
    cut_answer = StubResponse.streamed(ANSWER, pieces=ANSWER_PIECES, cut_after=3, cut="end")
    stub.enqueue(*[cut_answer] * 3)
    provider = build(kind, stub, fast_retry)
    provider.policy = dataclasses.replace(provider.policy, max_retries=2)

    with pytest.raises(ProviderCallError) as caught:
        ask(provider, Listener().prompt())

    assert "after 3 attempts (stream cut off" in str(caught.value)
    assert caught.value.retryable


# -- servers that cannot stream ---------------------------------------------------------


def test_a_server_that_refuses_streaming_gets_a_plain_call_and_only_plain_calls_after(
    kind: str, fast_retry: RetryPolicy
) -> None:
    first, second = Listener(), Listener()
    with StubServer(streaming="refuse") as server:
        server.enqueue(StubResponse.reply(ANSWER), StubResponse.reply(ANSWER))
        provider = build(kind, server, fast_retry)

        completions = ask_all(provider, [first.prompt(), second.prompt()])

        streamed = [r.json.get("stream") for r in server.requests]
    assert streamed == [True, None, None]
    assert [c.text for c in completions] == [ANSWER, ANSWER]
    assert [c.attempts for c in completions] == [1, 1]
    assert first.heard == [ANSWER] and second.heard == [ANSWER]
    assert provider.streaming is False


def test_a_server_that_answers_a_stream_request_plainly_is_asked_plainly_after(
    kind: str, stack: str, fast_retry: RetryPolicy
) -> None:
    first, second = Listener(), Listener()
    with StubServer(streaming="plain") as server:
        server.enqueue(
            StubResponse.reply(ANSWER, input_tokens=8, output_tokens=5),
            StubResponse.reply("Again."),
        )
        provider = build(kind, server, fast_retry, stack=stack)

        completions = ask_all(provider, [first.prompt(), second.prompt()])

        streamed = [r.json.get("stream") for r in server.requests]
    assert streamed == [True, None]
    assert [c.text for c in completions] == [ANSWER, "Again."]
    assert (completions[0].usage.input_tokens, completions[0].usage.output_tokens) == (8, 5)
    assert first.heard == [ANSWER] and second.heard == ["Again."]


def test_a_bad_request_that_does_not_name_stream_is_no_reason_to_stop_streaming(
    kind: str, stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.enqueue(StubResponse.error(400, "max_tokens: must be at most 100"))
    provider = build(kind, stub, fast_retry)

    with pytest.raises(ProviderCallError) as caught:
        ask(provider, Listener().prompt())

    assert "(400)" in str(caught.value)
    assert len(stub.requests) == 1
    assert provider.streaming is True


# -- turns with tools -------------------------------------------------------------------


def test_a_turn_with_tools_streams_every_request_and_assembles_the_calls(
    kind: str, stack: str, fast_retry: RetryPolicy
) -> None:
    def responder(request_json: dict[str, Any]) -> StubResponse:
        if not tool_results(request_json):
            return StubResponse.tool_calls(
                [("table__lookup", {"key": "rows", "note": "count them all"})],
                text="Let me look it up. ",
                input_tokens=20,
                output_tokens=6,
            )
        return StubResponse.streamed(
            ANSWER, pieces=ANSWER_PIECES, input_tokens=30, output_tokens=10
        )

    toolbox = TableToolBox({"rows": "42"})
    listener = Listener()
    with StubServer(responder) as server:
        completion = ask(
            build(kind, server, fast_retry, stack=stack), listener.prompt(tools=toolbox)
        )
        requests = list(server.requests)

    assert completion.text == ANSWER
    assert completion.tool_calls == 1
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (50, 16)
    assert "".join(listener.pieces) == "Let me look it up. " + ANSWER
    assert listener.told[-1].endswith(ANSWER)
    assert toolbox.calls == [
        ToolCall(
            id=toolbox.calls[0].id,
            name="table__lookup",
            arguments={"key": "rows", "note": "count them all"},
        )
    ]
    assert [r.json["stream"] for r in requests] == [True, True]
    [result] = tool_results(requests[1].json)
    assert result.call_id == toolbox.calls[0].id and result.content == "42"
    turn = requests[1].json["messages"][-2]  # the model's turn, before the results
    assert turn["role"] == "assistant"
    if kind == "anthropic":
        assert turn["content"] == [
            {"type": "text", "text": "Let me look it up. "},
            {
                "type": "tool_use",
                "id": result.call_id,
                "name": "table__lookup",
                "input": {"key": "rows", "note": "count them all"},
            },
        ]
    else:
        [call] = turn["tool_calls"]
        assert turn["content"] == "Let me look it up. "
        assert call["id"] == result.call_id
        assert json.loads(call["function"]["arguments"]) == {
            "key": "rows",
            "note": "count them all",
        }
