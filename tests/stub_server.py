"""A local HTTP server that speaks the Anthropic Messages and OpenAI chat APIs.

Tests point the real `anthropic` and `openai` SDK clients at it, so every byte goes
through the SDK's own HTTP stack, and script what the server answers:

    with StubServer() as server:
        server.enqueue(StubResponse.error(429, headers={"Retry-After": "2"}))
        server.enqueue(StubResponse.reply("Hello"))
        ...  # AnthropicProvider(base_url=server.url) or OpenAIProvider(base_url=server.openai_url)
        assert len(server.requests) == 2

Queued responses are served first, in order. When the queue is empty the server asks
`responder(request_json)`; its answer may be a plain string (a successful reply with
that text, shaped for whichever API the request came to), a `StubResponse`, or a
`(status, headers, body)` tuple. Without a responder it answers "stub answer".

The model can also ask for tools: `StubResponse.tool_calls([("lookup", {"key": "x"})])`
answers with `tool_use` blocks and `stop_reason: "tool_use"` to an Anthropic request,
and with `message.tool_calls` and `finish_reason: "tool_calls"` to an OpenAI one
(arguments given as a string are sent as they are, to script malformed JSON). A
responder sees the tool results the client sent back with `tool_results(request_json)`,
so it can answer with text once they are there:

    def responder(request_json):
        if not tool_results(request_json):
            return StubResponse.tool_calls([("lookup", {"key": "x"})])
        return "The table says 42."

A request that asks for a stream (`"stream": true`) gets its successful answers as
server-sent events, chunk by chunk, in the shape of its API, so scripts written for
plain answers serve streaming clients too. `StubResponse.streamed` scripts the stream
itself: its pieces, a stall between them, or a cut after some of them (the connection
dropped, a clean end without the closing event, or an error event). A server built
with `streaming="plain"` answers stream requests with a plain JSON body, and one with
`streaming="refuse"` answers them 400 (as servers that know no `stream` do).

Both SDKs' models list (`GET /v1/models`, what the run's pre-flight asks to check a key)
is answered apart from the script: with a list of one model, or with the error status set
in `models_status` (401 for a refused key). Those requests go to `model_lists`, not to
`requests`, so a test counts the calls it scripted:

    with StubServer(models_status=401) as server:
        ...  # `council run` stops before it makes a folder
        assert len(server.model_lists) == 1 and server.requests == []

The server listens on 127.0.0.1 only, on a free port, and never touches the network.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from prompt_cache import MAX_BREAKPOINTS, Bill, PromptCache, usage_fields
from stub_streams import Event, anthropic_events, error_event, openai_events, split_text

ANTHROPIC_PATHS = ("/v1/messages", "/messages")
MODELS_PATH = "/v1/models"
OPENAI_PATHS = ("/v1/chat/completions", "/chat/completions")

Body = bytes | str | Mapping[str, Any] | None
# A body may also be computed from the request, e.g. to echo its headers back.
BodyFactory = Callable[["RecordedRequest"], Body]
# What a responder returns: reply text, a StubResponse, or (status, headers, body).
Responder = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class StubResponse:
    """One scripted answer.

    `text` set and `body` None means "a successful reply with this text", shaped for
    the API the request came to. `body` may be a function of the `RecordedRequest`.
    `drop=True` closes the connection before answering; `truncate_to=N` announces
    the full body length but sends only N bytes, then closes (a connection dropped
    mid-response). `delay_s` waits before answering.

    To a request for a stream, the answer goes in `pieces` (by default a few words
    each), with `stall_s` seconds before every piece after the first; with
    `cut_after=N` the stream stops after N pieces: `cut="drop"` closes the connection
    mid-body, `"end"` ends the body cleanly without the closing event, `"error"` sends
    the API's error event first.
    """

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Body | BodyFactory = None
    text: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    delay_s: float = 0.0
    drop: bool = False
    truncate_to: int | None = None
    calls: tuple[tuple[str, Any], ...] = ()
    pieces: tuple[str, ...] | None = None
    stall_s: float = 0.0
    cut_after: int | None = None
    cut: str = "drop"

    @classmethod
    def streamed(
        cls,
        text: str,
        *,
        pieces: Sequence[str] | None = None,
        stall_s: float = 0.0,
        cut_after: int | None = None,
        cut: str = "drop",
        calls: Sequence[tuple[str, Any]] = (),
        model: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> StubResponse:
        """An answer with `text` streamed in `pieces` (which must join to it), maybe
        stalling or cut off; to a request without `stream` it is a plain answer."""
        if pieces is not None and "".join(pieces) != text:
            raise ValueError("the pieces of a streamed answer must join to its text")
        return cls(
            text=text,
            pieces=None if pieces is None else tuple(pieces),
            stall_s=stall_s,
            cut_after=cut_after,
            cut=cut,
            calls=tuple(calls),
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )

    @classmethod
    def tool_calls(
        cls,
        calls: Sequence[tuple[str, Any]],
        *,
        text: str = "",
        model: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> StubResponse:
        """The model asks for these `(tool name, arguments)` calls, after `text` if any.

        Arguments are a mapping, or a string sent exactly as it is (OpenAI's
        `function.arguments`, Anthropic's `input`), to script arguments that do not parse.
        """
        return cls(
            text=text,
            calls=tuple(calls),
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )

    @classmethod
    def reply(
        cls,
        text: str,
        *,
        model: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        delay_s: float = 0.0,
    ) -> StubResponse:
        """A successful answer with `text`, in the shape of whichever API is called."""
        return cls(
            text=text,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            delay_s=delay_s,
        )

    @classmethod
    def error(
        cls,
        status: int,
        message: str = "stub error",
        *,
        headers: Mapping[str, str] | None = None,
        delay_s: float = 0.0,
    ) -> StubResponse:
        """An error answer whose JSON body fits both APIs' error shapes."""
        return cls(
            status=status,
            headers=dict(headers or {}),
            body=error_body(status, message),
            delay_s=delay_s,
        )

    @classmethod
    def raw(
        cls,
        body: bytes | str,
        *,
        status: int = 200,
        content_type: str = "application/json",
    ) -> StubResponse:
        """Exactly these bytes (for malformed or truncated JSON)."""
        return cls(status=status, headers={"Content-Type": content_type}, body=body)

    @classmethod
    def dropped(cls, *, delay_s: float = 0.0) -> StubResponse:
        """Close the connection without sending anything."""
        return cls(drop=True, delay_s=delay_s)

    @classmethod
    def cut_off(cls, text: str = "cut off", *, keep_bytes: int = 20) -> StubResponse:
        """Start a successful reply, then drop the connection after `keep_bytes` bytes."""
        return cls(text=text, truncate_to=keep_bytes)

    @classmethod
    def slow(cls, delay_s: float, text: str = "slow answer") -> StubResponse:
        """A successful reply that arrives only after `delay_s` seconds."""
        return cls(text=text, delay_s=delay_s)


ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error body that both SDKs parse (`type` for Anthropic, `code` for OpenAI)."""
    kind = ERROR_TYPES.get(status, "api_error")
    return {
        "type": "error",
        "error": {"type": kind, "message": message, "param": None, "code": kind},
    }


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float

    @property
    def json(self) -> dict[str, Any]:
        """The request body parsed as JSON (empty dict when it is not JSON)."""
        try:
            parsed = json.loads(self.body or b"{}")
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}

    @property
    def api(self) -> str:
        """`"anthropic"`, `"openai"` or `"other"`, from the request path."""
        return api_for_path(self.path)

    @property
    def streamed(self) -> bool:
        """Whether the request asks for its answer as a stream of events."""
        return self.json.get("stream") is True


def api_for_path(path: str) -> str:
    """Which API a request path belongs to."""
    bare = path.split("?", 1)[0].rstrip("/")
    if bare.endswith(ANTHROPIC_PATHS):
        return "anthropic"
    if bare.endswith(OPENAI_PATHS):
        return "openai"
    return "other"


def estimate_tokens(text: str) -> int:
    """A rough token count (characters / 4, at least 1) for stub usage numbers."""
    return max(1, len(text) // 4)


def prompt_text(request_json: Mapping[str, Any]) -> str:
    """All prompt text in a request of either API, joined, for usage estimates."""
    parts: list[str] = []
    system = request_json.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(str(block.get("text", "")) for block in system if isinstance(block, dict))
    for message in request_json.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


@dataclass(frozen=True)
class ToolResultSeen:
    """A tool result a client sent back: the call it answers, its text, and the error flag.

    `is_error` is None for OpenAI, whose `tool` messages have no such flag.
    """

    call_id: str
    content: str
    is_error: bool | None


def tool_results(request_json: Mapping[str, Any]) -> list[ToolResultSeen]:
    """Every tool result in a request of either API, in conversation order."""
    seen: list[ToolResultSeen] = []
    for message in request_json.get("messages") or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            content = message.get("content")
            seen.append(ToolResultSeen(str(message.get("tool_call_id")), str(content), None))
            continue
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                seen.append(
                    ToolResultSeen(
                        str(block.get("tool_use_id")),
                        str(block.get("content")),
                        bool(block.get("is_error", False)),
                    )
                )
    return seen


_ids = itertools.count(1)


def anthropic_message(
    text: str,
    *,
    model: str,
    input_tokens: int,
    output_tokens: int,
    calls: Sequence[tuple[str, Any]] = (),
    cached: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A Messages API response body; with `calls`, `tool_use` blocks after the text."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.extend(
        {"type": "tool_use", "id": f"toolu_stub{next(_ids):06d}", "name": name, "input": args}
        for name, args in calls
    )
    return {
        "id": f"msg_stub{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **(cached or {})},
    }


def openai_chat_completion(
    text: str | None,
    *,
    model: str,
    input_tokens: int,
    output_tokens: int,
    calls: Sequence[tuple[str, Any]] = (),
    cached: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A chat completions response body; with `calls`, `message.tool_calls`."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        message["content"] = text or None
        message["tool_calls"] = [
            {
                "id": f"call_stub{next(_ids):06d}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for name, args in calls
        ]
    return {
        "id": f"chatcmpl-stub{next(_ids):06d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            **(cached or {}),
        },
    }


def _accounting(response: StubResponse, request_json: Mapping[str, Any]) -> tuple[str, int, int]:
    """The model and token counts of a successful reply: as scripted, else estimated."""
    model = response.model or str(request_json.get("model") or "stub-model")
    input_tokens = (
        response.input_tokens
        if response.input_tokens is not None
        else estimate_tokens(prompt_text(request_json))
    )
    output_tokens = (
        response.output_tokens
        if response.output_tokens is not None
        else estimate_tokens(response.text or "")
    )
    return model, input_tokens, output_tokens


def success_body(
    response: StubResponse, request: RecordedRequest, bill: Bill | None = None
) -> dict[str, Any]:
    """The JSON body of a successful reply to `request`, in the shape of its API; with
    `bill`, its usage says what the prompt cache served."""
    text = response.text or ""
    model, input_tokens, output_tokens = _accounting(response, request.json)
    build = openai_chat_completion if request.api == "openai" else anthropic_message
    return build(
        text,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        calls=response.calls,
        cached=usage_fields(request.api, bill) if bill else None,
    )


def success_events(
    response: StubResponse, request: RecordedRequest, bill: Bill | None = None
) -> list[Event]:
    """The events of a successful reply to a request for a stream, in its API's shape."""
    request_json = request.json
    model, input_tokens, output_tokens = _accounting(response, request_json)
    cached = usage_fields(request.api, bill) if bill else None
    text = response.text or ""
    pieces = list(response.pieces) if response.pieces is not None else split_text(text)
    if request.api == "openai":
        options = request_json.get("stream_options")
        return openai_events(
            pieces,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            calls=response.calls,
            include_usage=isinstance(options, dict) and options.get("include_usage") is True,
            cached=cached,
        )
    return anthropic_events(
        pieces,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        calls=response.calls,
        cached=cached,
    )


REFUSAL = "stream is not supported by this server"


def _coerce(result: Any) -> StubResponse:
    if isinstance(result, StubResponse):
        return result
    if isinstance(result, str):
        return StubResponse.reply(result)
    if isinstance(result, tuple) and len(result) == 3:
        status, headers, body = result
        return StubResponse(status=int(status), headers=dict(headers or {}), body=body)
    raise TypeError(
        f"responder returned {type(result).__name__}; expected str, tuple or StubResponse"
    )


class StubServer:
    """A threaded local HTTP server with a queue of scripted responses.

    Use as a context manager. `url` is the Anthropic-style base URL (the SDK adds
    `/v1/messages`); `openai_url` is the OpenAI-style base URL (ends in `/v1`).
    `requests` lists what arrived; `max_in_flight` is the largest number of requests
    the server was handling at the same moment. `default_delay_s` delays every answer
    that sets no delay of its own (useful to make concurrent calls overlap).
    `streaming` says how requests for a stream are answered: `"sse"` (events),
    `"plain"` (a plain JSON body) or `"refuse"` (a 400 that names `stream`). With
    `cache` (`prompt_cache.PromptCache`), successful replies bill their input by that
    provider's caching rules, and a request with more than 4 cache breakpoints is refused.
    `models_status` is the status of every answer to the models list (200: a list), an
    error's message `models_message`; `model_lists` lists those requests.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        default_delay_s: float = 0.0,
        port: int = 0,
        keep_alive: bool = False,
        streaming: str = "sse",
        cache: PromptCache | None = None,
        models_status: int = 200,
        models_message: str | None = None,
    ) -> None:
        if streaming not in ("sse", "plain", "refuse"):
            raise ValueError(f"streaming must be sse, plain or refuse, not {streaming!r}")
        self.responder = responder
        # How requests for a stream are answered: events, a plain body, or a 400.
        self.streaming = streaming
        # Off by default: every answer closes its connection, so a test sees each request
        # on a fresh one. On, connections stay open as a real provider's do.
        self.keep_alive = keep_alive
        self.requested_port = port
        self.default_delay_s = default_delay_s
        self.cache = cache
        # What the prompt cache billed each answered request, in the order they answered.
        self.bills: list[Bill] = []
        self.billed: list[tuple[RecordedRequest, Bill]] = []
        self.requests: list[RecordedRequest] = []
        self.models_status = models_status
        self.models_message = models_message
        self.model_lists: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[StubResponse] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> StubServer:
        """Start listening on 127.0.0.1, on the port asked for or else a free one."""
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.requested_port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests still waiting on a delay are abandoned."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- scripting -----------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._httpd is None:
            raise RuntimeError("StubServer is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for the Anthropic SDK (and any client that adds `/v1/...` itself)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK."""
        return f"{self.url}/v1"

    def enqueue(self, *responses: StubResponse | str) -> None:
        """Queue responses; each is served once, in order, before the responder is asked."""
        with self._lock:
            self._queue.extend(_coerce(r) for r in responses)

    @property
    def pending(self) -> int:
        """How many queued responses have not been served yet."""
        with self._lock:
            return len(self._queue)

    # -- serving -------------------------------------------------------------------

    def _next_response(self, request: RecordedRequest) -> StubResponse:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return _coerce(self.responder(request.json))
        return StubResponse.reply("stub answer")

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when the server is stopping."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()


def _encode(body: Body) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body).encode("utf-8")


