"""What the two SDK providers share: key and server lookup, one client per event loop,
retries, and the turn with tools."""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from dreamcontext_council.engine.providers.answer_read import (
    DEFAULT_MAX_ANSWER_KB,
    body_pieces,
    cap_error_body,
    read_limit,
    read_plain,
)
from dreamcontext_council.engine.providers.base import Completion, Prompt, Reply, TextListener
from dreamcontext_council.engine.providers.diagnosis import (
    AttemptFailed,
    CallTarget,
    SdkErrors,
    no_text,
    secrets_from_env,
    server_message,
)
from dreamcontext_council.engine.providers.limits import CallLimits, StallTimer
from dreamcontext_council.engine.providers.retry import (
    Answered,
    RetryPolicy,
    complete_with_retries,
    request_with_retries,
)
from dreamcontext_council.engine.providers.sse import EventStream, read_events
from dreamcontext_council.engine.providers.tool_turn import ToolAnswer, ToolOffer, run_tool_turn
from dreamcontext_council.engine.providers.tools import ToolBox
from dreamcontext_council.errors import UsageError

Message = dict[str, Any]

# The HTTP stack under the SDK's client. Both SDKs ship a client on aiohttp (their `aiohttp`
# extra) for many requests at once: its parser is C where httpx's is Python, and a call costs
# a quarter to a third less CPU (docs/benchmarks.md). `httpx` keeps the SDK's default stack.
HTTP_ENV = "DREAMCONTEXT_HTTP"
HTTP_STACKS = ("aiohttp", "httpx")


def chosen_http_stack(environment: Mapping[str, str]) -> str:
    """The HTTP stack `DREAMCONTEXT_HTTP` names in `environment`; UsageError for another name."""
    stack = environment.get(HTTP_ENV) or HTTP_STACKS[0]
    if stack not in HTTP_STACKS:
        raise UsageError(
            f"{HTTP_ENV}={stack!r} names no HTTP stack; set it to aiohttp (the default) or "
            "httpx, or unset it."
        )
    return stack


def field_of(value: Any, name: str) -> Any:
    """`name` of a JSON object (a dict: a plain body, or what a stream gathers) or of an
    SDK model; None when absent."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def token_count(value: Any) -> int:
    """A token count of a response; AttemptFailed when it is not a number."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        raise AttemptFailed(no_text("response did not match the API schema")) from None


def answered_plain(response: Any) -> bool:
    """Whether a server answered a request for a stream with a plain JSON body."""
    return "json" in str(response.headers.get("content-type", "")).lower()


async def post_plain(
    client: Any,
    path: str,
    request: dict[str, Any],
    stream_cls: Any,
    limit: int,
    options: Mapping[str, Any] | None = None,
) -> bytearray:
    """Post `request` through the SDK's own request path (its HTTP stack, auth and error
    mapping) and read the plain body it answers, decoded, within `limit` bytes
    (`answer_read.read_plain`): the SDK would read it whole before any check."""
    stream = await client.post(
        path,
        body=request,
        cast_to=object,
        stream=True,
        stream_cls=stream_cls,
        **({"options": dict(options)} if options else {}),
    )
    try:
        return await read_plain(stream.response, limit)
    finally:
        await stream.close()


