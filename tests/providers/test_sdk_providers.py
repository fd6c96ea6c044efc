"""The Anthropic and OpenAI providers, through their real SDKs, against the local stub server.

Every test here runs once per SDK (the `sdk_provider` fixture is parametrized).
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from email.utils import formatdate

import pytest
from stub_server import RecordedRequest, StubResponse, StubServer, error_body

from dreamcontext_council.engine.providers.base import Completion, Prompt, ProviderCallError
from dreamcontext_council.engine.providers.limits import CallLimits
from dreamcontext_council.engine.providers.openai_provider import chat_request

from .conftest import TEST_KEY, ProviderFactory, SleepRecorder, closed, completed

PROMPT = Prompt(system="You are the Contrarian.", user="Should we ship on Friday?", max_tokens=321)
MODEL = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-4o-mini"}
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def ask(provider_factory: ProviderFactory, **options: object) -> Completion:
    provider = provider_factory(**options)
    return completed(provider, PROMPT, MODEL[provider.name])


def fail(provider_factory: ProviderFactory, **options: object) -> ProviderCallError:
    with pytest.raises(ProviderCallError) as caught:
        ask(provider_factory, **options)
    return caught.value


def name_of(provider_factory: ProviderFactory) -> str:
    return provider_factory().name


def credentials_sent(request: RecordedRequest) -> str:
    """The credential headers of a request, whichever one the SDK uses."""
    return request.headers.get("x-api-key", "") + " " + request.headers.get("authorization", "")


# -- success ---------------------------------------------------------------------------


def test_answer_comes_back_with_usage_and_the_model_the_server_used(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(
        StubResponse.reply(
            "Not on Friday.", model="served-model-7", input_tokens=42, output_tokens=7
        )
    )

    completion = ask(sdk_provider)

    assert completion.text == "Not on Friday."
    assert completion.usage.input_tokens == 42
    assert completion.usage.output_tokens == 7
    assert completion.usage.latency_s > 0
    assert completion.model == "served-model-7"
    assert completion.provider == name_of(sdk_provider)
    assert completion.attempts == 1
    assert len(stub.requests) == 1


def test_request_carries_system_prompt_user_message_budget_and_key(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    completion = ask(sdk_provider)

    assert completion.text == "stub answer"
    [request] = stub.requests
    body = request.json
    assert request.method == "POST"
    assert TEST_KEY in credentials_sent(request)
    if request.api == "anthropic":
        assert request.path == "/v1/messages"
        assert body["system"] == PROMPT.system
        assert body["messages"] == [{"role": "user", "content": PROMPT.user}]
        assert body["max_tokens"] == 321
        assert request.headers.get("x-stainless-retry-count") == "0"
    else:
        assert request.path == "/v1/chat/completions"
        assert body["messages"] == [
            {"role": "system", "content": PROMPT.system},
            {"role": "user", "content": PROMPT.user},
        ]
        # A custom server gets the field compatible servers understand.
        assert body["max_tokens"] == 321
    assert body["model"] == MODEL[completion.provider]


def test_an_empty_system_prompt_is_left_out(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    provider = sdk_provider()

    completed(provider, Prompt(system="", user="Only this."), MODEL[provider.name])

    body = stub.requests[0].json
    assert "system" not in body
    assert body["messages"] == [{"role": "user", "content": "Only this."}]


def test_openai_itself_gets_max_completion_tokens_compatible_servers_max_tokens() -> None:
    prompt = Prompt(system="s", user="u", max_tokens=99)

    official = chat_request(prompt, "o3-mini", custom_server=False)
    local = chat_request(prompt, "llama3.1", custom_server=True)

    assert official["max_completion_tokens"] == 99
    assert "max_tokens" not in official
    assert local["max_tokens"] == 99
    assert "max_completion_tokens" not in local


# -- retried failures ------------------------------------------------------------------


def test_rate_limit_waits_as_long_as_retry_after_says(
    sdk_provider: ProviderFactory, stub: StubServer, sleeps: SleepRecorder
) -> None:
    stub.enqueue(StubResponse.error(429, "slow down", headers={"Retry-After": "7"}), "after wait")

    completion = ask(sdk_provider)

    assert completion.text == "after wait"
    assert completion.attempts == 2
    assert sleeps.waits == [7.0]
    assert len(stub.requests) == 2


def test_retry_after_ms_and_http_dates_are_honoured(
    sdk_provider: ProviderFactory, stub: StubServer, sleeps: SleepRecorder
) -> None:
    in_a_while = formatdate(timeval=time.time() + 30, usegmt=True)
    stub.enqueue(
        StubResponse.error(429, headers={"retry-after-ms": "1500"}),
        StubResponse.error(503, headers={"Retry-After": in_a_while}),
        "done",
    )

    completion = ask(sdk_provider)

    assert completion.attempts == 3
    assert sleeps.waits[0] == 1.5
    assert 25 <= sleeps.waits[1] <= 30


def test_retry_after_is_capped(
    sdk_provider: ProviderFactory, stub: StubServer, sleeps: SleepRecorder
) -> None:
    stub.enqueue(StubResponse.error(429, headers={"Retry-After": "3600"}), "done")

    assert ask(sdk_provider).attempts == 2
    assert sleeps.waits == [60.0]


def test_server_error_storm_backs_off_exponentially_then_succeeds(
    sdk_provider: ProviderFactory, stub: StubServer, sleeps: SleepRecorder
) -> None:
    stub.enqueue(
        StubResponse.error(500, "internal"),
        StubResponse.error(529, "Overloaded"),
        StubResponse.error(503, "unavailable"),
        "calm again",
    )

    completion = ask(sdk_provider)

    assert completion.text == "calm again"
    assert completion.attempts == 4
    assert sleeps.waits == [1.0, 2.0, 4.0]


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retried(
    sdk_provider: ProviderFactory, stub: StubServer, status: int
) -> None:
    stub.enqueue(StubResponse.error(status), "ok")

    assert ask(sdk_provider).attempts == 2


def test_a_slow_server_times_out_and_is_retried(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.slow(3.0), "quick")

    completion = ask(sdk_provider, timeout_s=0.3)

    assert completion.text == "quick"
    assert completion.attempts == 2


def test_dropped_connections_are_retried(sdk_provider: ProviderFactory, stub: StubServer) -> None:
    stub.enqueue(StubResponse.dropped(), StubResponse.cut_off("x" * 500, keep_bytes=30), "whole")

    completion = ask(sdk_provider)

    assert completion.text == "whole"
    assert completion.attempts == 3


@pytest.mark.parametrize(
    "broken",
    [
        StubResponse.raw('{"id": "msg_01", "content": [{"type": "te'),
        StubResponse.raw("<html>gateway says hi</html>", content_type="text/html"),
        StubResponse.raw('{"unexpected": true}'),
        StubResponse.raw(b'{"text": "\xff\xfe not utf-8"}'),
        StubResponse.raw("[1, 2, 3]"),
        StubResponse.raw('"just a string"'),
    ],
    ids=["truncated-json", "html", "wrong-shape", "not-utf-8", "json-list", "json-string"],
)
def test_malformed_bodies_are_retried(
    sdk_provider: ProviderFactory, stub: StubServer, broken: StubResponse
) -> None:
    stub.enqueue(broken, "fine")

    completion = ask(sdk_provider)

    assert completion.text == "fine"
    assert completion.attempts == 2


def test_empty_answers_are_retried(sdk_provider: ProviderFactory, stub: StubServer) -> None:
    stub.enqueue(StubResponse.reply(""), StubResponse.reply("   \n"), "finally")

    completion = ask(sdk_provider)

    assert completion.text == "finally"
    assert completion.attempts == 3


def test_answers_that_never_have_text_fail_after_two_retries(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.reply(""), StubResponse.raw("{not json"), StubResponse.reply(""))

    error = fail(sdk_provider)

    name = name_of(sdk_provider)
    assert str(error).startswith(
        f"{name} returned no text for model {MODEL[name]} after 3 attempts"
    )
    assert error.attempts == 3
    assert len(stub.requests) == 3


def test_exhausted_retries_say_what_kept_failing(
    sdk_provider: ProviderFactory, stub: StubServer, sleeps: SleepRecorder
) -> None:
    stub.enqueue(*[StubResponse.error(429, "rate limited")] * 3)

    error = fail(sdk_provider, max_retries=2)

    name = name_of(sdk_provider)
    # The run that made the call adds how to go on: `dreamcontext council run <id>`.
    assert str(error) == f"{name} still failing after 3 attempts (429 rate limited)."
    assert error.retryable
    assert error.attempts == 3
    assert error.status == 429
    assert len(stub.requests) == 3
    assert len(sleeps.waits) == 2


def test_exhausted_timeouts_name_the_timeout(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.slow(3.0), StubResponse.slow(3.0))

    error = fail(sdk_provider, timeout_s=0.2, max_retries=1)

    assert "still failing after 2 attempts (timed out after 0.2s)" in str(error)


# -- failures that are not retried -----------------------------------------------------


def test_a_bad_key_fails_at_once_and_names_the_variable(
    sdk_provider: ProviderFactory, stub: StubServer, sleeps: SleepRecorder
) -> None:
    stub.enqueue(StubResponse.error(401, "invalid x-api-key"))

    error = fail(sdk_provider)

    name = name_of(sdk_provider)
    assert str(error).startswith(f"{name} rejected the API key (401)")
    assert str(error).endswith(f"Set {KEY_ENV[name]} to a valid key.")
    assert not error.retryable
    assert error.attempts == 1
    assert len(stub.requests) == 1
    assert sleeps.waits == []


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "refused the request for model {model} (400): max_tokens: too large"),
        (422, "refused the request for model {model} (422): max_tokens: too large"),
        (403, "denied access to model {model} (403): max_tokens: too large."),
        (404, "does not know model {model} (404): max_tokens: too large. Check the model name"),
    ],
)
def test_bad_requests_fail_at_once_with_the_server_message(
    sdk_provider: ProviderFactory, stub: StubServer, status: int, expected: str
) -> None:
    stub.enqueue(StubResponse.error(status, "max_tokens:   too\n large"))

    error = fail(sdk_provider)

    name = name_of(sdk_provider)
    assert str(error).startswith(f"{name} " + expected.format(model=MODEL[name]))
    assert error.status == status
    assert len(stub.requests) == 1


def test_forbidden_and_unknown_model_point_at_the_settings(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    name = name_of(sdk_provider)
    stub.enqueue(StubResponse.error(403, "no"))
    assert f"Check that the key in {KEY_ENV[name]} may use this model." in str(fail(sdk_provider))
    stub.enqueue(StubResponse.error(404, "no"))
    assert f"{name.upper()}_BASE_URL" in str(fail(sdk_provider))


def test_long_server_messages_are_shortened(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.enqueue(StubResponse.error(400, "why " * 500))

    assert len(str(fail(sdk_provider))) < 400


# -- secrets ---------------------------------------------------------------------------


def echo_credentials(request: RecordedRequest) -> dict[str, object]:
    """An error body that repeats the request's credentials, as a careless proxy might."""
    return error_body(400, f"bad request from {credentials_sent(request)}; key was {TEST_KEY}")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_the_key_never_appears_in_errors_even_when_the_server_echoes_it(
    sdk_provider: ProviderFactory, stub: StubServer, status: int
) -> None:
    stub.enqueue(StubResponse(status=status, body=echo_credentials))

    error = fail(sdk_provider)

    assert TEST_KEY in credentials_sent(stub.requests[0])
    shown = "".join(traceback.format_exception(error))
    assert TEST_KEY not in shown
    assert "SECRET-1234567890" not in shown
    assert "[redacted]" in str(error) or status == 401


