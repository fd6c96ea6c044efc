"""How many calls a provider may have in flight at once, and how long one may take."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TypeVar

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
    """

    def __init__(self, timeout_s: float | None) -> None:
        self.timeout_s = timeout_s
        self._timeout: asyncio.Timeout | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __aenter__(self) -> StallTimer:
        if self.timeout_s is not None:
            self._loop = asyncio.get_running_loop()
            self._timeout = asyncio.timeout(self.timeout_s)
            await self._timeout.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._timeout is not None:
            await self._timeout.__aexit__(exc_type, exc, tb)

    def progress(self) -> None:
        """Something arrived: the next `timeout_s` start now."""
        if self._timeout is not None and self._loop is not None and self.timeout_s is not None:
            self._timeout.reschedule(self._loop.time() + self.timeout_s)
