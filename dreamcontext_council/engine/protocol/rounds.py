"""Running one round: every persona that has not answered yet, at once, through the contract."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from dreamcontext_council.actions import received, submissions
from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.rounds import participants
from dreamcontext_council.actions.sealed import round_one_sealed_in
from dreamcontext_council.engine.model_calls.accounting import (
    BROKEN,
    DISCARDED,
    BudgetReached,
    with_outcome,
)
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.model_calls.disk_queue import DiskQueue
from dreamcontext_council.engine.prompting import prompts, transcript
from dreamcontext_council.engine.prompting.reviews import record_reviews
from dreamcontext_council.engine.protocol.answer_cap import (
    DEFAULT_MAX_ANSWER_KB,
    CappedAnswer,
    cap_answer,
)
from dreamcontext_council.engine.protocol.contract import (
    ContractError,
    PersonaAnswer,
    parse_persona_answer,
)
from dreamcontext_council.engine.protocol.material import round_material
from dreamcontext_council.engine.protocol.pairing import derangement
from dreamcontext_council.engine.protocol.seat_watch import SeatDesk, answer_on_disk
from dreamcontext_council.engine.protocol.warming import Warming, round_warming
from dreamcontext_council.engine.providers.base import Completion, Prompt
from dreamcontext_council.engine.providers.models import ModelSpec, parse_model
from dreamcontext_council.errors import CouncilError, LinkOut
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.safe_write import folders_ready
from dreamcontext_council.folder.storage import atomic_write_text
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.persona import PersonaContext
from dreamcontext_council.rules.reviews import (
    entry_reviews,
    recorded_pairs,
)
from dreamcontext_council.rules.sealing import SEALED, SEALED_ROUND
from dreamcontext_council.rules.seats import is_person
from dreamcontext_council.rules.verdicts import Verdict, Verdicts
from dreamcontext_council.views.failures import shorten_at_word

if TYPE_CHECKING:  # the MCP client is loaded only by a run with research tools
    from dreamcontext_council.engine.research.session import ResearchSession

KEPT_DETAIL = "hand-written entry kept; the model's answer was not saved"


@dataclass
class RoundResult:
    answered: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    """Personas whose hand-written verdict or entry was kept over the model's answer."""
    skipped: list[str] = field(default_factory=list)
    budget: str | None = None
    sealed: bool = False
    """Round 1 began sealed for a person's seat: its stances were not shown as they landed."""


def cross_exam_pairs(files: DebateFiles, debate: Debate, roster: list[str]) -> dict[str, str]:
    """critic → peer for round 2: the pairs debate.md records, else those the seed gives.

    Only personas with a round-1 answer are paired: one that failed round 1 or joined
    at the interlude has nothing to be critiqued on. A debate with no seed (one the Node
    tool started) has no cross-examination: it keeps its own protocol.
    """
    recorded = recorded_pairs(debate.meta)
    if recorded:
        return recorded
    if not debate.meta.get("seed"):
        return {}
    answered = [s for s in roster if any(e.round == 1 for e in files.entries(s))]
    return derangement(answered, int(debate.meta["seed"]))


def scored_reviews(
    files: DebateFiles, pairs: dict[str, str]
) -> dict[str, tuple[str, float | None]]:
    """critic → (peer, the `Score: N/10` of its round-2 `### Cross-examination`), for each
    critic with a round-2 entry: what reviews.json records, from `run` or by hand alike."""
    round_two = {c: next((e for e in files.entries(c) if e.round == 2), None) for c in pairs}
    return entry_reviews(pairs, round_two)


