"""Server-sent events read off a streamed response body, piece by piece, and what they say.

Both APIs stream their answers as `text/event-stream` (`event:` and `data:` lines, a
blank line after each event). The SDKs' own decoders build an object per line; this one
splits the bytes it is fed at blank lines, which costs about half as much per event, and
a streamed answer has one event per token or so. Each event's JSON is read by orjson,
a fifth of what `json.loads` costs for an event this small (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson

from dreamcontext_council.engine.providers.diagnosis import AttemptFailed, no_text, stream_cut

_DONE = b"[DONE]"  # the OpenAI stream's last event, no JSON


class SseDecoder:
    """Events out of a body fed in pieces of any size; CR, LF and CRLF all end a line."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[tuple[str, bytes]]:
        """The `(event name, data)` of every event that `data` completes, in order.

        The name is "" when the event gives none; the data lines are joined by newlines.
        Comments, ids and events without data are left out.
        """
        buffer = self._buffer + data if self._buffer else data
        held = b""
        if b"\r" in buffer:
            if buffer.endswith(b"\r"):  # its LF may come in the next piece
                buffer, held = buffer[:-1], b"\r"
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if b"\n\n" not in buffer:
            self._buffer = buffer + held
            return []
        *blocks, rest = buffer.split(b"\n\n")
        self._buffer = rest + held
        events: list[tuple[str, bytes]] = []
        for block in blocks:
            if block.startswith(b"data: ") and b"\n" not in block:  # the usual one-liner
                events.append(("", block[6:]))
                continue
            name = ""
            lines: list[bytes] = []
            for line in block.split(b"\n"):
                field, _, value = line.partition(b":")
                if value.startswith(b" "):
                    value = value[1:]
                if field == b"data":
                    lines.append(value)
                elif field == b"event":
                    name = value.decode("utf-8", "replace")
            if lines:
                events.append((name, b"\n".join(lines)))
        return events


def _parsed(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except ValueError:  # not JSON, or not UTF-8
        raise AttemptFailed(no_text("malformed stream event")) from None


def _error_text(error: Any) -> str:
    message = error.get("message") if isinstance(error, dict) else error
    line = str(message or "server error").strip().splitlines()
    return line[0][:200] if line else "server error"


async def read_events(
    body: AsyncIterator[bytes],
    take: Callable[[Any], str],
    on_text: Callable[[str], None],
    progress: Callable[[], None],
) -> None:
    """Feed each JSON event of a streamed `body` to `take`, and the answer text it returns
    to `on_text`, once per piece of the body (the text of all the events that piece
    completed, joined); `progress()` at every piece.

    An error event (`event: error`, or data with an `error` member) is a stream cut off,
    with the server's message; `[DONE]` and events that carry no JSON object are skipped.
    """
    decoder = SseDecoder()
    async for data in body:
        progress()
        pieces: list[str] = []
        try:
            for name, payload in decoder.feed(data):
                if payload == _DONE:
                    continue
                event = _parsed(payload)
                if name == "error" or (isinstance(event, dict) and event.get("error")):
                    error = event.get("error") if isinstance(event, dict) else event
                    raise AttemptFailed(stream_cut(_error_text(error)))
                piece = take(event)
                if piece:
                    pieces.append(piece)
        finally:  # what came before an error event was heard all the same
            if pieces:
                on_text(pieces[0] if len(pieces) == 1 else "".join(pieces))
