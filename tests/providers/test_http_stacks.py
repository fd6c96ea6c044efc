"""The HTTP stack under the SDK clients: the SDKs' own aiohttp client by default, their
httpx one when `DREAMCONTEXT_HTTP=httpx`, and the same behaviour on both.

Every other provider test runs on the default stack; here the behaviours that depend on
the stack (how a timeout, a dropped or refused connection and a status surface from it)
run on both, through the real SDKs against the local stub server.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

import anthropic
import openai
import pytest
from debate_story import Runner
from stub_server import StubResponse, StubServer

from dreamcontext_council.engine.providers.anthropic_provider import AnthropicProvider
from dreamcontext_council.engine.providers.base import Completion, Prompt, ProviderCallError
from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider
from dreamcontext_council.engine.providers.retry import RetryPolicy
from dreamcontext_council.engine.providers.sdk_provider import HTTP_ENV, SdkProvider
from dreamcontext_council.errors import UsageError

from .conftest import TEST_KEY, ProviderFactory, SleepRecorder, closed, completed

PROMPT = Prompt(system="You are the Contrarian.", user="Should we ship on Friday?", max_tokens=50)
MODEL = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-4o-mini"}
SDKS = {"anthropic": (AnthropicProvider, anthropic), "openai": (OpenAIProvider, openai)}
STACKS = ["aiohttp", "httpx"]


def ask(factory: ProviderFactory, stack: str, **options: object) -> Completion:
    provider = factory(http_stack=stack, **options)
    return completed(provider, PROMPT, MODEL[provider.name])


# -- which client is built --------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SDKS))
def test_the_default_stack_is_the_sdks_own_aiohttp_client(kind: str) -> None:
    cls, sdk = SDKS[kind]
    provider = cls(api_key=TEST_KEY, env={})

    options = provider.client_options()

    assert provider.http_stack == "aiohttp"
    assert isinstance(options["http_client"], sdk.DefaultAioHttpClient)
    assert options["max_retries"] == 0


@pytest.mark.parametrize("kind", sorted(SDKS))
def test_httpx_is_the_sdks_own_httpx_client(kind: str) -> None:
    cls, sdk = SDKS[kind]
    provider = cls(api_key=TEST_KEY, env={HTTP_ENV: "httpx"})

    options = provider.client_options()

    assert provider.http_stack == "httpx"
    assert isinstance(options["http_client"], sdk.DefaultAsyncHttpxClient)
    assert not isinstance(options["http_client"], sdk.DefaultAioHttpClient)


@pytest.mark.parametrize("value", ["curl", "AIOHTTP", "httpx "])
def test_an_unknown_stack_is_refused_with_what_to_set(value: str) -> None:
    with pytest.raises(UsageError) as caught:
        OpenAIProvider(api_key=TEST_KEY, env={HTTP_ENV: value})

    message = str(caught.value)
    assert f"{HTTP_ENV}={value!r}" in message
    assert "aiohttp" in message and "httpx" in message and "unset it" in message


def test_the_variable_is_read_from_the_environment_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(HTTP_ENV, "httpx")

    assert OpenAIProvider(api_key=TEST_KEY).http_stack == "httpx"
    assert AnthropicProvider(api_key=TEST_KEY).http_stack == "httpx"


# -- the same behaviour on both stacks --------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_an_answer_and_its_usage_come_back(
    sdk_provider: ProviderFactory, stub: StubServer, stack: str
) -> None:
    stub.enqueue(StubResponse.reply("Ship on Monday.", input_tokens=12, output_tokens=4))

    completion = ask(sdk_provider, stack)

    assert completion.text == "Ship on Monday."
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (12, 4)
    [request] = stub.requests
    assert request.json["model"] == MODEL[request.api]
    assert TEST_KEY in request.headers.get("x-api-key", "") + request.headers.get(
        "authorization", ""
    )


@pytest.mark.parametrize("stack", STACKS)
def test_retry_after_is_honoured(
    sdk_provider: ProviderFactory, stub: StubServer, sleeps: SleepRecorder, stack: str
) -> None:
    stub.enqueue(StubResponse.error(429, headers={"Retry-After": "7"}), "after the wait")

    completion = ask(sdk_provider, stack)

    assert completion.text == "after the wait"
    assert sleeps.waits == [7.0]


@pytest.mark.parametrize("stack", STACKS)
def test_a_slow_server_times_out_and_is_retried(
    sdk_provider: ProviderFactory, stub: StubServer, stack: str
) -> None:
    stub.enqueue(StubResponse.slow(3.0), "quick")

    completion = ask(sdk_provider, stack, timeout_s=0.3)

    assert (completion.text, completion.attempts) == ("quick", 2)


@pytest.mark.parametrize("stack", STACKS)
def test_dropped_and_cut_off_answers_are_retried(
    sdk_provider: ProviderFactory, stub: StubServer, stack: str
) -> None:
    stub.enqueue(StubResponse.dropped(), StubResponse.cut_off("x" * 500, keep_bytes=30), "whole")

    completion = ask(sdk_provider, stack)

    assert (completion.text, completion.attempts) == ("whole", 3)


@pytest.mark.parametrize("stack", STACKS)
def test_a_bad_key_fails_at_once(
    sdk_provider: ProviderFactory, stub: StubServer, stack: str
) -> None:
    stub.enqueue(StubResponse.error(401))

    with pytest.raises(ProviderCallError) as caught:
        ask(sdk_provider, stack)

    assert caught.value.status == 401
    assert caught.value.attempts == 1
    assert TEST_KEY not in str(caught.value)


@pytest.mark.parametrize("kind", sorted(SDKS))
@pytest.mark.parametrize("stack", STACKS)
def test_a_refused_connection_is_retried_then_named(
    kind: str, stack: str, fast_retry: RetryPolicy, sleeps: SleepRecorder
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cls, _ = SDKS[kind]
    base_url = f"http://127.0.0.1:{port}" + ("/v1" if kind == "openai" else "")
    provider: SdkProvider = cls(
        api_key=TEST_KEY,
        base_url=base_url,
        timeout_s=5.0,
        max_retries=2,
        retry=fast_retry,
        env={HTTP_ENV: stack},
    )

    with pytest.raises(ProviderCallError) as caught:
        completed(provider, PROMPT, MODEL[kind])

    assert caught.value.attempts == 3
    assert caught.value.retryable
    assert "connection failed or dropped" in str(caught.value)
    assert len(sleeps.waits) == 2


@pytest.mark.parametrize("stack", STACKS)
def test_a_proxy_named_in_the_environment_is_used(
    monkeypatch: pytest.MonkeyPatch, fast_retry: RetryPolicy, stack: str
) -> None:
    with socket.socket() as proxy:  # takes the first request, then closes the connection
        proxy.bind(("127.0.0.1", 0))
        proxy.listen(1)
        proxy.settimeout(10)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
        provider = OpenAIProvider(
            api_key=TEST_KEY,
            base_url="http://council-models.invalid/v1",
            max_retries=0,
            retry=fast_retry,
            env={HTTP_ENV: stack},
        )

        async def call_and_listen() -> bytes:
            call = asyncio.create_task(provider.complete(PROMPT, MODEL["openai"]))
            loop = asyncio.get_running_loop()
            connection, _ = await loop.run_in_executor(None, proxy.accept)
            with connection:
                connection.settimeout(10)
                first = await loop.run_in_executor(None, connection.recv, 4096)
            with contextlib.suppress(ProviderCallError):
                await call
            await closed(provider)
            return first

        first = asyncio.run(call_and_listen())

    request_line = first.split(b"\r\n", 1)[0]
    assert request_line == b"POST http://council-models.invalid/v1/chat/completions HTTP/1.1"


@pytest.mark.parametrize("kind", sorted(SDKS))
def test_a_server_url_with_credentials_keeps_the_httpx_client(kind: str) -> None:
    cls, sdk = SDKS[kind]
    provider = cls(api_key=TEST_KEY, base_url="https://gateway:pw@models.invalid/v1", env={})

    client = provider.client_options()["http_client"]
    assert provider.http_stack == "httpx"
    assert isinstance(client, sdk.DefaultAsyncHttpxClient)
    assert not isinstance(client, sdk.DefaultAioHttpClient)


def test_credentials_in_the_server_url_go_as_basic_auth(stub: StubServer) -> None:
    base_url = stub.openai_url.replace("http://", "http://gateway:pw123@")
    provider = OpenAIProvider(api_key=TEST_KEY, base_url=base_url, max_retries=0, env={})

    assert completed(provider, PROMPT, MODEL["openai"]).text == "stub answer"

    [request] = stub.requests
    assert request.headers["authorization"] == "Basic Z2F0ZXdheTpwdzEyMw=="  # gateway:pw123


def test_a_misspelt_stack_stops_a_run_before_its_first_call(
    council: Runner, stub: StubServer
) -> None:
    run = council(
        "run", "--topic", "Ship on Friday?", "--options", "A=Yes,B=No",
        "--model", "openai:gpt-stub", "--base-url", stub.openai_url, "--rounds", "2",
        env={HTTP_ENV: "aiohttp2", "OPENAI_API_KEY": TEST_KEY},
    )  # fmt: skip

    assert run.code != 0
    assert f"{HTTP_ENV}='aiohttp2' names no HTTP stack" in run.err
    assert "Traceback" not in run.err
    assert "Round 1" not in run.err  # stopped before any round, not by every persona failing
    assert stub.requests == []
