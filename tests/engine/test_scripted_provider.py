"""The scripted provider reads its task from the prompt text when it comes over HTTP or stdin."""

from __future__ import annotations

from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.protocol.contract import parse_persona_answer
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text

OPTIONS = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay on Redis"}]


def material(number: int = 1) -> prompts.RoundMaterial:
    return prompts.RoundMaterial(
        debate_id="council_Test1234",
        topic="Should we migrate?",
        question="Should we migrate?",
        round=number,
        rounds_planned=3,
        facts=[],
        options=OPTIONS,
        personas=["risk-auditor", "growth-cfo"],
    )


def test_task_comes_from_the_council_call_line() -> None:
    prompt = prompts.persona_prompt("risk-auditor", "You audit risk.", ["risk"], material())

    assert task_from_text(prompt.user) == dict(prompt.task)


def test_a_repair_prompt_reads_as_the_repair_call_not_the_original() -> None:
    prompt = prompts.persona_prompt("risk-auditor", "You audit risk.", ["risk"], material())
    repair = prompts.repair_prompt(prompt, "no verdict here", "the answer has no ```verdict block.")

    task = task_from_text(repair.user)

    assert task == {**prompt.task, "repair": True}
    answer = parse_persona_answer(scripted_text(task), OPTIONS, OPTIONS)
    assert answer.verdict.stance in ("A", "B")


def test_text_without_a_call_line_has_no_task() -> None:
    assert task_from_text("just a question") == {}
    assert task_from_text("<!-- council-call {not json} -->") == {}


def test_the_answer_streams_in_paragraphs_that_make_it_whole() -> None:
    import asyncio
    from dataclasses import replace

    from dreamcontext_council.engine.providers.scripted import ScriptedProvider

    pieces: list[str] = []
    prompt = prompts.persona_prompt("risk-auditor", "You audit risk.", ["risk"], material())

    completion = asyncio.run(
        ScriptedProvider(delay_s=0).complete(replace(prompt, on_text=pieces.append), "scripted")
    )

    assert len(pieces) > 3
    assert "".join(pieces) == completion.text
    assert all(piece.endswith("\n\n") for piece in pieces[:-1])
