"""Fixtures: a local stub server, a sleep recorder, and providers pointed at the stub."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from offline import scrub_environment
from stub_server import StubServer

from dreamcontext_council.engine.providers.anthropic_provider import AnthropicProvider
from dreamcontext_council.engine.providers.base import Completion, Prompt, Provider
from dreamcontext_council.engine.providers.limits import CallLimits
from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider
from dreamcontext_council.engine.providers.retry import RetryPolicy
from dreamcontext_council.engine.providers.sdk_provider import HTTP_ENV

TEST_KEY = "sk-test-SECRET-1234567890"

SDK_ENV_PREFIXES = ("ANTHROPIC_", "OPENAI_")


class SleepRecorder:
    """Stands in for `asyncio.sleep` in retry policies: records each wait, barely waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture(autouse=True)
def offline_sdk_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the developer's keys, base URLs, proxies and SDK profiles out of every test."""
    scrub_environment(
        monkeypatch,
        tmp_path / "home",
        prefixes=SDK_ENV_PREFIXES,
        config_dir=tmp_path / "anthropic-config",
    )


@pytest.fixture
def stub() -> Iterator[StubServer]:
    """A running stub server, stopped after the test."""
    with StubServer() as server:
        yield server


@pytest.fixture
def sleeps() -> SleepRecorder:
    """Records the waits the retry loop asks for."""
    return SleepRecorder()


@pytest.fixture
def fast_retry(sleeps: SleepRecorder) -> RetryPolicy:
    """Backoff without randomness or real waiting: waits are 1, 2, 4... seconds, recorded."""
    return RetryPolicy(base_delay_s=1.0, max_delay_s=60.0, sleep=sleeps, jitter=lambda: 1.0)


ProviderFactory = Callable[..., Provider]


def completed(provider: Provider, prompt: Prompt, model: str) -> Completion:
    """One call on a fresh event loop, with the provider's client closed before the loop
    ends, as `council run` closes it."""

    async def call() -> Completion:
        try:
            return await provider.complete(prompt, model)
        finally:
            await closed(provider)

    return asyncio.run(call())


async def closed(provider: Provider) -> None:
    """Close the provider's client of the running loop, when it has one."""
    close = getattr(provider, "aclose", None)
    if close is not None:
        await close()


@pytest.fixture(params=["anthropic", "openai"])
def sdk_provider(
    request: pytest.FixtureRequest, stub: StubServer, fast_retry: RetryPolicy
) -> ProviderFactory:
    """Builds an Anthropic or OpenAI provider talking to the stub server with `TEST_KEY`
    (on the default HTTP stack unless `http_stack` names one)."""
    kind = str(request.param)

    def build(
        *,
        timeout_s: float = 5.0,
        max_retries: int = 4,
        limits: CallLimits | None = None,
        api_key: str | None = TEST_KEY,
        retry: RetryPolicy | None = None,
        http_stack: str | None = None,
    ) -> Provider:
        cls = AnthropicProvider if kind == "anthropic" else OpenAIProvider
        return cls(
            api_key=api_key,
            base_url=stub.url if kind == "anthropic" else stub.openai_url,
            timeout_s=timeout_s,
            max_retries=max_retries,
            limits=limits,
            retry=retry or fast_retry,
            env={HTTP_ENV: http_stack} if http_stack else {},
        )

    return build
