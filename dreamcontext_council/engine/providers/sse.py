"""Server-sent events read off a streamed response body, piece by piece, and what they say.

Both APIs stream their answers as `text/event-stream` (`event:` and `data:` lines, a
blank line after each event). The SDKs' own decoders build an object per line; this one
splits the bytes it is fed at blank lines, which costs about half as much per event, and
a streamed answer has one event per token or so. Each event's JSON is read by orjson,
a fifth of what `json.loads` costs for an event this small (docs/benchmarks.md).

What a hostile server can send is bounded here: the decoder looks at each byte a bounded
number of times and refuses an event longer than the answer's budget, and reading stops
once the answer gathered passes that budget.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import orjson

from dreamcontext_council.engine.providers.diagnosis import AttemptFailed, no_text, stream_cut

_DONE = b"[DONE]"  # the OpenAI stream's last event, no JSON


class SseDecoder:
    """Events out of a body fed in pieces of any size; CR, LF and CRLF all end a line.

    Each byte is looked at a bounded number of times, however the body is cut into pieces:
    an event still open is kept apart and only the new bytes are searched for its end. An
    event longer than `max_event` bytes (comments and all) is a malformed answer.
    """

    def __init__(self, max_event: int) -> None:
        self.max_event = max_event
        self._open = bytearray()  # the event begun and not yet ended
        self._cr = False  # the last piece ended in CR, whose LF may come next

    def feed(self, data: bytes) -> list[tuple[str, bytes]]:
        """The `(event name, data)` of every event that `data` completes, in order.

        The name is "" when the event gives none; the data lines are joined by newlines.
        Comments, ids and events without data are left out.
        """
        if self._cr or b"\r" in data:
            data = self._lf_only(data)
        opened = self._open
        if opened:
            searched_from = len(opened) - 1  # a blank line may start in the last byte kept
            opened += data
            end = opened.rfind(b"\n\n", searched_from)
            if end < 0:
                self._check_size()
                return []
            ended = bytes(opened[:end])
            del opened[: end + 2]
        else:
            end = data.rfind(b"\n\n")
            if end < 0:
                opened += data
                self._check_size()
                return []
            ended = data[:end]
            opened += data[end + 2 :]
        self._check_size()
        events: list[tuple[str, bytes]] = []
        for block in ended.split(b"\n\n"):
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

    def _lf_only(self, data: bytes) -> bytes:
        """`data` with CRLF and CR as LF (a CR at its end waits for the next piece)."""
        if self._cr:
            data = b"\r" + data
        self._cr = data.endswith(b"\r")
        if self._cr:
            data = data[:-1]
        return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

    def _check_size(self) -> None:
        if len(self._open) > self.max_event:
            raise AttemptFailed(no_text(f"stream event over {self.max_event:,} bytes"))


class EventStream(Protocol):
    """What a provider gathers a streamed answer into (`MessageStream`, `ChatStream`)."""

    @property
    def held(self) -> int:
        """Characters of answer kept so far (text, tool-call input and the rest)."""
        ...

    @property
    def ended(self) -> bool:
        """Whether the answer's last event came: nothing after it is read."""
        ...

    def add(self, event: Any) -> str | None:
        """Take one event: the answer text it adds ("" for none), None for a keep-alive."""
        ...


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
    stream: EventStream,
    on_text: Callable[[str], None],
    progress: Callable[[], None],
    limit: int,
) -> bool:
    """Feed each JSON event of a streamed `body` to `stream`, and the answer text it adds
    to `on_text`, once per piece of the body (the text of all the events that piece
    completed, joined). True when reading stopped because `stream` held more than `limit`
    characters; False at the body's end, or at its last event.

    `progress()` is called for every piece that completes an event other than a
    keep-alive: comments, blank lines, pings and bytes of an event not yet ended do not
    count. An event longer than `limit` bytes is a malformed answer. An error event (`event: error`, or data with an `error`
    member) is a stream cut off, with the server's message; `[DONE]` ends the stream and
    events that carry no JSON object are skipped.
    """
    decoder = SseDecoder(limit)
    async for data in body:
        pieces: list[str] = []
        heard = False
        try:
            for name, payload in decoder.feed(data):
                if payload == _DONE:
                    return False
                event = _parsed(payload)
                if name == "error" or (isinstance(event, dict) and event.get("error")):
                    error = event.get("error") if isinstance(event, dict) else event
                    raise AttemptFailed(stream_cut(_error_text(error)))
                piece = stream.add(event)
                if piece is None:
                    continue
                heard = True
                if piece:
                    pieces.append(piece)
        finally:  # what came before an error event was heard all the same
            if pieces:
                on_text(pieces[0] if len(pieces) == 1 else "".join(pieces))
        if heard:
            progress()
            if stream.ended:
                return False
            if stream.held > limit:
                return True
    return False
