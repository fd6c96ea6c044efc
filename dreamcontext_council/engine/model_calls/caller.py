"""One model call with budget admission, usage accounting, progress and its in-flight file."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from dreamcontext_council.engine.model_calls.accounting import PENDING, Ledger, with_outcome
from dreamcontext_council.engine.model_calls.disk_queue import DiskQueue
from dreamcontext_council.engine.model_calls.live_call import LiveCall
from dreamcontext_council.engine.model_calls.progress import Progress
from dreamcontext_council.engine.providers.base import Completion, Prompt
from dreamcontext_council.engine.providers.models import ModelSpec
from dreamcontext_council.engine.providers.registry import ProviderSet
from dreamcontext_council.errors import CouncilError

# Expected answer sizes, for the budget check before a call (tokens).
EXPECTED_OUTPUT = {"check": 5, "synthesis": 3000, "persona-generation": 1500}
DEFAULT_EXPECTED_OUTPUT = 1200


@dataclass
class Caller:
    """Makes calls for a run; every call is admitted by the ledger and recorded in usage.jsonl.

    A call is `pending` until its caller appends the line `ask` returned, after the write.
    While it runs, its text so far is in an in-flight file of the debate whose usage.jsonl
    the ledger keeps (`folder/in_flight.py`), and in the progress.
    """

    providers: ProviderSet
    ledger: Ledger
    progress: Progress
    # Usage lines are appended in the order the calls returned, off the event loop.
    _appender: DiskQueue = field(default_factory=DiskQueue, init=False, repr=False)

    async def ask(
        self, spec: ModelSpec, prompt: Prompt, *, persona: str, round: int, phase: str
    ) -> tuple[Completion, str]:
        """Ask the model; BudgetReached before a call that would cross a limit.

        The answer comes with its `ok` usage line, which the caller appends only once the
        result is on disk (or replaces with another outcome), so every `ok` line of
        usage.jsonl stands for work a rerun will not ask for again. Until then the call
        stands as `pending` (appended here): paid for, whatever happens next. A failed
        call is recorded here at once.
        """
        estimated_in = (len(prompt.system) + len(prompt.user)) // 4
        if prompt.tools is not None:
            # Each tool call sends the conversation again: admit the turn at its worst.
            estimated_in *= prompt.tools.max_calls + 1
        estimate = self.ledger.admit(
            spec, estimated_in, EXPECTED_OUTPUT.get(phase, DEFAULT_EXPECTED_OUTPUT)
        )
        started = time.perf_counter()
        live = LiveCall(
            self.folder,
            within=self.ledger.within or self.folder,
            progress=self.progress,
            persona=persona,
            phase=phase,
            round=round,
        )
        live.begin()
        heard = prompt.on_text  # the caller's own listener, if any, hears the text too

        def text(piece: str) -> None:
            live.text(piece)
            if heard is not None:
                heard(piece)

        try:
            completion = await self.providers.complete(
                spec, replace(prompt, on_retry=live.retry, on_text=text)
            )
        except CouncilError as exc:
            self.ledger.release(estimate)
            line = self.ledger.record(
                spec=spec,
                persona=persona,
                round_number=round,
                phase=phase,
                completion=None,
                outcome="failed",
                error=str(exc),
                latency_s=time.perf_counter() - started,
            )
            await self.append(line)
            raise
        except BaseException:
            self.ledger.release(estimate)
            raise
        finally:
            live.end()
        self.ledger.release(estimate)
        line = self.ledger.record(
            spec=spec, persona=persona, round_number=round, phase=phase, completion=completion
        )
        await self.append(with_outcome(line, PENDING))
        return completion, line

    @property
    def folder(self) -> Path:
        """The debate folder the calls are made for: the one holding usage.jsonl."""
        return self.ledger.usage_path.parent

    async def append(self, line: str) -> None:
        """Append a usage line; the write waits for the disk, so off the event loop."""
        await self._appender.run(functools.partial(self.ledger.append, line))

    async def save(self, write: Callable[[], None], line: str) -> None:
        """Run `write`, which puts a call's result on disk, then append the call's `ok` line
        `line`: one trip off the event loop, in order with the usage lines. A write that
        fails appends nothing; the call stays `pending`, paid for."""

        def job() -> None:
            write()
            self.ledger.append(line)

        await self._appender.run(job)
