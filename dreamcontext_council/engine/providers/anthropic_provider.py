"""Claude models through the official `anthropic` SDK (Messages API)."""

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
    no_text,
    secrets_from_env,
)

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"


class AnthropicProvider:
    """Calls `POST /v1/messages` with `AsyncAnthropic`.

    The key comes from `api_key`, else `ANTHROPIC_API_KEY`, else the SDK's own
    configuration (auth token or profile); the server from `base_url`, else
    `ANTHROPIC_BASE_URL`. The SDK is imported and its client built on the first call.
    The SDK's own retries are off: `retry.complete_with_retries` does them.
    """

    name = "anthropic"

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
        self._api_key = api_key or environment.get(KEY_ENV) or None
        self.base_url = base_url or environment.get(BASE_URL_ENV) or None
        self.timeout_s = timeout_s
        self.policy = replace(retry or RetryPolicy(), max_retries=max_retries)
        self.limits = limits or CallLimits()
        self._secrets = (
            tuple(s for s in (self._api_key,) if s)
            + secrets_from_env(environment)
            + secrets_from_env(os.environ)
        )
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._errors: SdkErrors | None = None

    def __repr__(self) -> str:
        return f"AnthropicProvider(base_url={self.base_url!r})"

    def _client(self) -> Any:
        # One client per event loop: pooled connections cannot cross loops.
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            import anthropic

            kwargs: dict[str, Any] = {"max_retries": 0, "timeout": self.timeout_s}
            if self._api_key:
                kwargs["api_key"] = self._api_key
            if self.base_url:
                kwargs["base_url"] = self.base_url
            client = anthropic.AsyncAnthropic(**kwargs)
            self._clients[loop] = client
        return client

    def _sdk_errors(self) -> SdkErrors:
        if self._errors is None:
            import anthropic

            self._errors = SdkErrors(
                status=anthropic.APIStatusError,
                timeout=anthropic.APITimeoutError,
                connection=anthropic.APIConnectionError,
                validation=anthropic.APIResponseValidationError,
                credentials=(anthropic.CredentialsError,),
            )
        return self._errors

    async def complete(self, prompt: Prompt, model: str) -> Completion:
        """Ask Claude `model` for an answer to `prompt`, retrying transient failures."""
        target = CallTarget(
            provider=self.name,
            model=model,
            key_env=KEY_ENV,
            base_url_env=BASE_URL_ENV,
            base_url=self.base_url,
            secrets=self._secrets,
        )

        async def attempt() -> Reply:
            request: dict[str, Any] = {
                "model": model,
                "max_tokens": prompt.max_tokens,
                "messages": [{"role": "user", "content": prompt.user}],
            }
            if prompt.system:
                request["system"] = prompt.system
            message = await self._client().messages.create(**request)
            return read_message(message, model)

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


def read_message(message: Any, requested_model: str) -> Reply:
    """Text, usage and model from a Messages API response; `AttemptFailed` if malformed."""
    content = getattr(message, "content", None)
    if isinstance(message, str | bytes) or not isinstance(content, list):
        raise AttemptFailed(no_text("malformed response body"))
    text = "".join(
        str(getattr(block, "text", "") or "")
        for block in content
        if getattr(block, "type", None) == "text"
    )
    usage = getattr(message, "usage", None)
    input_tokens = sum(
        int(getattr(usage, name, 0) or 0)
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
    return Reply(
        text=text,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        model=str(getattr(message, "model", None) or requested_model),
    )
