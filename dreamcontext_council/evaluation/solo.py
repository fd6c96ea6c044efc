"""The single calls of an eval: the solo answer and the self-consistency samples.

Each is one call of the persona answer contract with no persona (the question and its
options, nothing else), booked in the question's usage.jsonl as `(baseline)` or
`(self-consistency)` and kept in the eval folder. They are scored as they come, with no
repair: an answer that breaks the contract counts as wrong, unlike `run --baseline`.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.accounting import BASELINE_CALLER
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.protocol.contract import ContractError, parse_persona_answer
from dreamcontext_council.engine.providers.base import Prompt
from dreamcontext_council.engine.providers.models import ModelSpec
from dreamcontext_council.folder.storage import atomic_write_text
from dreamcontext_council.rules.eval_set import EvalQuestion

SAMPLE_CALLER = "(self-consistency)"
SOLO_PERSONA = (
    "You answer the question alone, with no council. Weigh it carefully and give your best answer."
)


def solo_prompt(debate_id: str, question: EvalQuestion, caller_name: str, sample: int) -> Prompt:
    """The persona answer contract with no persona: the question, its options, nothing else."""
    material = prompts.RoundMaterial(
        debate_id=debate_id,
        topic=question.question,
        question=question.question,
        round=1,
        rounds_planned=1,
        facts=[],
        options=question.options,
        personas=[caller_name],
    )
    prompt = prompts.persona_prompt(caller_name, SOLO_PERSONA, ["the question"], material)
    if not sample:
        return prompt
    # Each sample says its number, so a program that reads the prompt can vary it.
    return replace(
        prompt,
        user=f"{prompt.user}\n\nSample {sample}: answer on your own.",
        task={**prompt.task, "sample": sample},
    )


def stance_of(text: str, question: EvalQuestion) -> str | None:
    """The stance an answer's verdict block names, as written; None when it breaks the contract."""
    try:
        answer = parse_persona_answer(text, question.options, [])
    except ContractError:
        return None
    return answer.verdict.stance if question.options else answer.verdict.stance_text


async def single_answer(
    files: DebateFiles,
    path: Path,
    question: EvalQuestion,
    spec: ModelSpec,
    caller: Caller,
    *,
    who: str,
    sample: int = 0,
) -> None:
    """One call answering the question alone, saved to `path`; nothing when it is saved.

    The solo answer and each self-consistency sample: scored as they come, with no repair
    (an answer that breaks the contract counts as wrong), unlike `run --baseline`.
    """
    if path.is_file():
        return
    prompt = solo_prompt(files.id, question, who, sample)
    completion, line = await caller.ask(
        spec,
        prompt,
        persona=who,
        round=0,
        phase="baseline" if who == BASELINE_CALLER else "self-consistency",
    )
    await caller.save(
        functools.partial(
            atomic_write_text,
            path,
            completion.text.rstrip() + "\n",
            within=files.root.path,
        ),
        line,
    )
