"""`council eval`: run a set of questions with known answers through several methods.

Every question is an ordinary debate folder (the full council, and its round-1 answers for
the majority vote); the solo answer and the self-consistency samples are single calls
booked in that debate's usage.jsonl as `(baseline)` and `(self-consistency)`. The eval
folder `_dream_context/evals/<eval-id>/` holds the set, which debate answers which
question, the solo answers, and the results. Everything written is kept, so running the
same command again goes on where a killed eval stopped without repeating a saved call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamcontext_council.actions import convene
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.index import deferred_index
from dreamcontext_council.actions.live_state import throttled_submissions
from dreamcontext_council.engine.model_calls.accounting import (
    BASELINE_CALLER,
    Budget,
    BudgetReached,
    Ledger,
    load_prices,
)
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.model_calls.progress import QuietProgress
from dreamcontext_council.engine.protocol.run import LIVE_REFRESH_S
from dreamcontext_council.engine.providers.base import Completion, Prompt
from dreamcontext_council.engine.providers.models import ModelSpec, default_model, parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet, ProviderSettings
from dreamcontext_council.engine.setup.launch import launch
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.errors import ProviderError, RunStopped
from dreamcontext_council.evaluation.folder import MATCH, EvalFolder, EvalSettings, debate_usage
from dreamcontext_council.evaluation.results import method_usage
from dreamcontext_council.evaluation.solo import SAMPLE_CALLER, single_answer
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_json
from dreamcontext_council.rules.eval_set import EvalQuestion
from dreamcontext_council.rules.eval_stats import matched_samples
from dreamcontext_council.rules.roster import load_roster
from dreamcontext_council.rules.run_settings import DEFAULT_RETRIES, DEFAULT_TIMEOUT
from dreamcontext_council.rules.usage import calls_of


class CountingProviders(ProviderSet):
    """A provider set that knows how many calls are in flight, for the progress line."""

    in_flight = 0

    async def complete(self, spec: ModelSpec, prompt: Prompt) -> Completion:
        self.in_flight += 1
        try:
            return await super().complete(spec, prompt)
        finally:
            self.in_flight -= 1


@dataclass
class EvalProgress:
    """Questions done, calls in flight, spend and ETA, one line each time a question ends."""

    total: int
    providers: CountingProviders
    echo: Callable[[str], None]
    done: int = 0
    spent: float = 0.0
    started: float = field(default_factory=time.monotonic)
    finished_here: int = 0

    def question_done(self, cost: float, *, ran: bool) -> None:
        self.done += 1
        self.spent += cost
        self.finished_here += ran
        elapsed = time.monotonic() - self.started
        left = self.total - self.done
        eta = (
            f"{elapsed / self.finished_here * left:.0f}s"
            if self.finished_here and left
            else ("0s" if not left else "?")
        )
        self.echo(
            f"eval: {self.done}/{self.total} questions · {self.providers.in_flight} calls in "
            f"flight · ${self.spent:.4f} spent · ETA {eta}"
        )


class Evaluation:
    """One eval run: every question through every method, a few questions at a time."""

    def __init__(
        self,
        root: Root,
        folder: EvalFolder,
        settings: EvalSettings,
        echo: Callable[[str], None],
    ) -> None:
        self.root = root
        self.folder = folder
        self.settings = settings
        self.echo = echo
        self.prices = load_prices(None)
        self.providers = CountingProviders(
            ProviderSettings.for_run(
                settings.timeout if settings.timeout is not None else DEFAULT_TIMEOUT,
                settings.retries if settings.retries is not None else DEFAULT_RETRIES,
                settings.concurrency,
                settings.base_url,
            ),
            env=settings.env,
        )
        self._debates_lock = asyncio.Lock()
        # Every question's calls count against one budget: the eval stops as a whole.
        self.budget = Budget(settings.max_cost, settings.max_calls)

    @property
    def solo_model(self) -> ModelSpec:
        s = self.settings
        return parse_model(s.synth_model or s.model or default_model(s.env))

    async def run(self, questions: list[EvalQuestion]) -> None:
        """Every question to its end; a failure of one question stops the eval (resumable)."""
        progress = EvalProgress(len(questions), self.providers, self.echo)
        gate = asyncio.Semaphore(max(1, self.settings.parallel))

        async def one(question: EvalQuestion) -> None:
            async with gate:
                cost, ran = await self.question(question)
            progress.question_done(cost, ran=ran)

        try:
            # Held around every run: each run's own hold restores what it found, which,
            # with runs overlapping, is another run's setting rather than the process's.
            with (
                throttled_submissions(LIVE_REFRESH_S, every_refresh=True),
                deferred_index(self.root),
            ):
                # Every question goes on to its own end, so answers in flight are saved
                # when one question stops; then the first stop stops the eval.
                ended = await asyncio.gather(*(one(q) for q in questions), return_exceptions=True)
            for problem in ended:
                if isinstance(problem, BaseException):
                    raise problem
        except (RunStopped, ProviderError, BudgetReached) as stop:
            reason = (
                stop.reason
                if isinstance(stop, RunStopped)
                else f"budget: {stop}"
                if isinstance(stop, BudgetReached)
                else "a call failed"
            )
            raise RunStopped(
                f"{str(stop).rstrip('.')}. Run the same `dreamcontext council eval` command "
                "again to resume every question.",
                reason,
            ) from stop
        finally:
            await self.providers.aclose()

    async def _debate_for(self, question: EvalQuestion) -> DebateFiles:
        async with self._debates_lock:
            debate_id = self.folder.debates().get(question.id)
            if debate_id is None:
                roster = load_roster(self.settings.personas_spec)
                debate = convene.new_debate(
                    self.root,
                    question.question,
                    rounds=self.settings.rounds,
                    options=question.options,
                    personas=roster,
                )
                debate_id = debate.id
                self.folder.record_debate(question.id, debate_id)
        return DebateFiles(self.root, debate_id)

    async def question(self, question: EvalQuestion) -> tuple[float, bool]:
        """Solo answer, samples, then the council (with --samples match: the council, then
        the samples its spend affords); returns the question's cost and whether anything
        was left to do."""
        files = await self._debate_for(question)
        complete = str(files.debate().status) == "complete"
        matched = self.settings.matched
        count = self.folder.sample_count(question.id, MATCH) if matched else self.settings.samples
        paths = [self.folder.solo_answer(question.id)] + [
            self.folder.sample_answer(question.id, n) for n in range(1, count + 1)
        ]
        ran = not complete or not all(p.is_file() for p in paths) or (matched and not count)
        timing = self.folder.timings(question.id)
        ledger = Ledger(files.paths.usage, self.prices, shared=self.budget, within=self.root.path)
        caller = Caller(self.providers, ledger, QuietProgress())
        spec = self.solo_model
        started = time.monotonic()
        await single_answer(files, paths[0], question, spec, caller, who=BASELINE_CALLER)
        timing["solo"] = timing.get("solo", 0.0) + time.monotonic() - started
        if not matched:
            await self._samples(files, question, caller, paths[1:], timing)
        if not complete:
            started = time.monotonic()
            outcome = await launch(
                self._launch(files.id), echo=lambda _line: None, shared=self.providers
            )
            timing["council"] = timing.get("council", 0.0) + time.monotonic() - started
            if outcome.get("stopped") == "budget":
                atomic_write_json(self.folder.timing(question.id), timing, within=self.root.path)
                raise BudgetReached(str(outcome["reason"]).removeprefix("budget: "))
        if matched:
            count = await self._matched_count(files, question, caller, timing)
            paths = [self.folder.sample_answer(question.id, n) for n in range(1, count + 1)]
            await self._samples(files, question, caller, paths, timing)
        if ran:
            atomic_write_json(self.folder.timing(question.id), timing, within=self.root.path)
        usage = calls_of(debate_usage(files))
        return sum(float(r.get("cost_usd") or 0) for r in usage), ran

    async def _samples(
        self,
        files: DebateFiles,
        question: EvalQuestion,
        caller: Caller,
        paths: list[Path],
        timing: dict[str, float],
    ) -> None:
        """The self-consistency samples saved at `paths` (sample 1 first), at once."""
        started = time.monotonic()
        samples = [
            single_answer(files, p, question, self.solo_model, caller, who=SAMPLE_CALLER, sample=n)
            for n, p in enumerate(paths, start=1)
        ]
        await asyncio.gather(*samples)
        timing["self-consistency"] = (
            timing.get("self-consistency", 0.0) + time.monotonic() - started
        )

    async def _matched_count(
        self,
        files: DebateFiles,
        question: EvalQuestion,
        caller: Caller,
        timing: dict[str, float],
    ) -> int:
        """--samples match: how many samples the council's spend on the question affords,
        priced by the first sample; written to the budget file once, then read back."""
        written = self.folder.matched_budget(question.id)
        if written:
            return int(written["samples"])
        first = [self.folder.sample_answer(question.id, 1)]
        await self._samples(files, question, caller, first, timing)
        usage = method_usage(self.root, self.folder, question.id)
        council, sample = usage["council"], usage["self-consistency"]
        # Dollars when both sides have a price, else tokens counted alike.
        measure = "cost_usd" if council["cost_usd"] > 0 and sample["cost_usd"] > 0 else "tokens"
        count = matched_samples(council[measure], sample[measure])
        budget = {
            "samples": count,
            "measure": measure,
            "council": round(council[measure], 6),
            "sample": round(sample[measure], 6),
        }
        atomic_write_json(self.folder.budget(question.id), budget, within=self.root.path)
        return count

    def _launch(self, debate_id: str) -> Launch:
        s = self.settings
        return Launch(
            debate_id=debate_id,
            model=s.model,
            synth_model=s.synth_model,
            check_model=s.model,
            base_url=s.base_url,
            timeout=s.timeout,
            retries=s.retries,
            concurrency=s.concurrency,
            allow_commands=list(s.allow_commands),
            shared_budget=self.budget,
            yes=True,
            quiet=True,
            root=str(self.root.path),
            env=s.env,
        )


async def run_eval(
    root: Root,
    questions: list[EvalQuestion],
    settings: EvalSettings,
    eval_id: str,
    echo: Callable[[str], None],
) -> dict[str, Any]:
    """Run (or resume) the eval `eval_id` and write its results; returns results.json."""
    from dreamcontext_council.engine.setup.launch import SCRIPTED_NOTICE

    if parse_model(settings.model or default_model(settings.env)).provider == "scripted":
        echo(SCRIPTED_NOTICE)
    folder = EvalFolder(root, eval_id)
    if not folder.open(questions, settings):
        echo(f"Resuming eval {eval_id}: saved answers are not asked again.")
    from dreamcontext_council.evaluation.results import write_results

    started = time.monotonic()
    await Evaluation(root, folder, settings, echo).run(folder.questions())
    return write_results(root, folder, time.monotonic() - started)