@dataclass
class RoundRunner:
    """Runs the pending personas of one round and writes their answers with library calls."""

    root: Root
    files: DebateFiles
    caller: Caller
    default_model: str
    attachments: list[dict[str, object]] = field(default_factory=list)
    max_answer_kb: int = DEFAULT_MAX_ANSWER_KB
    transcript_budget: int = transcript.DEFAULT_BUDGET_CHARS
    """Characters of the round-3+ transcript over which it is compressed."""
    research: ResearchSession | None = None
    """The run's research tools (`run --tools`), offered to every persona turn."""
    desk: SeatDesk | None = None
    """Where a person's seat is waited for (`run` gives it: engine/protocol/person_seat.py)."""
    warm: bool = True
    """Round 1's warming (engine/protocol/warming.py); `run --no-warm` turns it off."""
    # Answers are saved in arrival order without blocking the event loop, and never wait
    # on each other's file lock.
    _writer: DiskQueue = field(default_factory=DiskQueue, init=False, repr=False)
    _pairing: dict[str, str] | None = field(default=None, init=False, repr=False)
    _sealed: bool = field(default=False, init=False, repr=False)  # see RoundResult.sealed

    def model_for(self, context: PersonaContext) -> ModelSpec:
        return parse_model(context.model or self.default_model)

    def material(
        self,
        debate: Debate,
        slug: str,
        number: int,
        roster: list[str],
        context: PersonaContext,
        verdicts: Verdicts,
    ) -> prompts.RoundMaterial:
        """What the persona sees this round; `verdicts` as they stood when the round began."""
        pairs = self._pairs(debate, participants(self.files, debate, 2)) if number >= 2 else {}
        return round_material(
            self.files,
            debate,
            slug,
            number,
            roster,
            context,
            verdicts,
            attachments=self.attachments,
            transcript_budget=self.transcript_budget,
            pairs=pairs,
        )

    def _pairs(self, debate: Debate, roster: list[str]) -> dict[str, str]:
        if self._pairing is None:
            self._pairing = cross_exam_pairs(self.files, debate, roster)
        return self._pairing

    async def run(self, number: int, only: Collection[str] | None = None) -> RoundResult:
        """Ask every persona of the round with no answer on disk (only those in `only`)."""
        debate = self.files.debate()
        roster = participants(self.files, debate, number)
        result = RoundResult()
        pending = []
        for slug in roster:
            if only is not None and slug not in only:
                continue  # answered on another machine
            if answer_on_disk(self.files, slug, number):
                result.skipped.append(slug)  # already on disk: never asked again
                submissions.recount_entries(self.root, debate.id, slug)
            else:
                pending.append(slug)
        self.caller.progress.round_started(
            number,
            prompts.PHASE_TITLES[prompts.phase_of(number)],
            roster if only is None else [s for s in roster if s in only],
        )
        # A person's seat answers round 1 blind: no stance, and no text as it arrives.
        result.sealed = self._sealed = number == SEALED_ROUND and round_one_sealed_in(self.files)
        self.caller.progress.seal_text(roster if self._sealed else ())
        for slug in result.skipped:
            self.caller.progress.persona(slug, "done", detail="on disk")
        verdicts = self.files.verdicts()  # read once: the round's personas share it
        materials = {
            slug: self._material_or_error(debate, slug, number, roster, verdicts)
            for slug in pending
        }
        self._log_transcripts(number, materials)
        warming = round_warming(number, materials, self.files, self.model_for, enabled=self.warm)
        outcomes = await asyncio.gather(
            *(
                self._warmed(warming, debate, slug, number, materials[slug], verdicts)
                for slug in pending
            ),
            return_exceptions=True,
        )
        for slug, outcome in zip(pending, outcomes, strict=True):
            if outcome is True:
                result.answered.append(slug)
            elif outcome is False:
                result.kept.append(slug)
            elif isinstance(outcome, BudgetReached):
                result.budget = str(outcome)
            elif isinstance(outcome, LinkOut):
                raise outcome  # the folder, not the persona: nothing more is written
            elif isinstance(outcome, CouncilError | ContractError):
                result.failed[slug] = str(outcome)
            elif isinstance(outcome, BaseException):
                raise outcome
        if number == 2 and only is None:
            # One write for the round, also for answers a stopped run left on disk; with
            # `only`, the run that goes on from the merged answers writes it.
            self._record_reviews(debate, roster)
        for slug, reason in result.failed.items():
            self.files.append_log(
                f"Persona failed — {slug} in round {number} — {today()}", [reason]
            )
        return result

    async def _warmed(
        self,
        warming: Warming,
        debate: Debate,
        slug: str,
        number: int,
        material: prompts.RoundMaterial | CouncilError,
        verdicts: Verdicts,
    ) -> bool:
        """`_persona` once its lead's answer has begun; a lead tells its followers when its
        own has (or its call ended)."""
        try:
            await warming.wait(slug)
            return await self._persona(
                debate, slug, number, material, verdicts, began=warming.began(slug)
            )
        finally:
            warming.done(slug)

    def _material_or_error(
        self, debate: Debate, slug: str, number: int, roster: list[str], verdicts: Verdicts
    ) -> prompts.RoundMaterial | CouncilError:
        """What the persona sees, or why it cannot be read (the persona then fails alone)."""
        try:
            context = self.files.context(slug)
            return self.material(debate, slug, number, roster, context, verdicts)
        except CouncilError as exc:
            return exc

    def _log_transcripts(
        self, number: int, materials: dict[str, prompts.RoundMaterial | CouncilError]
    ) -> None:
        """One round-log entry naming every transcript compressed to fit its budget."""
        lines = [
            m.transcript_log
            for m in materials.values()
            if isinstance(m, prompts.RoundMaterial) and m.transcript_log
        ]
        if lines and not any(
            line.startswith(f"## Round {number} transcript compressed")
            for line in self.files.log().split("\n")
        ):
            self.files.append_log(f"Round {number} transcript compressed — {today()}", lines)

    async def _persona(
        self,
        debate: Debate,
        slug: str,
        number: int,
        material: prompts.RoundMaterial | CouncilError,
        verdicts: Verdicts,
        began: Callable[[str], None] | None = None,
    ) -> bool:
        """Ask one persona and save its answer; False when a hand-written entry was kept.
        `began` hears the first ask's text as it arrives (round 1's warming)."""
        progress = self.caller.progress
        if isinstance(material, CouncilError):
            progress.persona(slug, "failed", detail=shorten_at_word(str(material), 80))
            raise material
        context = self.files.context(slug)
        if is_person(context.model):
            return await self._person(slug, number, material)
        spec = self.model_for(context)
        tools = self.research.toolbox(slug, number) if self.research else None
        prompt = prompts.persona_prompt(
            slug, context.persona_text, context.aspects, material, tools
        )
        asked = replace(prompt, on_text=began) if began else prompt
        phase = prompts.phase_of(number)
        # A cross-examination is scored, and an answer without its score is repaired.
        peer = str(material.peer["slug"]) if material.peer else None
        progress.persona(slug, "thinking")
        try:
            await self._record_received(slug, number, material, phase, prompt)
            completion, usage_line = await self.caller.ask(
                spec, asked, persona=slug, round=number, phase=phase
            )
            tokens = completion.usage.output_tokens
            registered, known = debate.options, verdicts.options
            capped = self._cap(completion, slug, number)
            try:
                answer = parse_persona_answer(capped.text, registered, known, cross_examines=peer)
            except ContractError as problem:
                await self.caller.append(with_outcome(usage_line, BROKEN))
                repair = prompts.repair_prompt(prompt, capped.text, str(problem))
                await self._record_received(slug, number, None, "repair", repair)
                completion, usage_line = await self.caller.ask(
                    spec, repair, persona=slug, round=number, phase="repair"
                )
                tokens += completion.usage.output_tokens
                capped = self._cap(completion, slug, number)
                try:
                    answer = parse_persona_answer(
                        capped.text, registered, self.files.verdicts().options, cross_examines=peer
                    )
                except ContractError as again:
                    await self.caller.append(with_outcome(usage_line, BROKEN))
                    raise ContractError(f"answer broke the contract twice: {again}") from None
        except (CouncilError, ContractError) as exc:
            progress.persona(slug, "failed", detail=shorten_at_word(str(exc), 80))
            raise
        except BudgetReached:
            progress.persona(slug, "skipped", detail="budget")
            raise
        # File writes block (locks, fsync): off the event loop, so the calls still in
        # flight are read, timed and timed out as they arrive.
        # The whole answer is kept beside the report when the report holds less of it.
        raw = completion.text if capped.truncated or answer.trimmed else None
        before = verdicts.round(number).get(slug)
        save = functools.partial(
            self._save_answer, debate, slug, number, answer, usage_line, before, raw
        )
        saved = await self._writer.run(save)
        if not saved:
            progress.persona(slug, "kept", tokens=tokens, detail=KEPT_DETAIL)
            return False
        verdict = answer.verdict
        shown = SEALED if self._sealed else f"{verdict.stance} {verdict.conviction}"
        progress.persona(slug, "done", tokens=tokens, detail=shown)
        return True

    async def _person(self, slug: str, number: int, material: prompts.RoundMaterial) -> bool:
        """A person's seat: no model is asked; its entry is taken from the folder or waited
        for (engine/protocol/person_seat.py). The critiques aimed at it go into its context
        file, as for any persona; no prompt is recorded, as none is sent."""
        if self.desk is None:
            raise CouncilError(f"{slug} is a person's seat, and this run cannot wait for one.")
        await self._writer.run(
            functools.partial(
                received.record_critiques, self.files, slug, number, material.critiques
            )
        )
        peer = str(material.peer["slug"]) if material.peer else None
        return await self.desk.answer(slug, number, peer)

    async def _record_received(
        self,
        slug: str,
        number: int,
        material: prompts.RoundMaterial | None,
        phase: str,
        prompt: Prompt,
    ) -> None:
        """Before the call: the critiques aimed at the persona into its context file (as the
        panels and directives already are) and the prompt into `prompts/round-N.json`."""

        def write() -> None:
            if material is not None:
                received.record_critiques(self.files, slug, number, material.critiques)
            sent = received.SentPrompt(phase, prompt.system, prompt.user)
            received.record_prompt(self.files, slug, number, sent, first=material is not None)

        await self._writer.run(write)

    def _save_answer(
        self,
        debate: Debate,
        slug: str,
        number: int,
        answer: PersonaAnswer,
        usage_line: str,
        verdict_before: Verdict | None = None,
        raw: str | None = None,
    ) -> bool:
        """Write the answer with the library calls a persona makes by hand (verdict and
        report, in one step), then its usage line: a rerun asks again exactly the answers
        not on disk. False when a person recorded this round's verdict or entry while the
        model was answering (a verdict other than `verdict_before`, the one the round began
        with): theirs is kept, the answer is not saved, and both are logged.
        `raw` is the whole answer when the report holds less of it (cut to the size cap, or
        chatter around the sections left out), kept beside the report."""
        verdict = answer.verdict
        try:
            with self.files.lock():
                kept_at = self.files.persona_paths(slug).raw_answer(number)
                if raw is not None:  # a `raw` link out stops the run before the answer is saved
                    folders_ready(kept_at, self.root.path)
                saved = submissions.record_answer(
                    self.root,
                    debate.id,
                    slug,
                    number,
                    stance=verdict.stance_text or verdict.stance,  # a new option keeps its label
                    conviction=verdict.conviction,
                    headline=verdict.headline,
                    concession=verdict.concession,
                    body=answer.body,
                    verdict_before=verdict_before,
                )
                if saved and raw is not None:
                    atomic_write_text(kept_at, raw, within=self.root.path)
        except BaseException as exc:
            # Paid for but not on disk (a full disk): not `ok`, so a rerun asks again.
            failed = with_outcome(usage_line, "failed", f"the answer could not be saved: {exc}")
            self.caller.ledger.append(failed)
            raise
        if not saved:
            self.caller.ledger.append(with_outcome(usage_line, DISCARDED, KEPT_DETAIL))
            self.files.append_log(
                f"Hand-written entry kept — {slug} in round {number} — {today()}",
                [
                    f"A verdict or report for {slug} in round {number} was recorded by hand "
                    "while the model was answering.",
                    "The hand-written entry was kept; the model's answer was not saved.",
                ],
            )
            return False
        self.caller.ledger.append(usage_line)
        return True

    def _cap(self, completion: Completion, slug: str, number: int) -> CappedAnswer:
        """The answer cut to --max-answer-kb; the whole one (what was read of it, when
        reading stopped at its budget) goes to `<slug>/raw/round-N.md`."""
        kept_at = f"{slug}/raw/round-{number}.md"
        return cap_answer(
            completion.text,
            self.max_answer_kb,
            keep_block="verdict",
            kept_at=kept_at,
            read_whole=not completion.cut,
        )

    def _record_reviews(self, debate: Debate, roster: list[str]) -> None:
        """Each critic's score from its round-2 entry into reviews.json (same values on a rerun)."""
        record_reviews(self.files, 2, scored_reviews(self.files, self._pairs(debate, roster)))
