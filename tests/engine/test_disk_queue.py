"""Writes off the event loop: in order per queue, on a few threads shared by every queue."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from dreamcontext_council.engine.model_calls.disk_queue import POOL_THREADS, DiskQueue


def test_each_queue_keeps_its_order_and_all_share_a_few_threads() -> None:
    done: dict[int, list[int]] = {}
    threads: set[str] = set()

    def job(queue: int, n: int) -> int:
        threads.add(threading.current_thread().name)
        time.sleep(0.001 * ((n * 7 + queue) % 3))  # uneven jobs: order must not depend on them
        done.setdefault(queue, []).append(n)
        return n

    async def main() -> list[list[int]]:
        queues = [DiskQueue() for _ in range(50)]
        return await asyncio.gather(
            *(
                asyncio.gather(*(q.run(lambda i=i, n=n: job(i, n)) for n in range(5)))
                for i, q in enumerate(queues)
            )
        )

    results = asyncio.run(main())

    assert results == [list(range(5))] * 50
    assert all(order == list(range(5)) for order in done.values())
    assert 1 <= len(threads) <= POOL_THREADS  # not a thread per queue
    assert all(name.startswith("council-writer") for name in threads)


def test_a_started_job_finishes_before_a_cancelled_caller_goes_on() -> None:
    started, finished = threading.Event(), threading.Event()

    def slow() -> None:
        started.set()
        time.sleep(0.2)
        finished.set()

    async def main() -> None:
        queue = DiskQueue()
        task = asyncio.create_task(queue.run(slow))
        while not started.is_set():
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished.is_set()  # the save ran to its end before the cancel went through
        assert await queue.run(lambda: 7) == 7  # and the queue goes on

    asyncio.run(main())


def test_a_queue_serves_one_event_loop_after_another() -> None:
    queue = DiskQueue()
    assert asyncio.run(queue.run(lambda: 1)) == 1
    assert asyncio.run(queue.run(lambda: 2)) == 2
