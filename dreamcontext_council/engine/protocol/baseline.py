"""`run --baseline`: before round 1, one model answers the question alone; kept as baseline.md.

The call gets what a round-1 persona gets (question, facts, options, attachments) and the
same answer contract, with no persona. It is booked in usage.jsonl as `(baseline)`; its
`ok` line is appended only once baseline.md is on disk, so a killed run asks again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.engine.model_calls.accounting import (
    BASELINE_CALLER,
    BROKEN,
    with_outcome,
)
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.protocol.contract import ContractError, parse_persona_answer
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.errors import RunStopped
from dreamcontext_council.folder.live import now_iso
from dreamcontext_council.folder.storage import atomic_write_text
from dreamcontext_council.rules.solo import render_solo

PHASE = "baseline"


@dataclass
class SoloBaseline:
    """Asks the solo answer once and writes baseline.md."""

    files: DebateFiles
    caller: Caller
    model: str
    attachments: list[dict[str, object]] = field(default_factory=list)

    def written(self) -> bool:
        return self.files.paths.baseline.exists()

    def material(self) -> prompts.RoundMaterial:
        debate = self.files.debate()
        return prompts.RoundMaterial(
            debate_id=debate.id,
            topic=debate.topic,
            question=debate.section("Question") or debate.topic,
            round=1,
            rounds_planned=1,
            facts=debate.facts(),
            options=debate.options or self.files.verdicts().options,
            personas=[BASELINE_CALLER],
            attachments=list(self.attachments),
        )

    async def run(self) -> None:
        """Ask, repair once if the contract is broken, write baseline.md, then book `ok`."""
        debate = self.files.debate()
        spec = parse_model(self.model)
        prompt = prompts.baseline_prompt(self.material())
        registered, known = debate.options, self.files.verdicts().options
        completion, line = await self.caller.ask(
            spec, prompt, persona=BASELINE_CALLER, round=0, phase=PHASE
        )
        try:
            answer = parse_persona_answer(completion.text, registered, known)
        except ContractError as problem:
            await self.caller.append(with_outcome(line, BROKEN))
            repair = prompts.repair_prompt(prompt, completion.text, str(problem))
            completion, line = await self.caller.ask(
                spec, repair, persona=BASELINE_CALLER, round=0, phase=PHASE
            )
            try:
                answer = parse_persona_answer(completion.text, registered, known)
            except ContractError as again:
                await self.caller.append(with_outcome(line, BROKEN))
                raise RunStopped(
                    f"The solo answer (--baseline) broke the answer contract twice: {again} "
                    f"Run `dreamcontext council run {debate.id}` to ask again, or drop --baseline.",
                    f"the solo answer broke the contract twice: {again}",
                ) from None
        verdict = answer.verdict
        model = f"{completion.provider}:{completion.model}"
        text = render_solo(
            debate.id,
            model,
            verdict.stance,
            verdict.conviction,
            verdict.headline,
            now_iso(),
            f"## Solo answer — {today()}\n\n{answer.body}",
        )
        atomic_write_text(self.files.paths.baseline, text, within=self.files.root.path)
        self.files.append_log(
            f"Solo answer written — {today()}",
            [f"Model: {model}", f"Stance: {verdict.stance} ({verdict.conviction})"],
        )
        await self.caller.append(line)