def _make_handler(server: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        _counted = False  # a recorded request not answered yet

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            request = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                received_at=time.monotonic(),
            )
            if request.method == "GET" and request.path.split("?", 1)[0] == MODELS_PATH:
                self._models(request)
                return
            server._record(request)
            self._counted = True
            try:
                self._answer(request)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout) before we answered
            finally:
                self._answered()

        def _models(self, request: RecordedRequest) -> None:
            """The models list, in a shape both SDKs read, or the error `models_status` sets."""
            with server._lock:
                server.model_lists.append(request)
            status = server.models_status
            if status >= 400:
                message = server.models_message or (
                    "invalid x-api-key" if status == 401 else "stub refusal"
                )
                body: dict[str, Any] = error_body(status, message)
            else:
                model = {"id": "stub-model", "type": "model", "object": "model"}
                model |= {"display_name": "Stub", "created_at": "2026-01-01T00:00:00Z"}
                model |= {"created": 0, "owned_by": "stub"}
                body = {"object": "list", "data": [model], "has_more": False}
                body |= {"first_id": "stub-model", "last_id": "stub-model"}
            payload = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self.wfile.write(payload)
            self.wfile.flush()

        def _answered(self) -> None:
            """The request stops counting as in flight: once, before its first byte is sent
            (the client may send its next request as soon as it has this one's answer)."""
            if self._counted:
                self._counted = False
                server._done()

        def _answer(self, request: RecordedRequest) -> None:
            # The cache is read as the request arrives, and written once the answer begins.
            arrived = server.cache.bill(request.json) if server.cache is not None else None
            if request.streamed and server.streaming == "refuse":  # the script stays queued
                response = StubResponse.error(400, f"{REFUSAL}; 'stream' must be false")
            else:
                response = server._next_response(request)
            if server._wait(response.delay_s or server.default_delay_s):
                return
            self._answered()
            if response.drop:
                self.close_connection = True
                self.connection.close()
                return
            success = response.body is None and response.status < 400
            bill = None
            if success and server.cache is not None and arrived is not None:
                bill = arrived
                if bill.breakpoints > MAX_BREAKPOINTS:
                    response = StubResponse.error(
                        400,
                        f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided.",
                    )
                    success, bill = False, None
                else:
                    server.cache.commit(bill)  # the answer begins: its prefixes are readable
                    with server._lock:
                        server.bills.append(bill)
                        server.billed.append((request, bill))
            if success and request.streamed and server.streaming == "sse":
                self._stream(response, request, bill)
                return
            if response.body is None and response.status < 400:
                payload = json.dumps(success_body(response, request, bill)).encode("utf-8")
            elif callable(response.body):
                payload = _encode(response.body(request))
            else:
                payload = _encode(response.body)
            headers = {"Content-Type": "application/json", **dict(response.headers)}
            self.send_response(response.status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            if not server.keep_alive:
                self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = not server.keep_alive
            if response.truncate_to is not None:
                self.wfile.write(payload[: response.truncate_to])
                self.wfile.flush()
                self.connection.close()
                return
            self.wfile.write(payload)
            self.wfile.flush()

        def _stream(
            self, response: StubResponse, request: RecordedRequest, bill: Bill | None = None
        ) -> None:
            """Send the reply as events in a chunked body, as scripted: pieces, stalls, a cut."""
            self.send_response(response.status)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for name, value in dict(response.headers).items():
                self.send_header(name, value)
            if not server.keep_alive:
                self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = not server.keep_alive
            sent = pieces = 0
            for event in success_events(response, request, bill):
                if event.text:
                    if response.cut_after is not None and pieces >= response.cut_after:
                        self._cut(response, request)
                        return
                    if pieces and server._wait(response.stall_s):
                        return
                    pieces += 1
                data = f"{len(event.data):x}\r\n".encode() + event.data + b"\r\n"
                if response.truncate_to is not None and sent + len(data) > response.truncate_to:
                    self.wfile.write(data[: response.truncate_to - sent])
                    self.wfile.flush()
                    self.connection.close()
                    return
                self.wfile.write(data)
                self.wfile.flush()
                sent += len(data)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _cut(self, response: StubResponse, request: RecordedRequest) -> None:
            if response.cut == "error":
                event = error_event(request.api, "stub stream failed")
                self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            if response.cut in ("end", "error"):
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
            self.connection.close()

    return Handler
