"""The SDK providers send their requests through the SDKs' own aiohttp transport."""

from __future__ import annotations

import asyncio

import anthropic
import openai
import pytest

from dreamcontext_council.engine.providers.anthropic_provider import AnthropicProvider
from dreamcontext_council.engine.providers.diagnosis import CallTarget
from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider
from dreamcontext_council.engine.providers.sdk_provider import SdkProvider


@pytest.mark.parametrize(
    ("provider", "sdk"),
    [
        (OpenAIProvider(api_key="sk-test-key-0000", base_url="http://127.0.0.1:9"), openai),
        (AnthropicProvider(api_key="sk-ant-test-0000", base_url="http://127.0.0.1:9"), anthropic),
    ],
)
def test_the_client_is_the_sdks_aiohttp_client(provider: SdkProvider, sdk: object) -> None:
    target = CallTarget(provider=provider.name, model="m", key_env=provider.key_env)

    async def built() -> object:
        client = provider._client(target)
        try:
            return client._client
        finally:
            await provider.aclose()

    assert isinstance(asyncio.run(built()), sdk.DefaultAioHttpClient)  # type: ignore[attr-defined]
