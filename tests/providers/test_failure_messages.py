"""What a failed call says: the setting actually used, the server's own first line, and
the option that would help, in sentences that end once."""

from __future__ import annotations

import asyncio

import pytest
from stub_server import StubResponse, StubServer

from dreamcontext_council.engine.providers.base import Prompt, ProviderCallError
from dreamcontext_council.engine.providers.models import ModelSpec
from dreamcontext_council.engine.providers.registry import ProviderSet, ProviderSettings
from dreamcontext_council.engine.providers.retry import RetryPolicy

from .conftest import TEST_KEY, ProviderFactory, SleepRecorder
from .test_sdk_providers import fail

PROMPT = Prompt(system="You are the Contrarian.", user="Ship on Friday?", max_tokens=64)


def fail_through_set(providers: ProviderSet, model: str) -> ProviderCallError:
    async def call() -> None:
        try:
            await providers.complete(ModelSpec("openai", model), PROMPT)
        finally:
            await providers.aclose()

    with pytest.raises(ProviderCallError) as caught:
        asyncio.run(call())
    return caught.value


def test_an_unknown_model_names_the_base_url_option_that_was_used(
    stub: StubServer, sleeps: SleepRecorder
) -> None:
    stub.enqueue(StubResponse.error(404, "model not found"))
    settings = ProviderSettings.for_run(5.0, 0, None, stub.openai_url)
    providers = ProviderSet(
        settings,
        env={"OPENAI_API_KEY": TEST_KEY},
        retry=RetryPolicy(sleep=sleeps),
    )

    message = str(fail_through_set(providers, "llama-9"))

    assert message.endswith("Check the model name and --base-url.")
    assert "OPENAI_BASE_URL" not in message


def test_an_unknown_model_names_the_variable_when_the_url_came_from_it(
    stub: StubServer, sleeps: SleepRecorder
) -> None:
    stub.enqueue(StubResponse.error(404, "model not found"))
    env = {"OPENAI_API_KEY": TEST_KEY, "OPENAI_BASE_URL": stub.openai_url}
    providers = ProviderSet(ProviderSettings(max_retries=0), env=env, retry=RetryPolicy())

    message = str(fail_through_set(providers, "llama-9"))

    assert message.endswith("Check the model name and OPENAI_BASE_URL.")


def test_a_server_error_shows_the_first_line_of_its_body_once_punctuated(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    body = "upstream model crashed.\nTraceback (most recent call last):\n  boom"
    stub.enqueue(*[StubResponse.error(500, body)] * 2)

    message = str(fail(sdk_provider, max_retries=1))

    assert message.endswith(
        "still failing after 2 attempts (500 server error: upstream model crashed)."
    )
    assert "Traceback" not in message


def test_a_long_or_hostile_server_line_is_cleaned_and_bounded(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    body = "\x1b[31mred\x1b[0m " + "overloaded " * 60 + f"key {TEST_KEY}"
    stub.enqueue(StubResponse.error(503, body))

    message = str(fail(sdk_provider, max_retries=0))

    assert "\x1b" not in message
    assert TEST_KEY not in message
    assert "(503 unavailable: " in message
    assert len(message) < 260


def test_a_timeout_suggests_a_longer_timeout(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.slow(3.0), StubResponse.slow(3.0))

    message = str(fail(sdk_provider, timeout_s=0.2, max_retries=1))

    assert message.endswith(
        "(timed out after 0.2s). If the model needs longer, raise --timeout (seconds per call)."
    )