def test_the_key_never_appears_in_retry_logs_or_exhaustion_errors(
    sdk_provider: ProviderFactory, stub: StubServer, caplog: pytest.LogCaptureFixture
) -> None:
    stub.enqueue(*[StubResponse(status=503, body=echo_credentials)] * 3)

    with caplog.at_level(logging.DEBUG):
        error = fail(sdk_provider, max_retries=2)

    assert "retry 1 of 2" in caplog.text
    assert TEST_KEY not in caplog.text
    assert TEST_KEY not in "".join(traceback.format_exception(error))


def test_a_missing_key_is_reported_without_calling_the_server(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    name = name_of(sdk_provider)
    if name == "openai":
        # With a custom server and no key the OpenAI provider sends a placeholder key.
        completion = ask(sdk_provider, api_key=None)
        assert completion.text == "stub answer"
        assert stub.requests[0].headers["authorization"] == "Bearer not-needed"
        return

    error = fail(sdk_provider, api_key=None)

    assert str(error) == (
        "anthropic has no API key. Set ANTHROPIC_API_KEY, or use the scripted model to run offline."
    )
    assert stub.requests == []


# -- concurrency -----------------------------------------------------------------------


async def _ask_many(provider_factory: ProviderFactory, limits: CallLimits, count: int) -> None:
    provider = provider_factory(limits=limits)
    try:
        await asyncio.gather(
            *(provider.complete(PROMPT, MODEL[provider.name]) for _ in range(count))
        )
    finally:
        await closed(provider)


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_the_concurrency_limit_caps_requests_in_flight_at_the_server(
    sdk_provider: ProviderFactory, stub: StubServer, limit: int
) -> None:
    stub.default_delay_s = 0.15
    name = name_of(sdk_provider)

    asyncio.run(_ask_many(sdk_provider, CallLimits({name: limit}), 6))

    assert len(stub.requests) == 6
    assert stub.max_in_flight == limit


def test_without_a_tight_limit_requests_do_overlap(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.default_delay_s = 0.3
    name = name_of(sdk_provider)

    asyncio.run(_ask_many(sdk_provider, CallLimits({name: 10}), 6))

    assert stub.max_in_flight == 6


def test_latency_leaves_out_the_wait_for_a_concurrency_slot(
    sdk_provider: ProviderFactory, stub: StubServer
) -> None:
    stub.default_delay_s = 0.2
    provider = sdk_provider(limits=CallLimits({name_of(sdk_provider): 1}))

    async def four() -> list[Completion]:
        model = MODEL[provider.name]
        try:
            return list(await asyncio.gather(*(provider.complete(PROMPT, model) for _ in range(4))))
        finally:
            await closed(provider)

    completions = asyncio.run(four())

    # Queued behind three others, the last call would report at least 0.8s.
    assert max(c.usage.latency_s for c in completions) < 0.6
    assert min(c.usage.latency_s for c in completions) >= 0.2
