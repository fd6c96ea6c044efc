"""Claude models through the official `anthropic` SDK (Messages API)."""

from __future__ import annotations

from typing import Any

from dreamcontext_council.engine.providers.base import Prompt, Reply
from dreamcontext_council.engine.providers.retry import (
    AttemptFailed,
    CallTarget,
    SdkErrors,
    no_text,
)
from dreamcontext_council.engine.providers.sdk_provider import SdkProvider

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"


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

    def sdk_errors(self) -> SdkErrors:
        import anthropic

        return SdkErrors(
            status=anthropic.APIStatusError,
            timeout=anthropic.APITimeoutError,
            connection=anthropic.APIConnectionError,
            validation=anthropic.APIResponseValidationError,
            credentials=(anthropic.CredentialsError,),
        )

    async def request(self, client: Any, prompt: Prompt, model: str, target: CallTarget) -> Reply:
        request: dict[str, Any] = {
            "model": model,
            "max_tokens": prompt.max_tokens,
            "messages": [{"role": "user", "content": prompt.user}],
        }
        if prompt.system:
            request["system"] = prompt.system
        return read_message(await client.messages.create(**request), model)


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
