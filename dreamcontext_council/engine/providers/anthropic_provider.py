"""Claude models through the official `anthropic` SDK (Messages API, with tool use)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dreamcontext_council.engine.providers.anthropic_stream import MessageStream
from dreamcontext_council.engine.providers.base import Prompt, Reply, TextListener
from dreamcontext_council.engine.providers.diagnosis import (
    AttemptFailed,
    CallTarget,
    SdkErrors,
    no_text,
)
from dreamcontext_council.engine.providers.sdk_provider import (
    Message,
    SdkProvider,
    field_of,
    post_plain,
    post_streamed,
    token_count,
)
from dreamcontext_council.engine.providers.tool_turn import ToolAnswer, ToolOffer
from dreamcontext_council.engine.providers.tools import ToolCall, ToolSpec

KEY_ENV = "ANTHROPIC_API_KEY"
MESSAGES_PATH = "/v1/messages"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
# The Messages API takes at most 4 `cache_control` breakpoints a request.
MAX_BREAKPOINTS = 4
EPHEMERAL = {"type": "ephemeral"}


class AnthropicProvider(SdkProvider):
    """Calls `POST /v1/messages` with `AsyncAnthropic`.

    The key comes from `api_key`, else `ANTHROPIC_API_KEY`, else the SDK's own
    configuration (auth token or profile); the server from `base_url`, else
    `ANTHROPIC_BASE_URL`.
    """

    name = "anthropic"
    key_env = KEY_ENV
    base_url_env = BASE_URL_ENV

    def build_client(self, options: dict[str, Any]) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**options)

    def http_client(self, stack: str, **options: Any) -> Any:
        import anthropic

        if stack == "aiohttp":
            return anthropic.DefaultAioHttpClient(**options)
        return anthropic.DefaultAsyncHttpxClient(**options)

    def sdk_errors(self) -> SdkErrors:
        import anthropic
        import httpx2  # the SDK's HTTP stack; a stream's body is read from it directly

        return SdkErrors(
            status=anthropic.APIStatusError,
            timeout=anthropic.APITimeoutError,
            connection=anthropic.APIConnectionError,
            validation=anthropic.APIResponseValidationError,
            credentials=(anthropic.CredentialsError,),
            transport_timeout=(httpx2.TimeoutException,),
            transport=(httpx2.TransportError,),
        )

    def opening(self, prompt: Prompt) -> list[Message]:
        _, user_marks = breakpoints(prompt)
        content = cached_blocks(prompt.user, user_marks, breaks=prompt.user_breaks)
        return [{"role": "user", "content": content}]

    async def send(
        self,
        client: Any,
        prompt: Prompt,
        model: str,
        target: CallTarget,
        messages: Sequence[Message],
        tools: ToolOffer | None,
    ) -> Reply:
        import anthropic

        request = message_request(prompt, model, messages, tools)
        # The client's own request path, with the body read here within the answer's budget.
        body = await post_plain(
            client, MESSAGES_PATH, request, anthropic.AsyncStream[object], self.answer_limit
        )
        return read_message(message_body(body), model)

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
        import anthropic

        request = message_request(prompt, model, messages, tools)
        request["stream"] = True
        events = MessageStream()
        return await post_streamed(
            client,
            MESSAGES_PATH,
            request,
            anthropic.AsyncStream[object],
            events=events,
            plain=lambda body: read_message(message_body(body), model),
            gathered=lambda: read_message(events.message(), model),
            cut=lambda: read_message(events.cut_message(), model),
            on_text=on_text,
            progress=progress,
            limit=self.answer_limit,
        )

    def tool_results(self, reply: Reply, answers: Sequence[ToolAnswer]) -> list[Message]:
        return [dict(reply.assistant_turn), tool_result_message(answers)]


def message_request(
    prompt: Prompt, model: str, messages: Sequence[Message], tools: ToolOffer | None
) -> dict[str, Any]:
    """The Messages API request: the conversation so far, and the tools when offered.

    Once tools are no longer allowed they are still listed (the conversation holds
    `tool_use` blocks that refer to them) with `tool_choice` none.
    """
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": prompt.max_tokens,
        "messages": list(messages),
    }
    if prompt.system:
        system_marks, _ = breakpoints(prompt)
        request["system"] = cached_blocks(prompt.system, system_marks)
    if tools is not None and tools.specs:
        request["tools"] = [tool_param(spec) for spec in tools.specs]
        if not tools.allowed:
            request["tool_choice"] = {"type": "none"}
    return request


def breakpoints(prompt: Prompt) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The marks of `prompt` that get a `cache_control` breakpoint, at most
    `MAX_BREAKPOINTS` in all: every mark of the system prompt (the brief every persona
    shares, then the persona's own prompt), then the last of the user message's (where
    the previous round's message ended, which this call reads, and where this one ends,
    which the next round reads)."""
    system = tuple(m for m in prompt.system_marks if 0 < m <= len(prompt.system))
    system = system[:MAX_BREAKPOINTS]
    room = MAX_BREAKPOINTS - len(system)
    user = tuple(m for m in prompt.user_marks if 0 < m <= len(prompt.user))
    return system, user[len(user) - room :] if room else ()


