"""How many calls a provider may have in flight at once, and how long one may take."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

from dreamcontext_council.errors import UsageError

T = TypeVar("T")

# A debate sends all personas at once; these keep a fresh account under its rate limit.
DEFAULT_CONCURRENCY: dict[str, int] = {"anthropic": 4, "openai": 4, "command": 2}
FALLBACK_CONCURRENCY = 4


class CallLimits:
    """A concurrency limit per provider name, shared by every provider instance given it.

    Semaphores are kept per event loop, so one `CallLimits` can serve several
    `asyncio.run` calls in a row.
    """

    def __init__(
        self,
        concurrency: Mapping[str, int] | None = None,
        *,
        default: int = FALLBACK_CONCURRENCY,
    ) -> None:
        merged = {**DEFAULT_CONCURRENCY, **dict(concurrency or {})}
        for name, limit in [*merged.items(), ("(default)", default)]:
            if limit < 1:
                raise UsageError(f"Concurrency for {name} must be at least 1, not {limit}.")
        self._limits = merged
        self._default = default
        self._semaphores: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()

    def limit_for(self, provider: str) -> int:
        """The most calls `provider` may have in flight at once."""
        return self._limits.get(provider, self._default)

    def _semaphore(self, provider: str) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        per_loop = self._semaphores.setdefault(loop, {})
        if provider not in per_loop:
            per_loop[provider] = asyncio.Semaphore(self.limit_for(provider))
        return per_loop[provider]

    async def run(
        self,
        provider: str,
        attempt: Callable[[], Awaitable[T]],
        timeout_s: float | None,
    ) -> T:
        """Run one attempt once a slot for `provider` is free, within `timeout_s`.

        Waiting for a slot does not count against the timeout. On timeout the attempt
        is cancelled and `TimeoutError` is raised.
        """
        async with self._semaphore(provider):
            if timeout_s is None:
                return await attempt()
            async with asyncio.timeout(timeout_s):
                return await attempt()


class StallTimer:
    """A timeout that starts over whenever the call shows progress.

    Within `async with StallTimer(timeout_s) as timer:` the block is cancelled and
    `TimeoutError` raised once `timeout_s` pass without a call to `timer.progress()`;
    a block that never calls it has `timeout_s` in all. `None` waits for ever.
    `progress()` only notes the time (a stream calls it at every chunk); the timer
    looks at it when it runs out, and waits on from the last progress if there was any.
    """

    def __init__(self, timeout_s: float | None) -> None:
        self.timeout_s = timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._last = 0.0
        self._cancelling = 0
        self._expired = False

    async def __aenter__(self) -> StallTimer:
        if self.timeout_s is not None:
            self._loop = loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            if self._task is None:
                raise RuntimeError("StallTimer should be used inside a task")
            self._cancelling = self._task.cancelling()
            self._last = loop.time()
            self._handle = loop.call_at(self._last + self.timeout_s, self._run_out)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._loop = None
        # As `asyncio.timeout` does: our own cancellation becomes a TimeoutError.
        if (
            self._expired
            and self._task is not None
            and self._task.uncancel() <= self._cancelling
            and exc_type is asyncio.CancelledError
        ):
            raise TimeoutError from exc

    def progress(self) -> None:
        """Something arrived: the next `timeout_s` start now."""
        if self._loop is not None:
            self._last = self._loop.time()

    def _run_out(self) -> None:
        assert self._loop is not None and self._task is not None and self.timeout_s is not None
        due = self._last + self.timeout_s
        if self._loop.time() < due:  # progress since the timer was set: wait on from it
            self._handle = self._loop.call_at(due, self._run_out)
            return
        self._handle = None
        self._expired = True
        self._task.cancel()
