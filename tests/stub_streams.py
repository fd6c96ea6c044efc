"""Server-sent event streams for the stub server: the answers of both APIs in chunks.

`openai_events` and `anthropic_events` turn one successful answer (text and tool
calls) into the SSE events its API streams, each tagged with whether it carries a
piece of answer text, so the server can pause between pieces or stop after some.
`error_event` is the event each API sends when a stream fails midway.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_ids = itertools.count(1)
_WORDS = re.compile(r"\s*\S+\s*")


@dataclass(frozen=True)
class Event:
    """One SSE event as bytes, and whether it adds answer text."""

    data: bytes
    text: bool = False


def split_text(text: str, words: int = 3) -> list[str]:
    """`text` in pieces of a few words each (whitespace kept), the way a model streams."""
    tokens = _WORDS.findall(text)
    if "".join(tokens) != text:  # leading or all whitespace
        return [text] if text else []
    return ["".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n".encode()


def _arguments(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args)


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part]


def openai_events(
    pieces: Sequence[str],
    *,
    model: str,
    input_tokens: int,
    output_tokens: int,
    calls: Sequence[tuple[str, Any]] = (),
    include_usage: bool = True,
    cached: Mapping[str, Any] | None = None,
) -> list[Event]:
    """The chat completion chunks of an answer, ending with `[DONE]`."""
    chunk_id = f"chatcmpl-stub{next(_ids):06d}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
                ],
            }
        )

    events = [Event(chunk({"role": "assistant", "content": ""}))]
    events += [Event(chunk({"content": piece}), text=True) for piece in pieces]
    for index, (name, args) in enumerate(calls):
        call_id = f"call_stub{next(_ids):06d}"
        opening = {"index": index, "id": call_id, "type": "function"}
        opening["function"] = {"name": name, "arguments": ""}
        events.append(Event(chunk({"tool_calls": [opening]})))
        events += [
            Event(chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
            for part in _halves(_arguments(args))
        ]
    events.append(Event(chunk({}, "tool_calls" if calls else "stop")))
    if include_usage:
        usage = {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            **(cached or {}),
        }
        events.append(
            Event(
                _sse(
                    {
                        "id": chunk_id,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": model,
                        "choices": [],
                        "usage": usage,
                    }
                )
            )
        )
    events.append(Event(_sse("[DONE]")))
    return events


def anthropic_events(
    pieces: Sequence[str],
    *,
    model: str,
    input_tokens: int,
    output_tokens: int,
    calls: Sequence[tuple[str, Any]] = (),
    cached: Mapping[str, Any] | None = None,
) -> list[Event]:
    """The Messages API events of an answer, from `message_start` to `message_stop`."""
    start = {
        "type": "message_start",
        "message": {
            "id": f"msg_stub{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1, **(cached or {})},
        },
    }
    events = [Event(_sse(start, "message_start")), Event(_sse({"type": "ping"}, "ping"))]
    index = 0
    if pieces:
        block = {"type": "content_block_start", "index": 0}
        block["content_block"] = {"type": "text", "text": ""}
        events.append(Event(_sse(block, "content_block_start")))
        for piece in pieces:
            delta = {"type": "content_block_delta", "index": 0}
            delta["delta"] = {"type": "text_delta", "text": piece}
            events.append(Event(_sse(delta, "content_block_delta"), text=True))
        events.append(Event(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop")))
        index = 1
    for name, args in calls:
        block = {"type": "content_block_start", "index": index}
        block["content_block"] = {
            "type": "tool_use",
            "id": f"toolu_stub{next(_ids):06d}",
            "name": name,
            "input": {},
        }
        events.append(Event(_sse(block, "content_block_start")))
        for part in _halves(_arguments(args)):
            delta = {"type": "content_block_delta", "index": index}
            delta["delta"] = {"type": "input_json_delta", "partial_json": part}
            events.append(Event(_sse(delta, "content_block_delta")))
        stop = {"type": "content_block_stop", "index": index}
        events.append(Event(_sse(stop, "content_block_stop")))
        index += 1
    finish = {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }
    events.append(Event(_sse(finish, "message_delta")))
    events.append(Event(_sse({"type": "message_stop"}, "message_stop")))
    return events


def error_event(api: str, message: str) -> bytes:
    """The event that ends a stream with a server error, in the shape of `api`."""
    if api == "openai":
        return _sse({"error": {"message": message, "type": "server_error", "code": None}})
    error = {"type": "error", "error": {"type": "overloaded_error", "message": message}}
    return _sse(error, "error")
