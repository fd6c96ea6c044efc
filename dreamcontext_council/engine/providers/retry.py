"""The one place that decides, for a failed call, whether to retry and what to tell the user.

Providers make single attempts; `request_with_retries` runs them under the
provider's concurrency limit and per-call timeout, classifies every failure with
`diagnosis.classify`, waits with exponential backoff and full jitter (or as long as
the server's `Retry-After` asks, capped), and turns a final failure into a
`ProviderCallError` whose message names the provider, the model and the setting to
fix. Every piece of server or program output that reaches a message goes through
`diagnosis.redact` first, so API keys never show up in errors or logs.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from dreamcontext_council.engine.providers.base import (
    Completion,
    ProviderCallError,
    Reply,
    RetryListener,
    RetryNotice,
    Usage,
)
from dreamcontext_council.engine.providers.diagnosis import (
    CallTarget,
    Failure,
    SdkErrors,
    classify,
    no_text,
    redact,
)
from dreamcontext_council.engine.providers.limits import CallLimits

log = logging.getLogger(__name__)

SleepFn = Callable[[float], Awaitable[None]]

# -- the loop --------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

    Transient failures get up to `max_retries` retries; answers without text get at
    most `no_text_retries` of those. Waits grow as `base_delay_s * 2**n` with full
    jitter, or follow `Retry-After`, and never exceed `max_delay_s`. `sleep` is
    injectable so tests can record waits instead of sleeping.
    """

    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    no_text_retries: int = 2
    sleep: SleepFn = field(default=asyncio.sleep)
    jitter: Callable[[], float] = field(default=random.random)

    def delay(self, retry: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        if retry_after_s is not None:
            return min(retry_after_s, self.max_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (retry - 1))
        return ceiling * self.jitter()


def _final_error(target: CallTarget, failure: Failure, attempts: int) -> ProviderCallError:
    who, model = target.provider, target.model
    if not failure.retryable:
        message = failure.message or f"{who} failed for model {model} ({failure.reason})"
        retryable = False
    elif failure.no_text:
        message = (
            f"{who} returned no text for model {model} after {attempts} "
            f"attempt{'s' if attempts != 1 else ''} ({failure.reason}); if it keeps happening, "
            "choose another model."
        )
        retryable = True
    else:
        message = (
            f"{who} still failing after {attempts} attempt{'s' if attempts != 1 else ''} "
            f"({failure.reason})."
        )
        if failure.advice:
            message += f" {failure.advice}"
        retryable = True
    return ProviderCallError(
        redact(message, target.secrets),
        provider=who,
        model=model,
        attempts=attempts,
        status=failure.status,
        retryable=retryable,
    )


@dataclass(frozen=True)
class Answered:
    """One request that succeeded: the reply, how many attempts it took, and how long.

    `latency_s` runs from the start of the first attempt (after any wait for a
    concurrency slot) to the reply, so it includes retries and their waits.
    """

    reply: Reply
    attempts: int
    latency_s: float


async def request_with_retries(
    attempt: Callable[[], Awaitable[Reply]],
    *,
    target: CallTarget,
    policy: RetryPolicy,
    limits: CallLimits,
    timeout_s: float | None,
    errors: SdkErrors | None = None,
    tool_calls_answer: bool = False,
    on_retry: RetryListener | None = None,
    timed_by_attempt: bool = False,
) -> Answered:
    """Run `attempt` until it yields text, retrying transient failures per `policy`.

    Each attempt waits for a concurrency slot of `target.provider`, then has
    `timeout_s` to finish. With `tool_calls_answer`, a reply that asks for tool calls
    is an answer even without text. With `timed_by_attempt` the attempt keeps
    `timeout_s` itself (a stream counts it between chunks, `limits.StallTimer`) and
    only its `TimeoutError` is read as a timeout. Before each wait `on_retry`, when
    given, hears why the attempt failed, which retry comes and after how long. Raises
    `ProviderCallError` when a failure is final or the retries run out; exceptions
    that are not provider failures propagate unchanged.
    """
    started: float | None = None
    attempts = 0
    no_text_failures = 0

    async def timed_attempt() -> Reply:
        nonlocal started
        if started is None:
            started = time.monotonic()
        return await attempt()

    while True:
        attempts += 1
        failure: Failure | None
        try:
            reply = await limits.run(
                target.provider, timed_attempt, None if timed_by_attempt else timeout_s
            )
        except Exception as exc:
            failure = classify(exc, target, errors, timeout_s)
            if failure is None:
                raise
        else:
            if reply.text.strip() or (tool_calls_answer and reply.tool_calls):
                return Answered(
                    reply=reply,
                    attempts=attempts,
                    latency_s=time.monotonic() - (started or time.monotonic()),
                )
            failure = no_text("empty answer")
        if failure.no_text:
            no_text_failures += 1
        out_of_budget = attempts > policy.max_retries or (
            failure.no_text and no_text_failures > policy.no_text_retries
        )
        if not failure.retryable or out_of_budget:
            raise _final_error(target, failure, attempts)
        wait = policy.delay(attempts, failure.retry_after_s)
        log.info(
            "%s %s: %s; retry %d of %d in %.1fs",
            target.provider,
            redact(target.model, target.secrets),
            failure.reason,
            attempts,
            policy.max_retries,
            wait,
        )
        if on_retry is not None:
            on_retry(
                RetryNotice(
                    reason=redact(failure.reason, target.secrets),
                    retry=attempts,
                    retries=policy.max_retries,
                    wait_s=wait,
                    status=failure.status,
                )
            )
        await policy.sleep(wait)


async def complete_with_retries(
    attempt: Callable[[], Awaitable[Reply]],
    *,
    target: CallTarget,
    policy: RetryPolicy,
    limits: CallLimits,
    timeout_s: float | None,
    errors: SdkErrors | None = None,
    on_retry: RetryListener | None = None,
    timed_by_attempt: bool = False,
) -> Completion:
    """One request as a whole completion: `request_with_retries`, then its accounting."""
    answered = await request_with_retries(
        attempt,
        target=target,
        policy=policy,
        limits=limits,
        timeout_s=timeout_s,
        errors=errors,
        on_retry=on_retry,
        timed_by_attempt=timed_by_attempt,
    )
    reply = answered.reply
    return Completion(
        text=reply.text,
        usage=Usage(
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            latency_s=answered.latency_s,
            cache_write_tokens=reply.cache_write_tokens,
            cache_read_tokens=reply.cache_read_tokens,
        ),
        provider=target.provider,
        model=reply.model or target.model,
        attempts=answered.attempts,
        cut=reply.cut,
    )