def cut_reply(reply: Reply) -> Reply:
    """`reply` as read until the budget: marked cut, its output tokens at least what its
    text holds (a stream cut short never reports them)."""
    return replace(reply, cut=True, output_tokens=max(reply.output_tokens, len(reply.text) // 4))


async def post_streamed(
    client: Any,
    path: str,
    request: dict[str, Any],
    stream_cls: Any,
    *,
    events: EventStream,
    plain: Callable[[bytes | bytearray], Reply],
    gathered: Callable[[], Reply],
    cut: Callable[[], Reply],
    on_text: TextListener,
    progress: Callable[[], None],
    limit: int,
    options: Mapping[str, Any] | None = None,
) -> tuple[Reply, bool]:
    """Post `request` for a stream through the SDK's own request path (its HTTP stack, auth
    and error mapping) and read the answer: each event to `events` (the piece of answer
    text it adds goes to `on_text`), then the reply `gathered` makes of them, and True; or,
    from a server that answered with a plain body, the reply `plain` reads and False.

    Reading stops once `events` hold more than `limit` characters: the connection is
    closed and the reply is what `cut` makes of the answer so far (`cut_reply`). The body's
    events are read by `sse.read_events`, without an object per line or a pydantic model
    per event (docs/benchmarks.md, "Streaming cost")."""
    stream = await client.post(
        path,
        body=request,
        cast_to=object,
        stream=True,
        stream_cls=stream_cls,
        **({"options": dict(options)} if options else {}),
    )
    try:
        progress()
        response = stream.response
        if answered_plain(response):
            return plain(await read_plain(response, limit)), False
        if await read_events(body_pieces(response), events, on_text, progress, limit):
            return cut_reply(cut()), True
        return gathered(), True
    finally:
        await stream.close()


def refuses_streaming(exc: BaseException) -> bool:
    """Whether an error status says the server does not take `stream` (or its options)."""
    status = int(getattr(exc, "status_code", 0) or 0)
    said = server_message(getattr(exc, "body", None)) or str(exc)
    return status in (400, 422, 501) and "stream" in said.lower()


def _has_credentials(url: str | None) -> bool:
    """Whether `url` carries a `user:password@` part."""
    if not url:
        return False
    try:
        parts = urlsplit(url)
        return bool(parts.username or parts.password)
    except ValueError:  # not a URL the SDK could use either; it says so on the first call
        return False


class SdkProvider:
    """A provider over an official SDK; subclasses build the client and make one request.

    The SDK is imported and its client built on the first call, one client per event
    loop (pooled connections cannot cross loops), on the HTTP stack `DREAMCONTEXT_HTTP`
    names (aiohttp unless it says httpx, or the server's URL carries credentials). The
    SDK's own retries are off:
    `retry.request_with_retries` does them, for each request on its own. A prompt
    with tools runs the conversation of `tool_turn.run_tool_turn`.

    A prompt with `on_text` is streamed: the timeout then runs between completed events
    (`sse.read_events`: comments, pings and an event never ended do not count), and each
    piece of answer text goes to the listener as it comes. A plain request has the
    timeout in all. Every answer is read within `answer_read.read_limit` of the cap
    `max_answer_kb`: a stream is cut there, a plain body past it is refused. A server that answers
    a stream request with a plain body, or refuses `stream` with an error that says
    so, is asked plainly from then on (`streaming` turns False). A prompt without a
    listener is asked plainly, which costs least.
    """

    name = ""
    supports_tools = True
    key_env = ""
    base_url_env = ""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        *,
        limits: CallLimits | None = None,
        retry: RetryPolicy | None = None,
        env: Mapping[str, str] | None = None,
        base_url_from: str | None = None,
        max_answer_kb: int = DEFAULT_MAX_ANSWER_KB,
    ) -> None:
        environment = os.environ if env is None else env
        self.base_url = base_url or environment.get(self.base_url_env) or None
        # The setting the server URL came from, for messages: `--base-url` or the variable.
        self.base_url_from = base_url_from or (self.base_url_env if self.base_url else None)
        key = api_key or environment.get(self.key_env) or None
        self._api_key = self.effective_key(key)
        self.timeout_s = timeout_s
        self.policy = replace(retry or RetryPolicy(), max_retries=max_retries)
        self.limits = limits or CallLimits()
        self.answer_limit = read_limit(max_answer_kb)
        # Credentials in the server's URL go as Basic auth in place of the key's header, as
        # httpx sends them; aiohttp refuses a URL with credentials beside that header.
        stack = chosen_http_stack(environment)
        self.http_stack = "httpx" if _has_credentials(self.base_url) else stack
        self._secrets = (
            tuple(s for s in (key,) if s)
            + secrets_from_env(environment)
            + secrets_from_env(os.environ)
        )
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._errors: SdkErrors | None = None
        # Until the server shows it cannot stream.
        self.streaming = True
        # Once the pre-flight's models list passed: the key is not asked about again.
        self.key_checked = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    def effective_key(self, key: str | None) -> str | None:
        """The key the client is given (a subclass may supply a placeholder)."""
        return key

    def build_client(self, options: dict[str, Any]) -> Any:
        """The SDK's async client for `options` (`client_options`)."""
        raise NotImplementedError

    def http_client(self, stack: str, **options: Any) -> Any:
        """The SDK's own HTTP client with its defaults, on `stack` (httpx or aiohttp: its
        `DefaultAsyncHttpxClient` or `DefaultAioHttpClient`), given `options`."""
        raise NotImplementedError

    def client_options(self) -> dict[str, Any]:
        """What the client is built with: no retries of the SDK's own, the timeout, the key
        and server when given, and the SDK's HTTP client on the chosen stack, whose error
        bodies are read within `answer_read.ERROR_BODY_MOST` (the SDK reads one whole)."""
        options: dict[str, Any] = {"max_retries": 0, "timeout": self.timeout_s}
        if self._api_key:
            options["api_key"] = self._api_key
        if self.base_url:
            options["base_url"] = self.base_url
        hooks = {"response": [cap_error_body]}
        options["http_client"] = self.http_client(self.http_stack, event_hooks=hooks)
        return options

    def sdk_errors(self) -> SdkErrors:
        """The SDK's exception classes, for `diagnosis.classify`."""
        raise NotImplementedError

    def opening(self, prompt: Prompt) -> list[Message]:
        """The messages a conversation about `prompt` starts with."""
        raise NotImplementedError

    async def send(
        self,
        client: Any,
        prompt: Prompt,
        model: str,
        target: CallTarget,
        messages: Sequence[Message],
        tools: ToolOffer | None,
    ) -> Reply:
        """One attempt: send `messages` (offering `tools`, if any) and read the reply."""
        raise NotImplementedError

    async def send_streamed(
        self,
        client: Any,
        prompt: Prompt,
        model: str,
        target: CallTarget,
        messages: Sequence[Message],
        tools: ToolOffer | None,
        on_text: TextListener,
        progress: Callable[[], None],
    ) -> tuple[Reply, bool]:
        """One streamed attempt: each piece of answer text to `on_text`, `progress()` at
        every event; the reply, and False when the server answered with a plain body."""
        raise NotImplementedError

    def tool_results(self, reply: Reply, answers: Sequence[ToolAnswer]) -> list[Message]:
        """The messages that follow `reply`: its own turn, then the results of its calls."""
        raise NotImplementedError

    def check_ready(self, target: CallTarget) -> None:
        """Raise `AttemptFailed` when a request cannot be made at all (e.g. no key)."""

    def _client(self, target: CallTarget) -> Any:
        self.check_ready(target)  # before the SDK's own constructor refuses in its words
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self.build_client(self.client_options())
        return client

    def _retrying(self, target: CallTarget) -> dict[str, Any]:
        """How every request of this provider is retried: the policy, limits and errors."""
        return {
            "target": target,
            "policy": self.policy,
            "limits": self.limits,
            "timeout_s": self.timeout_s,
            "errors": self._sdk_errors(),
            "timed_by_attempt": True,
        }

    def _sdk_errors(self) -> SdkErrors:
        if self._errors is None:
            self._errors = self.sdk_errors()
        return self._errors

    def target(self, model: str) -> CallTarget:
        """Who a request of this provider for `model` goes to, for messages."""
        return CallTarget(
            provider=self.name,
            model=model,
            key_env=self.key_env,
            base_url_env=self.base_url_env,
            base_url=self.base_url,
            secrets=self._secrets,
            base_url_from=self.base_url_from,
        )

    async def list_models(self, timeout_s: float) -> None:
        """One models-list request (`client.models.list()`) with the key, server and HTTP
        stack the run's calls use, once, within `timeout_s`; its body is never read. Raises
        the SDK's error when the request fails: the pre-flight's check of the key."""
        client = self._client(self.target("")).with_options(timeout=timeout_s)
        async with client.models.with_streaming_response.list():
            pass

    async def complete(self, prompt: Prompt, model: str) -> Completion:
        """Ask `model` for an answer to `prompt`, retrying transient failures."""
        target = self.target(model)
        if prompt.tools is not None:
            return await self._complete_with_tools(prompt, model, target, prompt.tools)
        messages = self.opening(prompt)

        async def attempt() -> Reply:
            return await self._attempt(prompt, model, target, messages, None)

        return await complete_with_retries(
            attempt, **self._retrying(target), on_retry=prompt.on_retry
        )

    async def _attempt(
        self,
        prompt: Prompt,
        model: str,
        target: CallTarget,
        messages: Sequence[Message],
        tools: ToolOffer | None,
    ) -> Reply:
        """One attempt within the timeout: streamed when someone listens and the server
        can, else plain (the listener then hears the whole text at once)."""
        client = self._client(target)
        on_text = prompt.on_text
        async with StallTimer(self.timeout_s) as timer:
            if on_text is None or not self.streaming:
                reply = await self.send(client, prompt, model, target, messages, tools)
            else:
                try:
                    reply, streamed = await self.send_streamed(
                        client, prompt, model, target, messages, tools, on_text, timer.progress
                    )
                except self._sdk_errors().status as exc:
                    if not refuses_streaming(exc):
                        raise
                    self.streaming = False
                    timer.progress()
                    reply = await self.send(client, prompt, model, target, messages, tools)
                else:
                    if streamed:
                        return reply
                    self.streaming = False
        if on_text is not None and reply.text:
            on_text(reply.text)
        return reply

    async def _complete_with_tools(
        self, prompt: Prompt, model: str, target: CallTarget, toolbox: ToolBox
    ) -> Completion:
        messages = self.opening(prompt)

        async def ask(offer: ToolOffer) -> Answered:
            async def attempt() -> Reply:
                return await self._attempt(prompt, model, target, messages, offer)

            return await request_with_retries(
                attempt, **self._retrying(target), tool_calls_answer=True, on_retry=prompt.on_retry
            )

        def answer(reply: Reply, answers: Sequence[ToolAnswer]) -> None:
            messages.extend(self.tool_results(reply, answers))

        return await run_tool_turn(toolbox, ask, answer, target)

    async def aclose(self) -> None:
        """Close the client of the running event loop, if one was built."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()