def cached_blocks(
    text: str, marks: Sequence[int], *, breaks: Sequence[int] = ()
) -> str | list[dict[str, Any]]:
    """`text` as it is sent: whole without marks; else as text blocks split at the marks
    and the breaks, each block that ends at a mark marked `cache_control` (the prefix up
    to it is cached). Splitting at the breaks too gives a later call that repeats the
    text the same blocks, so its prefix matches this one's. The blocks joined are `text`,
    byte for byte."""
    if not marks:
        return text
    cuts = sorted({m for m in (*marks, *breaks) if 0 < m <= len(text)})
    blocks: list[dict[str, Any]] = []
    start = 0
    for cut in cuts:
        block: dict[str, Any] = {"type": "text", "text": text[start:cut]}
        if cut in marks:
            block["cache_control"] = EPHEMERAL
        blocks.append(block)
        start = cut
    if start < len(text):
        blocks.append({"type": "text", "text": text[start:]})
    return blocks


def tool_param(spec: ToolSpec) -> dict[str, Any]:
    """A tool as the Messages API lists it."""
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": dict(spec.input_schema),
    }


def tool_result_message(answers: Sequence[ToolAnswer]) -> Message:
    """The user turn that answers every `tool_use` block of the model's last turn."""
    return {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": answer.call.id,
                "content": answer.outcome.text,
                "is_error": answer.outcome.is_error,
            }
            for answer in answers
        ],
    }


def message_body(body: bytes | bytearray) -> Any:
    """The JSON of a plain Messages API response; AttemptFailed if it is not JSON."""
    try:
        return json.loads(body)
    except ValueError:  # not JSON, or not UTF-8
        raise AttemptFailed(no_text("malformed response body")) from None


def read_message(message: Any, requested_model: str) -> Reply:
    """Text, tool calls, usage and model from a Messages API response: the SDK's
    `Message`, or the JSON object a stream gathers (`anthropic_stream.MessageStream`).

    Raises `AttemptFailed` if the response is malformed. A `tool_use` block whose
    input is not an object is still a call (the model gets an error result for it).
    """
    content = field_of(message, "content")
    if isinstance(message, str | bytes) or not isinstance(content, list):
        raise AttemptFailed(no_text("malformed response body"))
    texts: list[str] = []
    turn: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    argument_errors: dict[str, str] = {}
    for block in content:
        kind = field_of(block, "type")
        if kind == "text":
            text = str(field_of(block, "text") or "")
            texts.append(text)
            if text:  # the API refuses empty text blocks in a conversation
                turn.append({"type": "text", "text": text})
        elif kind == "tool_use":
            call_id = str(field_of(block, "id") or "")
            name = str(field_of(block, "name") or "")
            arguments = field_of(block, "input")
            if not isinstance(arguments, Mapping):
                argument_errors[call_id] = (
                    f"the input of {name} is not a JSON object; call it again with one"
                )
                arguments = {}
            calls.append(ToolCall(id=call_id, name=name, arguments=dict(arguments)))
            turn.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
    usage = field_of(message, "usage")
    return Reply(
        text="".join(texts),
        # Anthropic counts the input read from and written to the cache apart from the rest.
        input_tokens=token_count(field_of(usage, "input_tokens")),
        output_tokens=token_count(field_of(usage, "output_tokens")),
        cache_write_tokens=token_count(field_of(usage, "cache_creation_input_tokens")),
        cache_read_tokens=token_count(field_of(usage, "cache_read_input_tokens")),
        model=str(field_of(message, "model") or requested_model),
        tool_calls=tuple(calls),
        assistant_turn={"role": "assistant", "content": turn},
        argument_errors=argument_errors,
    )
