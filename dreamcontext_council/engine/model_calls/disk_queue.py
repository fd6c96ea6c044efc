"""Writes of a debate, off the event loop, in order, on a few threads shared by every debate.

Saving an answer or a usage line takes the debate's lock and fsyncs, so it runs in a
worker thread while the loop goes on reading the calls in flight. An eval drives a
hundred debates on one loop: a thread of its own for every debate (and every round)
meant hundreds of threads, each waking every few milliseconds to ask for the
interpreter lock. The threads are a pool for the process instead, and each debate (each
usage file) has a `DiskQueue`, which hands the pool one job at a time in the order they
were asked for: its writes never overtake each other nor wait on each other's file lock.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from functools import cache
from typing import TypeVar

T = TypeVar("T")

# Writers mostly wait on fsync, and only one of them runs Python at a time.
POOL_THREADS = 4


@cache
def _pool() -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="council-writer")


class DiskQueue:
    """One job at a time, in the order `run` was called, on the shared writer threads."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turn = asyncio.Lock()

    async def run(self, job: Callable[[], T]) -> T:
        """Run `job` in a writer thread once the jobs asked for before it are done.

        A job that has started finishes even if its caller is cancelled (Ctrl-C lets an
        answer that is being saved finish), and before the next job starts.
        """
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a lock belongs to one event loop
            self._loop, self._turn = loop, asyncio.Lock()
        async with self._turn:
            future = _pool().submit(job)
            try:
                return await asyncio.wrap_future(future)
            finally:
                if not future.done() and not future.cancel():
                    concurrent.futures.wait([future])
