"""A local HTTP server that answers every request with a body that does not end: endless
answer text as events, an endless JSON body, a gzip stream that inflates without end, or
keep-alives that never complete an event.

Each request's body comes from `body()`, an iterator of byte pieces, sent in a chunked
response; the server writes as fast as the client reads (or with the pauses the iterator
makes) and stops at `ceiling` bytes, so a client that never stops reading gets a body that
ends there instead of a test that runs for ever. What it saw is in `sent` (body bytes
written, per request) and `gave_up` (whether the client closed the connection before the
body ended): the test's measure of how much a client read, independent of any clock.

    with HostileServer(endless_chat_deltas(1000)) as server:
        ...  # OpenAIProvider(base_url=server.openai_url)
        assert server.gave_up == [True]

The helpers below build the bodies the tests and bench/hostile_streams.py use.
"""

from __future__ import annotations

import itertools
import json
import socketserver
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType

Body = Callable[[], Iterator[bytes]]


class HostileServer:
    """A threaded HTTP/1.1 server on 127.0.0.1 that answers with `body()`, up to `ceiling`."""

    def __init__(
        self,
        body: Body,
        *,
        content_type: str = "text/event-stream",
        headers: Mapping[str, str] | None = None,
        ceiling: int = 64 * 1024 * 1024,
        status: str = "200 OK",
    ) -> None:
        self.body = body
        self.status = status
        self.content_type = content_type
        self.headers = dict(headers or {})
        self.ceiling = ceiling
        self.sent: list[int] = []
        self.gave_up: list[bool] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: socketserver.ThreadingTCPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL for the Anthropic SDK."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK."""
        return f"{self.url}/v1"

    def __enter__(self) -> HostileServer:
        hostile = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                hostile._serve(self.rfile, self.wfile)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def wait_for(self, requests: int, seconds: float = 10.0) -> None:
        """Wait until `requests` requests were answered (their bodies ended or given up)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.gave_up) >= requests:
                    return
            time.sleep(0.02)
        raise AssertionError(f"the server answered {len(self.gave_up)} of {requests} requests")

    def _serve(self, rfile: object, wfile: object) -> None:
        read = rfile.readline  # type: ignore[attr-defined]
        length = 0
        while (line := read(65536)) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        rfile.read(length)  # type: ignore[attr-defined]
        head = [
            f"HTTP/1.1 {self.status}",
            f"Content-Type: {self.content_type}",
            "Transfer-Encoding: chunked",
            "Connection: close",
            *(f"{k}: {v}" for k, v in self.headers.items()),
        ]
        write = wfile.write  # type: ignore[attr-defined]
        sent, gave_up = 0, False
        try:
            write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            for piece in self.body():
                if self._stopping.is_set() or sent >= self.ceiling:
                    break
                if piece:
                    write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    wfile.flush()  # type: ignore[attr-defined]
                    sent += len(piece)
            write(b"0\r\n\r\n")
            wfile.flush()  # type: ignore[attr-defined]
        except OSError:  # the client closed its end: it stopped reading
            gave_up = True
        with self._lock:
            self.sent.append(sent)
            self.gave_up.append(gave_up)


# -- bodies -------------------------------------------------------------------------------


def _sse(data: object, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def endless_chat_deltas(chars: int = 1000) -> Body:
    """Chat completion chunks of `chars` characters of text each, for ever."""

    def body() -> Iterator[bytes]:
        text = ("lorem ipsum " * (chars // 12 + 1))[:chars]
        chunk = _sse(
            {
                "id": "chatcmpl-hostile",
                "object": "chat.completion.chunk",
                "model": "hostile",
                "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
            }
        )
        yield _sse({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        yield from itertools.repeat(chunk * 16)

    return body


def endless_message_deltas(chars: int = 1000) -> Body:
    """Messages API events: a message and a text block opened, then `text_delta`s for ever."""

    def body() -> Iterator[bytes]:
        text = ("lorem ipsum " * (chars // 12 + 1))[:chars]
        usage = {"input_tokens": 5, "output_tokens": 1}
        yield _sse(
            {"type": "message_start", "message": {"model": "hostile", "usage": usage}},
            "message_start",
        )
        yield _sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            "content_block_start",
        )
        delta = {"type": "content_block_delta", "index": 0}
        event = _sse(
            {**delta, "delta": {"type": "text_delta", "text": text}}, "content_block_delta"
        )
        yield from itertools.repeat(event * 16)

    return body


def endless_chat_json() -> Body:
    """A chat completion's JSON whose `content` string never closes."""

    def body() -> Iterator[bytes]:
        yield b'{"id": "chatcmpl-hostile", "model": "hostile", "choices": [{"index": 0, '
        yield b'"message": {"role": "assistant", "content": "'
        yield from itertools.repeat(b"lorem ipsum " * 5000)

    return body


def gzip_bomb() -> Body:
    """A chat completion's JSON gzipped, whose `content` inflates without end: about a
    thousand bytes of JSON for each byte sent."""

    def body() -> Iterator[bytes]:
        squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        yield squeeze.compress(b'{"choices": [{"message": {"role": "assistant", "content": "')
        block = b"a" * (1024 * 1024)
        while True:
            yield squeeze.compress(block) + squeeze.flush(zlib.Z_SYNC_FLUSH)

    return body


def keep_alives(every_s: float, *, event: bytes = b": ping\n\n", lasting_s: float = 60.0) -> Body:
    """`event` every `every_s` seconds for `lasting_s`: bytes that never complete an answer."""

    def body() -> Iterator[bytes]:
        ends = time.monotonic() + lasting_s
        while time.monotonic() < ends:
            yield event
            time.sleep(every_s)

    return body


def never_ended_event(every_s: float, lasting_s: float = 60.0) -> Body:
    """One event begun and never ended: a byte of its data every `every_s` seconds."""

    def body() -> Iterator[bytes]:
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "'
        ends = time.monotonic() + lasting_s
        while time.monotonic() < ends:
            yield b"a"
            time.sleep(every_s)

    return body
