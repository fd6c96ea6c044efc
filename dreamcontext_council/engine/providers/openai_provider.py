"""OpenAI models, or any OpenAI-compatible server, through the official `openai` SDK."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.engine.providers.base import Prompt, Reply
from dreamcontext_council.engine.providers.retry import (
    AttemptFailed,
    CallTarget,
    SdkErrors,
    missing_key,
    no_text,
)
from dreamcontext_council.engine.providers.sdk_provider import SdkProvider

KEY_ENV = "OPENAI_API_KEY"
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

    def sdk_errors(self) -> SdkErrors:
        import openai

        return SdkErrors(
            status=openai.APIStatusError,
            timeout=openai.APITimeoutError,
            connection=openai.APIConnectionError,
            validation=openai.APIResponseValidationError,
        )

    async def request(self, client: Any, prompt: Prompt, model: str, target: CallTarget) -> Reply:
        if not self._api_key:
            raise AttemptFailed(missing_key(target))
        request = chat_request(prompt, model, custom_server=self.base_url is not None)
        return read_chat_completion(await client.chat.completions.create(**request), model)


def chat_request(prompt: Prompt, model: str, *, custom_server: bool) -> dict[str, Any]:
    """The chat completions request for `prompt`.

    OpenAI's own API takes the output budget as `max_completion_tokens` (its
    reasoning models refuse `max_tokens`); compatible servers mostly know only
    `max_tokens`.
    """
    messages = []
    if prompt.system:
        messages.append({"role": "system", "content": prompt.system})
    messages.append({"role": "user", "content": prompt.user})
    budget_field = "max_tokens" if custom_server else "max_completion_tokens"
    return {"model": model, "messages": messages, budget_field: prompt.max_tokens}


def read_chat_completion(response: Any, requested_model: str) -> Reply:
    """Text, usage and model from a chat completion; `AttemptFailed` if malformed."""
    choices = getattr(response, "choices", None)
    if isinstance(response, str | bytes) or not isinstance(choices, list):
        raise AttemptFailed(no_text("malformed response body"))
    if not choices:
        raise AttemptFailed(no_text("response had no choices"))
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    text = content if isinstance(content, str) else ""
    usage = getattr(response, "usage", None)
    return Reply(
        text=text,
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        model=str(getattr(response, "model", None) or requested_model),
    )
