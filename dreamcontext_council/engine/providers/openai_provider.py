"""OpenAI models, or any OpenAI-compatible server, through the official `openai` SDK."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from dreamcontext_council.engine.providers.base import Prompt, Reply, TextListener
from dreamcontext_council.engine.providers.diagnosis import (
    AttemptFailed,
    CallTarget,
    SdkErrors,
    missing_key,
    no_text,
)
from dreamcontext_council.engine.providers.openai_stream import ChatStream
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

KEY_ENV = "OPENAI_API_KEY"
CHAT_PATH = "/chat/completions"
# What `chat.completions.create` asks of the client besides the body: the bearer key.
CHAT_OPTIONS: dict[str, Any] = {"security": {"bearer_auth": True}}
BASE_URL_ENV = "OPENAI_BASE_URL"
# Local servers (Ollama, vLLM, LM Studio, llama.cpp) ignore the key but the SDK wants one.
PLACEHOLDER_KEY = "not-needed"


class OpenAIProvider(SdkProvider):
    """Calls `POST /chat/completions` with `AsyncOpenAI`.

    The key comes from `api_key`, else `OPENAI_API_KEY`; the server from `base_url`,
    else `OPENAI_BASE_URL`, which makes this any OpenAI-compatible server. With a
    custom server and no key a placeholder key is sent, and the output budget goes
    in `max_tokens` (what compatible servers understand) instead of
    `max_completion_tokens`.
    """

    name = "openai"
    key_env = KEY_ENV
    base_url_env = BASE_URL_ENV

    def effective_key(self, key: str | None) -> str | None:
        return key or (PLACEHOLDER_KEY if self.base_url else None)

    def build_client(self, options: dict[str, Any]) -> Any:
        import openai

        return openai.AsyncOpenAI(**options)

    def http_client(self, stack: str, **options: Any) -> Any:
        import openai

        if stack == "aiohttp":
            return openai.DefaultAioHttpClient(**options)
        return openai.DefaultAsyncHttpxClient(**options)

    def sdk_errors(self) -> SdkErrors:
        import httpx2  # the SDK's HTTP stack; a stream's body is read from it directly
        import openai

        return SdkErrors(
            status=openai.APIStatusError,
            timeout=openai.APITimeoutError,
            connection=openai.APIConnectionError,
            validation=openai.APIResponseValidationError,
            transport_timeout=(httpx2.TimeoutException,),
            transport=(httpx2.TransportError,),
        )

    def opening(self, prompt: Prompt) -> list[Message]:
        return opening_messages(prompt)

    def check_ready(self, target: CallTarget) -> None:
        if not self._api_key:
            raise AttemptFailed(missing_key(target))

    async def send(
        self,
        client: Any,
        prompt: Prompt,
        model: str,
        target: CallTarget,
        messages: Sequence[Message],
        tools: ToolOffer | None,
    ) -> Reply:
        import openai

        request = chat_request(
            prompt,
            model,
            custom_server=self.base_url is not None,
            messages=messages,
            tools=tools,
        )
        # The client's own request path (its HTTP stack, auth, errors), without
        # `chat.completions.create`: that re-walks the params against their TypedDicts
        # and builds the response as pydantic models, of which only a few fields are read.
        # The body is read here, within the answer's budget.
        body = await post_plain(
            client,
            CHAT_PATH,
            request,
            openai.AsyncStream[object],
            self.answer_limit,
            options=CHAT_OPTIONS,
        )
        return read_chat_completion(chat_completion_body(body), model)

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
        import openai

        request = chat_request(
            prompt,
            model,
            custom_server=self.base_url is not None,
            messages=messages,
            tools=tools,
        )
        request["stream"] = True
        request["stream_options"] = {"include_usage": True}
        chunks = ChatStream()
        return await post_streamed(
            client,
            CHAT_PATH,
            request,
            openai.AsyncStream[object],
            events=chunks,
            plain=lambda body: read_chat_completion(chat_completion_body(body), model),
            gathered=lambda: read_chat_completion(chunks.completion(), model),
            cut=lambda: read_chat_completion(chunks.cut_completion(), model),
            on_text=on_text,
            progress=progress,
            limit=self.answer_limit,
            options=CHAT_OPTIONS,
        )

    def tool_results(self, reply: Reply, answers: Sequence[ToolAnswer]) -> list[Message]:
        return [dict(reply.assistant_turn), *(tool_message(answer) for answer in answers)]


def opening_messages(prompt: Prompt) -> list[Message]:
    """The system prompt (when there is one) and the user message."""
    messages: list[Message] = []
    if prompt.system:
        messages.append({"role": "system", "content": prompt.system})
    messages.append({"role": "user", "content": prompt.user})
    return messages


def chat_request(
    prompt: Prompt,
    model: str,
    *,
    custom_server: bool,
    messages: Sequence[Message] | None = None,
    tools: ToolOffer | None = None,
) -> dict[str, Any]:
    """The chat completions request for `prompt`, or for the conversation `messages`.

    OpenAI's own API takes the output budget as `max_completion_tokens` (its
    reasoning models refuse `max_tokens`); compatible servers mostly know only
    `max_tokens`. Once tools are no longer allowed they are still listed (the
    conversation refers to them) with `tool_choice` none.
    """
    if messages is None:
        messages = opening_messages(prompt)
    budget_field = "max_tokens" if custom_server else "max_completion_tokens"
    request: dict[str, Any] = {
        "model": model,
        "messages": list(messages),
        budget_field: prompt.max_tokens,
    }
    if tools is not None and tools.specs:
        request["tools"] = [tool_param(spec) for spec in tools.specs]
        if not tools.allowed:
            request["tool_choice"] = "none"
    return request


def tool_param(spec: ToolSpec) -> dict[str, Any]:
    """A tool as chat completions lists it: a function with JSON Schema parameters."""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.input_schema),
        },
    }


def tool_message(answer: ToolAnswer) -> Message:
    """The `tool` message that answers one call; an error says so in its first word."""
    text = answer.outcome.text
    if answer.outcome.is_error and not text.startswith("error"):
        text = f"error: {text}"
    return {"role": "tool", "tool_call_id": answer.call.id, "content": text}


def chat_completion_body(body: bytes | bytearray) -> dict[str, Any]:
    """The JSON object of a chat completion response; AttemptFailed if it is not one."""
    try:
        data = json.loads(body)
    except ValueError:  # not JSON, or not UTF-8
        raise AttemptFailed(no_text("malformed response body")) from None
    if not isinstance(data, dict):
        raise AttemptFailed(no_text("malformed response body"))
    return data


def read_chat_completion(response: Any, requested_model: str) -> Reply:
    """Text, tool calls, usage and model from a chat completion: its JSON object, or the
    SDK's `ChatCompletion`.

    Raises `AttemptFailed` if the response is malformed. A call whose arguments are
    not a JSON object is still a call, with its problem in `argument_errors`.
    """
    choices = None if isinstance(response, str | bytes) else field_of(response, "choices")
    if not isinstance(choices, list):
        raise AttemptFailed(no_text("malformed response body"))
    if not choices:
        raise AttemptFailed(no_text("response had no choices"))
    message = field_of(choices[0], "message")
    content = field_of(message, "content")
    text = content if isinstance(content, str) else ""
    calls, turn_calls, argument_errors = read_tool_calls(field_of(message, "tool_calls"))
    turn: dict[str, Any] = {"role": "assistant", "content": text or None}
    if turn_calls:
        turn["tool_calls"] = turn_calls
    usage = field_of(response, "usage")
    # OpenAI's prompt tokens include the cached ones; they are billed apart, so split off.
    prompt_tokens = token_count(field_of(usage, "prompt_tokens"))
    cached = token_count(field_of(field_of(usage, "prompt_tokens_details"), "cached_tokens"))
    cached = min(cached, prompt_tokens)
    return Reply(
        text=text,
        input_tokens=prompt_tokens - cached,
        cache_read_tokens=cached,
        output_tokens=token_count(field_of(usage, "completion_tokens")),
        model=str(field_of(response, "model") or requested_model),
        tool_calls=calls,
        assistant_turn=turn,
        argument_errors=argument_errors,
    )


def read_tool_calls(
    tool_calls: Any,
) -> tuple[tuple[ToolCall, ...], list[dict[str, Any]], dict[str, str]]:
    """The calls of an assistant message, the same calls as they go back, and bad arguments."""
    calls: list[ToolCall] = []
    turn_calls: list[dict[str, Any]] = []
    argument_errors: dict[str, str] = {}
    for raw in tool_calls if isinstance(tool_calls, list) else []:
        call_id = str(field_of(raw, "id") or "")
        function = field_of(raw, "function")
        named = function if function is not None else field_of(raw, "custom")
        name = str(field_of(named, "name") or "")
        arguments_text = field_of(function, "arguments")
        arguments: Any = {}
        if function is None:
            argument_errors[call_id] = f"{name!r} is not a function; only functions are offered"
        else:
            try:
                arguments = json.loads(arguments_text or "{}")
            except (TypeError, ValueError):
                argument_errors[call_id] = (
                    f"the arguments of {name} are not valid JSON; call it again with a JSON object"
                )
            else:
                if not isinstance(arguments, dict):
                    argument_errors[call_id] = (
                        f"the arguments of {name} are not a JSON object; call it again with one"
                    )
                    arguments = {}
        calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
        if function is None and isinstance(raw, dict):
            turn_calls.append(without_nulls(raw))
        elif function is None and hasattr(raw, "model_dump"):
            turn_calls.append(raw.model_dump(mode="json", exclude_none=True))
        else:
            turn_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": str(arguments_text or "{}")},
                }
            )
    return tuple(calls), turn_calls, argument_errors


def without_nulls(value: Any) -> Any:
    """A JSON value with every null member of its objects left out, at every depth."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value
