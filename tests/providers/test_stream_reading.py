"""The pieces under a streamed call: the event decoder, the stream gatherers and the stall timer."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamcontext_council.engine.providers.anthropic_stream import MessageStream
from dreamcontext_council.engine.providers.diagnosis import AttemptFailed
from dreamcontext_council.engine.providers.limits import StallTimer
from dreamcontext_council.engine.providers.openai_stream import ChatStream
from dreamcontext_council.engine.providers.sse import SseDecoder, read_events

BODY = (
    b": a comment the server sends to keep the line open\n\n"
    b"event: message_start\n"
    b'data: {"type": "message_start"}\n\n'
    b'data: {"n": 1}\r\n\r\n'
    b'data: {"n":\rdata: 2}\r\r'
    b"id: 7\n"
    b"data:no space\n\n"
    b"event: ping\n\n"
    b"data: [DONE]\n\n"
    b"data: unterminated"
)
EVENTS = [
    ("message_start", b'{"type": "message_start"}'),
    ("", b'{"n": 1}'),
    ("", b'{"n":\n2}'),
    ("", b"no space"),
    ("", b"[DONE]"),
]


def decode(pieces: Sequence[bytes]) -> list[tuple[str, bytes]]:
    decoder = SseDecoder(max_event=1 << 20)
    return [event for piece in pieces for event in decoder.feed(piece)]


def test_events_are_read_whatever_the_line_ends() -> None:
    assert decode([BODY]) == EVENTS


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=12))
def test_events_are_the_same_however_the_body_is_split(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(BODY)]
    pieces = [BODY[a:b] for a, b in itertools.pairwise(bounds)]

    assert decode(pieces) == EVENTS


def _body(*pieces: bytes) -> AsyncIterator[bytes]:
    async def gen() -> AsyncIterator[bytes]:
        for piece in pieces:
            yield piece

    return gen()


class TextStream:
    """Events whose `text` is the answer; `{"ping": 1}` is a keep-alive."""

    def __init__(self) -> None:
        self.held = 0
        self.ended = False

    def add(self, event: Any) -> str | None:
        if event.get("ping"):
            return None
        text = str(event.get("text", ""))
        self.held += len(text)
        return text


def _read(*pieces: bytes) -> tuple[list[str], int]:
    heard: list[str] = []
    ticks = 0

    def tick() -> None:
        nonlocal ticks
        ticks += 1

    asyncio.run(read_events(_body(*pieces), TextStream(), heard.append, tick, 1 << 20))
    return heard, ticks


def test_each_piece_that_ends_an_event_counts_as_progress_and_text_goes_to_the_listener() -> None:
    heard, ticks = _read(b'data: {"text": "Forty"}\n\ndata: {"te', b'xt": "-two"}\n\n', b"")

    assert heard == ["Forty", "-two"]
    assert ticks == 2


def test_comments_pings_and_an_event_not_yet_ended_are_no_progress() -> None:
    heard, ticks = _read(b": ping\n\n", b'data: {"ping": 1}\n\n', b"\n\n", b'data: {"text": "x')

    assert heard == []
    assert ticks == 0


def test_the_events_one_piece_of_the_body_completes_reach_the_listener_as_one_text() -> None:
    heard, ticks = _read(
        b'data: {"text": "Forty"}\n\ndata: {}\n\ndata: {"text": "-two"}\n\ndata: {"te',
        b'xt": " rows"}\n\n',
    )

    assert heard == ["Forty-two", " rows"]
    assert ticks == 2


@pytest.mark.parametrize(
    "body",
    [
        b'event: error\ndata: {"type": "error", "error": {"message": "Overloaded\\nnow"}}\n\n',
        b'data: {"error": {"message": "Overloaded", "type": "server_error"}}\n\n',
    ],
)
def test_an_error_event_cuts_the_stream_with_the_servers_first_line(body: bytes) -> None:
    with pytest.raises(AttemptFailed) as caught:
        _read(b'data: {"text": "half"}\n\n', body)

    failure = caught.value.failure
    assert failure.retryable and not failure.no_text
    assert failure.reason == "stream cut off (Overloaded)"


def test_the_text_before_an_error_event_in_the_same_piece_is_heard_before_the_cut() -> None:
    heard: list[str] = []
    body = _body(b'data: {"text": "half"}\n\ndata: {"text": " way"}\n\ndata: {"error": "gone"}\n\n')

    with pytest.raises(AttemptFailed):
        asyncio.run(read_events(body, TextStream(), heard.append, lambda: None, 1 << 20))

    assert heard == ["half way"]


@pytest.mark.parametrize(
    "data",
    [
        b"{not json",
        b"[" * 100_000 + b"]" * 100_000,  # nested past any parser's depth
        b'{"text": "\xff\xfe"}',  # not UTF-8
        b'{"n": 1' + b"0" * 400 + b"}",  # a number no machine integer holds
    ],
)
def test_an_event_that_is_not_json_is_a_malformed_answer(data: bytes) -> None:
    with pytest.raises(AttemptFailed) as caught:
        _read(b"data: " + data + b"\n\n")

    assert caught.value.failure.no_text


# -- the gatherers ------------------------------------------------------------------------


def test_chat_chunks_without_a_finish_reason_are_a_cut_stream() -> None:
    stream = ChatStream()
    stream.add({"model": "m", "choices": [{"index": 0, "delta": {"content": "Half"}}]})

    with pytest.raises(AttemptFailed) as caught:
        stream.completion()

    assert caught.value.failure.reason == "stream cut off (no finish_reason)"


def test_chat_tool_call_pieces_are_joined_by_index() -> None:
    stream = ChatStream()
    deltas = [
        {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"k'}}]},
        {"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '": 1}'}}]},
    ]
    for delta in deltas:
        assert stream.add({"choices": [{"index": 0, "delta": delta}]}) == ""
    stream.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})

    message = stream.completion()["choices"][0]["message"]

    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]
    ] == [
        ("a", "f", '{"k": 1}'),
        ("b", "g", "{}"),
    ]
    assert message["content"] == ""


def test_message_events_without_message_stop_are_a_cut_stream() -> None:
    stream = MessageStream()
    stream.add({"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 3}}})

    with pytest.raises(AttemptFailed) as caught:
        stream.message()

    assert caught.value.failure.reason == "stream cut off (no message_stop)"


def test_message_usage_adds_the_final_output_and_keeps_the_cache_tokens() -> None:
    stream = MessageStream()
    start_usage = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 5,
        "cache_read_input_tokens": 7,
        "output_tokens": 1,
    }
    stream.add({"type": "message_start", "message": {"model": "m", "usage": start_usage}})
    stream.add({"type": "message_delta", "usage": {"output_tokens": 40, "input_tokens": None}})
    stream.add({"type": "message_stop"})

    assert stream.message()["usage"] == {**start_usage, "output_tokens": 40}
    assert json.dumps(stream.message())  # a plain JSON object, as a plain response is


# -- the stall timer ----------------------------------------------------------------------


def test_progress_keeps_a_call_alive_past_its_timeout() -> None:
    async def keeps_coming() -> str:
        async with StallTimer(0.5) as timer:
            for _ in range(10):  # about twice the timeout in all
                await asyncio.sleep(0.1)
                timer.progress()
        return "done"

    assert asyncio.run(keeps_coming()) == "done"


def test_a_stall_is_a_timeout_error() -> None:
    async def stalls() -> None:
        async with StallTimer(0.2) as timer:
            timer.progress()
            await asyncio.sleep(30)

    with pytest.raises(TimeoutError):
        asyncio.run(stalls())


def test_a_cancel_from_outside_stays_a_cancel() -> None:
    async def cancelled() -> None:
        async def inner() -> None:
            async with StallTimer(30):
                await asyncio.sleep(30)

        task = asyncio.ensure_future(inner())
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancelled())


def test_no_timeout_waits_for_ever() -> None:
    async def waits() -> str:
        async with StallTimer(None) as timer:
            timer.progress()
            await asyncio.sleep(0.05)
        return "done"

    assert asyncio.run(waits()) == "done"
