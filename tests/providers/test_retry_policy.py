"""The pure parts of the retry policy: waits, Retry-After, redaction, error wording."""

from __future__ import annotations

import asyncio
from email.utils import formatdate

import pytest

from dreamcontext_council.engine.providers.base import Reply
from dreamcontext_council.engine.providers.diagnosis import (
    CallTarget,
    parse_retry_after,
    redact,
    secrets_from_env,
    server_message,
    status_failure,
)
from dreamcontext_council.engine.providers.limits import CallLimits
from dreamcontext_council.engine.providers.retry import RetryPolicy, complete_with_retries
from dreamcontext_council.errors import UsageError

from .conftest import TEST_KEY

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"RETRY-AFTER-MS": "1500"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"Retry-After": formatdate(NOW + 42, usegmt=True)}, 42.0),
        ({"Retry-After": formatdate(NOW - 42, usegmt=True)}, 0.0),
        ({"Retry-After": "-3"}, 0.0),
        ({"Retry-After": "whenever"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_every_form(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == seconds


def test_waits_grow_exponentially_with_full_jitter_and_a_cap() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=10.0, jitter=lambda: 1.0)
    assert [policy.delay(n) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]

    low = RetryPolicy(base_delay_s=1.0, jitter=lambda: 0.0)
    assert low.delay(3) == 0.0

    real = RetryPolicy(base_delay_s=1.0, max_delay_s=10.0)
    assert all(0.0 <= real.delay(4) <= 8.0 for _ in range(200))


def test_a_server_requested_wait_wins_over_backoff_but_is_capped() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=30.0, jitter=lambda: 1.0)
    assert policy.delay(1, retry_after_s=12.5) == 12.5
    assert policy.delay(4, retry_after_s=0.0) == 0.0
    assert policy.delay(1, retry_after_s=3600) == 30.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {TEST_KEY} rejected", "key [redacted] rejected"),
        ("Authorization: Bearer abcdefgh12345678", "Authorization: Bearer [redacted]"),
        ('{"x-api-key": "0123456789abcdef"}', '{"x-api-key": "[redacted]"}'),
        ("api_key=hunter2hunter2 and more", "api_key=[redacted] and more"),
        ("sk-ant-api03-AbCdEf0123456789 leaked", "[redacted] leaked"),
        ("at https://me:pa55word@proxy.local/v1", "at https://[redacted]@proxy.local/v1"),
        ("max_tokens: 4096 is too large", "max_tokens: 4096 is too large"),
        ("ask a task-oriented question", "ask a task-oriented question"),
    ],
)
def test_redaction_hides_key_shaped_text(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redaction_hides_given_secrets_anywhere() -> None:
    secret = "plain-looking-secret"
    assert redact(f"a{secret}b {secret}", [secret, "", "abc"]) == "a[redacted]b [redacted]"


def test_secrets_are_collected_from_key_like_environment_variables() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-123456789",
        "GITHUB_TOKEN": "ghp_abcdefghijkl",
        "DB_PASSWORD": "correct horse",
        "SHORT_KEY": "abc",
        "HOME": "/home/someone-with-a-long-name",
    }
    assert set(secrets_from_env(env)) == {"sk-ant-123456789", "ghp_abcdefghijkl", "correct horse"}


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"type": "error", "error": {"type": "x", "message": "bad max_tokens"}}, "bad max_tokens"),
        ({"error": "model not loaded"}, "model not loaded"),
        ({"detail": "Not Found"}, "Not Found"),
        ({"message": "nope"}, "nope"),
        (b"<html>502</html>", "<html>502</html>"),
        ("upstream connect error", "upstream connect error"),
        (None, ""),
    ],
)
def test_server_messages_are_found_in_common_error_shapes(body: object, said: str) -> None:
    assert server_message(body) == said


def test_an_openai_compatible_server_is_named_when_it_rejects_the_key() -> None:
    target = CallTarget(
        provider="openai",
        model="llama3.1",
        key_env="OPENAI_API_KEY",
        base_url_env="OPENAI_BASE_URL",
        base_url="http://localhost:11434/v1",
    )
    failure = status_failure(target, 401, {"error": "unauthorized"}, {})
    assert failure.message == (
        "openai rejected the API key (401) (server http://localhost:11434/v1). "
        "Set OPENAI_API_KEY to a valid key."
    )
    assert not failure.retryable


def test_unexpected_statuses_are_classified_conservatively() -> None:
    target = CallTarget(provider="openai", model="m", key_env="OPENAI_API_KEY")
    assert status_failure(target, 418, None, {}).retryable is False
    assert status_failure(target, 507, None, {}).retryable is True
    assert status_failure(target, 402, None, {}).message.endswith(
        "Check the billing of the account behind OPENAI_API_KEY."
    )


def test_exceptions_that_are_not_provider_failures_propagate_unchanged() -> None:
    async def attempt() -> Reply:
        raise KeyError("a bug, not a provider failure")

    with pytest.raises(KeyError):
        asyncio.run(
            complete_with_retries(
                attempt,
                target=CallTarget(provider="openai", model="m"),
                policy=RetryPolicy(),
                limits=CallLimits(),
                timeout_s=1.0,
            )
        )


def test_concurrency_limits_must_be_positive() -> None:
    with pytest.raises(UsageError, match="Concurrency for openai must be at least 1"):
        CallLimits({"openai": 0})
    assert CallLimits({"openai": 9}).limit_for("openai") == 9
    assert CallLimits().limit_for("anthropic") == 4
    assert CallLimits(default=6).limit_for("someday") == 6


def test_limits_work_across_event_loops() -> None:
    limits = CallLimits({"x": 1})
    in_flight = 0
    most = 0

    async def attempt() -> int:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return 1

    async def many() -> None:
        await asyncio.gather(*(limits.run("x", attempt, 1.0) for _ in range(4)))

    asyncio.run(many())
    asyncio.run(many())
    assert most == 1


def test_waiting_for_a_slot_does_not_count_against_the_timeout() -> None:
    limits = CallLimits({"x": 1})

    async def attempt() -> str:
        await asyncio.sleep(0.15)
        return "done"

    async def two() -> list[str]:
        return list(await asyncio.gather(*(limits.run("x", attempt, 0.25) for _ in range(2))))

    assert asyncio.run(two()) == ["done", "done"]
