"""One model call with budget admission, usage accounting and progress reporting."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from dreamcontext_council.engine.accounting import Ledger
from dreamcontext_council.engine.progress import Progress
from dreamcontext_council.engine.providers.base import Completion, Prompt
from dreamcontext_council.engine.providers.models import ModelSpec
from dreamcontext_council.engine.providers.registry import ProviderSet
from dreamcontext_council.errors import CouncilError

# Expected answer sizes, for the budget check before a call (tokens).
EXPECTED_OUTPUT = {"check": 5, "synthesis": 3000, "persona-generation": 1500}
DEFAULT_EXPECTED_OUTPUT = 1200


@dataclass
class Caller:
    """Makes calls for a run; every call is admitted by the ledger and recorded in usage.jsonl."""

    providers: ProviderSet
    ledger: Ledger
    progress: Progress

    async def call(
        self, spec: ModelSpec, prompt: Prompt, *, persona: str, round: int, phase: str
    ) -> Completion:
        """Ask the model and record the call; BudgetReached before a call that would cross a limit."""
        completion, line = await self.ask(spec, prompt, persona=persona, round=round, phase=phase)
        await self.append(line)
        return completion

    async def ask(
        self, spec: ModelSpec, prompt: Prompt, *, persona: str, round: int, phase: str
    ) -> tuple[Completion, str]:
        """Ask the model; the answer comes with its usage line, which the caller appends.

        A persona's answer appends its line only once the answer is on disk, so every
        `ok` line of usage.jsonl stands for work a rerun will not ask for again. A
        failed call is recorded here at once.
        """
        estimated_in = (len(prompt.system) + len(prompt.user)) // 4
        estimate = self.ledger.admit(
            spec, estimated_in, EXPECTED_OUTPUT.get(phase, DEFAULT_EXPECTED_OUTPUT)
        )
        started = time.perf_counter()
        try:
            completion = await self.providers.complete(spec, prompt)
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
        self.ledger.release(estimate)
        line = self.ledger.record(
            spec=spec, persona=persona, round_number=round, phase=phase, completion=completion
        )
        return completion, line

    async def append(self, line: str) -> None:
        """Append a usage line; the write waits for the disk, so off the event loop."""
        await asyncio.to_thread(self.ledger.append, line)
