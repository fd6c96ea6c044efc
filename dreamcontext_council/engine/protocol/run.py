"""`council run`: drive a debate folder from wherever it stands to its final report.

The folder is the only state. Each step reads the status from debate.md, does one
thing through the same library calls the agent-driven commands use, and loops, so a
killed run started again goes on from where it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from dreamcontext_council.actions import closing
from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.live_state import refresh_live, throttled_submissions
from dreamcontext_council.actions.rounds import absences, end_round, missing_reports
from dreamcontext_council.engine.model_calls.accounting import (
    BudgetReached,
    Ledger,
)
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.model_calls.progress import Progress
from dreamcontext_council.engine.prompting.synthesis_input import CompressionSettings
from dreamcontext_council.engine.protocol import convergence as conv
from dreamcontext_council.engine.protocol.cross_exam import open_round
from dreamcontext_council.engine.protocol.only import only_round
from dreamcontext_council.engine.protocol.person_seat import person_desk_for
from dreamcontext_council.engine.protocol.plan import RunPlan
from dreamcontext_council.engine.protocol.round_page import transcript_budget
from dreamcontext_council.engine.protocol.rounds import (
    RoundRunner,
)
from dreamcontext_council.engine.protocol.synthesis import Synthesizer
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet
from dreamcontext_council.errors import ProviderError, RunStopped, StateError
from dreamcontext_council.folder.in_flight import remove_leftover_in_flight
from dreamcontext_council.folder.leftovers import remove_leftover_staging, remove_leftover_temps
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.run_record import RunRecord, begin_run, end_run, record_stop
from dreamcontext_council.folder.safe_write import file_ready
from dreamcontext_council.folder.storage import locked
from dreamcontext_council.rules.final_report import verdict_statement
from dreamcontext_council.rules.roundlog import persona_failures
from dreamcontext_council.rules.sealing import stances_line
from dreamcontext_council.rules.seats import is_person
from dreamcontext_council.views.failures import absence_lines, grouped_reasons, shorten_at_word

if TYPE_CHECKING:  # the MCP client is loaded only by a run with research tools
    from dreamcontext_council.engine.research.session import ResearchSession

# Held for a whole run (an OS lock: a killed run leaves it free), so two runs never
# ask the same personas at once.
RUN_LOCK_NAME = ".run.lock"


# Answers arrive in bursts; the live file follows them at most this often (transitions at once).
LIVE_REFRESH_S = 0.5


@dataclass
class RunOutcome:
    """Where the run stopped and why: complete, interlude, budget."""

    debate_id: str
    stopped: str
    message: str
    calls: int = 0
    cost: float = 0.0
    reason: str = ""  # for a stop before the end: what run.json records
    verdict: dict[str, Any] | None = None  # a complete debate's decision and confidence


class CouncilRun:
    """One invocation of `run` on one debate, as its plan says (engine/protocol/plan.py)."""

    def __init__(
        self,
        root: Root,
        debate_id: str,
        plan: RunPlan,
        providers: ProviderSet,
        progress: Progress,
    ) -> None:
        self.root = root
        self.files = DebateFiles(root, debate_id)
        self.plan = plan
        self.flags = plan.flags
        self.seats = plan.seats
        self.default_model = plan.seats.model
        limits = plan.limits
        self.ledger = Ledger(
            self.files.paths.usage,
            limits.prices,
            limits.max_cost,
            limits.max_calls,
            limits.shared_budget,
            within=root.path,
        )
        self.caller = Caller(providers, self.ledger, progress)
        self.progress = progress
        self.compression: CompressionSettings = plan.compression.settings()
        self.research: ResearchSession | None = None
        # Where a person's seat is waited for: one for the run, so one seat at a time
        # holds the keyboard on a terminal.
        self.desk = person_desk_for(
            root,
            self.files,
            progress,
            timeout=plan.limits.human_timeout,
            tty=plan.tty and not plan.quiet,  # an offer nobody sees is not made
            env=plan.env,
        )

    @property
    def id(self) -> str:
        return self.files.id

    def _outcome(
        self,
        stopped: str,
        message: str,
        reason: str = "",
        verdict: dict[str, Any] | None = None,
    ) -> RunOutcome:
        short = self._short_council()
        if short:
            message += "\nNot every persona answered:\n" + "\n".join(f"  {s}" for s in short)
        return RunOutcome(
            self.id, stopped, message, self.ledger.calls, self.ledger.cost, reason, verdict
        )

    def _short_council(self) -> list[str]:
        """Personas that failed or were excused, with the rounds they did not answer."""
        debate = self.files.debate()
        return absence_lines(absences(self.files, debate), persona_failures(self.files.log()))

    async def run(self) -> RunOutcome:
        """Drive the debate, refusing to if another `run` is driving it already."""
        # Links out (the run lock, usage.jsonl) are refused before the first call is paid for.
        file_ready(self.files.paths.folder / RUN_LOCK_NAME, self.root.path)
        file_ready(self.files.paths.usage, self.root.path)
        lock = FileLock(str(self.files.paths.folder / RUN_LOCK_NAME), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise StateError(
                f"Another `dreamcontext council run` is driving {self.id}; wait for it to "
                "finish, or stop it and run this again."
            ) from None
        try:
            self._remove_leftover_temps()
            record = begin_run(self.files.paths.folder, within=self.root.path)
            with throttled_submissions(LIVE_REFRESH_S):
                outcome = await self._recording_stops(record)
        finally:
            lock.release()
        return outcome

    async def _recording_stops(self, record: RunRecord) -> RunOutcome:
        """Drive the debate; a stop before the end leaves its reason in run.json."""
        try:
            outcome = await self._drive()
        except RunStopped as stop:
            self._record_stop(record, stop.reason)
            stop.debate_id = stop.debate_id or self.id
            raise
        except ProviderError as exc:
            reason = shorten_at_word(str(exc)).rstrip(".")
            self._record_stop(record, reason)
            raise RunStopped(
                f"{str(exc).rstrip('.')}. Run `dreamcontext council run {self.id}` to resume.",
                reason,
                self.id,
            ) from exc
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._record_stop(record, self.plan.cancelled_as)
            raise
        except BaseException as exc:
            self._record_stop(record, shorten_at_word(str(exc) or type(exc).__name__))
            raise
        if outcome.reason:
            self._record_stop(record, outcome.reason)
        else:
            end_run(self.files.paths.folder)
        return outcome

    def _record_stop(self, record: RunRecord, reason: str) -> None:
        """Write why the run stopped; a failure here must not hide the stop itself."""
        # The folder may be what failed (a full disk): the error the user sees comes first.
        with contextlib.suppress(Exception):
            status = str(self.files.debate().status)
            record_stop(self.files.paths.folder, record, reason, status, within=self.root.path)

    def _remove_leftover_temps(self) -> None:
        """Delete the temps a killed run (or command) left, the in-flight files of its calls
        and the folders a killed `new` was building: a resume is where one is followed up.

        Each folder under the lock its writers take; the live file has none, so its
        folder relies on the pid check alone, as do the in-flight files. An in-flight
        folder that is a link stops the run here, before its first call (LinkOut).
        """
        with self.files.lock():
            remove_leftover_temps(self.files.paths.folder)
        remove_leftover_in_flight(self.files.paths.folder, within=self.root.path)
        with locked(self.root.council, within=self.root.path):
            remove_leftover_temps(self.root.council, recursive=False)
        remove_leftover_staging(self.root.council)  # folders a killed `new` was building
        remove_leftover_temps(self.root.live_file.parent, recursive=False)

    async def _drive(self) -> RunOutcome:
        """Loop over the state machine until the debate completes or a stop is due."""
        self._check_models()
        if self.flags.resynthesize:
            self._synthesizer().reopen()
        try:
            if self.flags.only is not None:
                return await self._answer_only(list(self.flags.only))
            await self._solo_answer()
            while True:
                debate = self.files.debate()
                status = debate.status
                if status.phase == "complete":
                    return self._finish()
                if status.phase == "synthesizing":
                    if not self._synthesis_written():
                        self.progress.note(
                            f"Synthesis: {self._synth_model()} writes the final report."
                        )
                        await self._synthesizer().run()
                    closing.complete_debate(self.root, self.id)
                    continue
                if status.phase == "created":
                    open_round(self.root, self.id, 1)
                    continue
                if status.phase == "running":
                    await self._run_round(status.round)
                    continue
                step = await self._next_step(status.round)
                if step == "interlude":
                    return self._outcome("interlude", self._interlude_message(status.round))
                if step == "synthesis":
                    closing.begin_synthesis(self.root, self.id)
                else:
                    open_round(self.root, self.id, status.round + 1)
        except BudgetReached as stop:
            self.files.append_log(f"Run stopped by budget — {today()}", [str(stop)])
            return self._outcome(
                "budget",
                f"Stopped: {stop}. Run `dreamcontext council run {self.id}` with a higher limit to go on.",
                reason=f"budget: {stop}",
            )

    def _check_models(self) -> None:
        debate = self.files.debate()
        for slug in debate.personas:
            model = self.files.context(slug).model
            if not is_person(model):  # a person's seat calls no model
                parse_model(model or self.default_model)
        for name in (self.seats.check_model, self.seats.synth_model, self.seats.baseline_model):
            if name:
                parse_model(name)

    async def _solo_answer(self) -> None:
        """`--baseline`: the solo answer, once, before the debate is complete."""
        from dreamcontext_council.engine.protocol.baseline import SoloBaseline

        if not self.flags.baseline or self.files.debate().status.phase == "complete":
            return
        solo = SoloBaseline(self.files, self.caller, self._baseline_model(), self._attachments())
        if solo.written():
            return
        self.progress.note(f"Solo answer: {self._baseline_model()} answers the question alone.")
        await solo.run()

    def _baseline_model(self) -> str:
        return self.seats.baseline()

    def _synthesizer(self) -> Synthesizer:
        return Synthesizer(
            self.root,
            self.files,
            self.caller,
            self._synth_model(),
            self.compression,
            self.plan.limits.answer_kb(),
        )

    def _synthesis_written(self) -> bool:
        """Whether this synthesis already wrote its report (a run stopped before completing).

        Told by the round log, not by final-report.md alone: a resynthesis keeps the
        previous report in place until the new one is written.
        """
        log = self.files.log()
        begun = max(log.rfind("\n## Synthesis started"), log.rfind("\n## Resynthesis"), 0)
        return "\n## Synthesis written" in log[begun:] and self.files.paths.final_report.exists()

    def _synth_model(self) -> str:
        return self.seats.synthesis()

    def _check_model(self) -> str:
        return self.seats.check()

    def _round_runner(self) -> RoundRunner:
        return RoundRunner(
            self.root,
            self.files,
            self.caller,
            self.default_model,
            self._attachments(),
            self.plan.limits.answer_kb(),
            self._transcript_budget(),
            self.research,
            self.desk,
            warm=self.plan.flags.warm,
        )

    async def _run_round(self, number: int) -> None:
        result = await self._round_runner().run(number)
        if result.budget:
            raise BudgetReached(result.budget)
        grouped = grouped_reasons(result.failed)
        if not result.answered and not result.skipped and not result.kept:
            # Inside the parentheses a reason's own full stop would double the punctuation.
            reasons = "; ".join(line.rstrip(".") for line in grouped)
            raise RunStopped(
                f"Every persona failed in round {number} ({reasons}). Fix the cause and run "
                f"`dreamcontext council run {self.id}` to resume.",
                f"every persona failed in round {number} ({reasons})",
            )
        for line in grouped:
            self.progress.note(f"Round {number} goes on without {line}")
        # A kept hand-written verdict whose report is still to come does not hold the round.
        unreported = [
            s for s in result.kept if not any(e.round == number for e in self.files.entries(s))
        ]
        end_round(self.root, self.id, number, excused=[*result.failed, *unreported])
        if result.sealed:  # round 1 is closed: the stances kept back while it was sealed
            verdicts = self.files.verdicts().round(number)
            self.progress.note(
                stances_line({s: (v.stance, v.conviction) for s, v in verdicts.items()})
            )

    def _transcript_budget(self) -> int:
        """The rebuttal transcript's budget: the synthesis gate (--gate, else 0.6 × --window)."""
        return transcript_budget(self.compression)

    async def _answer_only(self, slugs: list[str]) -> RunOutcome:
        """`--only`: these personas' pending calls of the running round; the round stays open."""
        number = only_round(self.files, slugs)
        result = await self._round_runner().run(number, only=slugs)
        if result.budget:
            raise BudgetReached(result.budget)
        grouped = grouped_reasons(result.failed)
        for line in grouped:
            self.progress.note(f"Round {number}: no answer from {line}")
        done = [*result.answered, *result.skipped, *result.kept]
        message = f"Round {number} of {self.id}: answered by {', '.join(done) or 'none'}"
        if result.failed:
            message += f"; failed: {', '.join(result.failed)}"
        waiting = missing_reports(self.files, self.files.debate(), number)
        if waiting:
            message += (
                f". Still to answer: {', '.join(waiting)}. Commit, merge their answers, then run "
                f"`dreamcontext council run {self.id}` to go on."
            )
        else:
            message += f". Every persona has answered: run `dreamcontext council run {self.id}`."
        return self._outcome("answered", message)

    def _attachments(self) -> list[dict[str, object]]:
        from dreamcontext_council.engine.prompting.attachments import attachments_for_prompt

        return attachments_for_prompt(self.files)

    async def _next_step(self, number: int) -> str:
        """After round N is complete: another round, an interlude or synthesis."""
        debate = self.files.debate()
        if number >= debate.rounds_planned:
            return "synthesis"
        if number >= 2:
            if self.flags.compact:
                return "synthesis"
            if not await self._check(number):
                return "synthesis"
        if debate.interrupt:
            heading = f"Interlude after round {number}"
            if not any(line.startswith(f"## {heading}") for line in self.files.log().split("\n")):
                self.files.append_log(f"{heading} — {today()}", ["Run paused for the interlude."])
                refresh_live(self.root, self.id, phase="interlude")
                return "interlude"
        return "round"

    async def _check(self, number: int) -> bool:
        """The convergence check after round N (engine/protocol/convergence.py)."""
        return await conv.ask_check(
            self.files,
            self.caller,
            self.progress,
            number,
            check_model=self._check_model(),
            allow_early_stop=self.flags.early_stop,
        )

    def _interlude_message(self, number: int) -> str:
        return (
            f"Paused after round {number} for the interlude. Before going on you can run:\n"
            f'  dreamcontext council inject {self.id} "<fact>"\n'
            f'  dreamcontext council question {self.id} <slug> "<question>"\n'
            f"  dreamcontext council agent create {self.id} <slug> --body ...\n"
            f"  dreamcontext council round extend {self.id}\n"
            f"Then: dreamcontext council run {self.id}"
        )

    def _finish(self) -> RunOutcome:
        debate = self.files.debate()
        message = f"{self.id} is complete: {self.files.paths.final_report}"
        # A new report replaces what an earlier promotion copied, or the doc would go stale.
        rewrite = self.flags.resynthesize and debate.promoted is not None
        if self.flags.promote or rewrite:
            promotion = (
                closing.promote_again(self.root, self.id)
                if rewrite
                else closing.promote(self.root, self.id)
            )
            done = "Promoted again, from the new report," if rewrite else "Promoted"
            message += f"\n{done} to {promotion.path}."
        elif debate.promoted:
            message += f"\nPromoted to {debate.promoted}."
        statement = verdict_statement(self.files.read(self.files.paths.final_report))
        if statement is not None:
            message += f"\nVerdict: {statement.line()}"
        return self._outcome(
            "complete", message, verdict=statement.to_json() if statement else None
        )
