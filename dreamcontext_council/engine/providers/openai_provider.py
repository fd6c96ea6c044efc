"""OpenAI models, or any OpenAI-compatible server, through the official `openai` SDK."""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from dreamcontext_council.engine.providers.base import Completion, Prompt, Reply
from dreamcontext_council.engine.providers.limits import CallLimits
from dreamcontext_council.engine.providers.retry import (
    AttemptFailed,
    CallTarget,
    RetryPolicy,
    SdkErrors,
    complete_with_retries,
    missing_key,
    no_text,
    secrets_from_env,
)

KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
# Local servers (Ollama, vLLM, LM Studio, llama.cpp) ignore the key but the SDK wants one.
PLACEHOLDER_KEY = "not-needed"


class OpenAIProvider:
    """Calls `POST /chat/completions` with `AsyncOpenAI`.

    The key comes from `api_key`, else `OPENAI_API_KEY`; the server from `base_url`,
    else `OPENAI_BASE_URL`, which makes this any OpenAI-compatible server. With a
    custom server and no key a placeholder key is sent, and the output budget goes
    in `max_tokens` (what compatible servers understand) instead of
    `max_completion_tokens`. The SDK's own retries are off.
    """

    name = "openai"

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
    ) -> None:
        environment = os.environ if env is None else env
        self.base_url = base_url or environment.get(BASE_URL_ENV) or None
        key = api_key or environment.get(KEY_ENV) or None
        self._api_key = key or (PLACEHOLDER_KEY if self.base_url else None)
        self.timeout_s = timeout_s
        self.policy = replace(retry or RetryPolicy(), max_retries=max_retries)
        self.limits = limits or CallLimits()
        self._secrets = (
            tuple(s for s in (key,) if s)
            + secrets_from_env(environment)
            + secrets_from_env(os.environ)
        )
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._errors: SdkErrors | None = None

    def __repr__(self) -> str:
        return f"OpenAIProvider(base_url={self.base_url!r})"

    def _client(self) -> Any:
        # One client per event loop: pooled connections cannot cross loops.
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            import openai

            kwargs: dict[str, Any] = {
                "api_key": self._api_key,
                "max_retries": 0,
                "timeout": self.timeout_s,
            }
            if self.base_url:
                kwargs["base_url"] = self.base_url
            client = openai.AsyncOpenAI(**kwargs)
            self._clients[loop] = client
        return client

    def _sdk_errors(self) -> SdkErrors:
        if self._errors is None:
            import openai

            self._errors = SdkErrors(
                status=openai.APIStatusError,
                timeout=openai.APITimeoutError,
                connection=openai.APIConnectionError,
                validation=openai.APIResponseValidationError,
            )
        return self._errors

    async def complete(self, prompt: Prompt, model: str) -> Completion:
        """Ask `model` for an answer to `prompt`, retrying transient failures."""
        target = CallTarget(
            provider=self.name,
            model=model,
            key_env=KEY_ENV,
            base_url_env=BASE_URL_ENV,
            base_url=self.base_url,
            secrets=self._secrets,
        )
        request = chat_request(prompt, model, custom_server=self.base_url is not None)

        async def attempt() -> Reply:
            if not self._api_key:
                raise AttemptFailed(missing_key(target))
            response = await self._client().chat.completions.create(**request)
            return read_chat_completion(response, model)

        return await complete_with_retries(
            attempt,
            target=target,
            policy=self.policy,
            limits=self.limits,
            timeout_s=self.timeout_s,
            errors=self._sdk_errors(),
        )

    async def aclose(self) -> None:
        """Close the client of the running event loop, if one was built."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()


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
