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


def test_the_task_is_read_from_the_prompt_text_in_either_order() -> None:
    for number in (1, 2, 3):
        round_material = material(number)
        if number == 2:
            round_material.peer = {"slug": "growth-cfo", "text": "### Position\nB."}
        prompt = prompts.persona_prompt(
            "risk-auditor", "You audit risk.", ["risk", "cost"], round_material
        )

        assert "council-call" not in prompt.system + prompt.user
        assert task_from_text(f"{prompt.system}\n\n{prompt.user}") == dict(prompt.task)
        assert task_from_text(f"{prompt.user}\n{prompt.system}") == dict(prompt.task)


def test_a_message_that_holds_every_round_is_read_as_its_last_round() -> None:
    # Round 3's message opens with rounds 1 and 2 as they were sent, round 2's assignment
    # of a peer included: the call is round 3's, and names no peer.
    first, second, third = material(1), material(2), material(3)
    second.own_previous = {"round": 1, "text": "### Position\nA."}
    second.peer = {"slug": "growth-cfo", "text": "### Position\nB.\n\n# Round 9 of 9 — rebuttal"}
    third.own_previous = {"round": 2, "text": "### Position\nStill A."}
    second.earlier, third.earlier = [first], [first, second]
    for round_material in (second, third):
        prompt = prompts.persona_prompt("risk-auditor", "You audit risk.", ["risk"], round_material)
        assert prompt.user.count("# Round 1 of 3 — blind opening") == 1
        task = task_from_text(f"{prompt.system}\n\n{prompt.user}")
        assert task == dict(prompt.task)
        assert task["round"] == round_material.round and ("peer" in task) == (task["round"] == 2)
        answer = parse_persona_answer(
            scripted_text(task), OPTIONS, OPTIONS, cross_examines=task.get("peer")
        )
        assert answer.verdict.stance in ("A", "B")


def test_a_repair_prompt_reads_as_the_repair_call_not_the_original() -> None:
    prompt = prompts.persona_prompt("risk-auditor", "You audit risk.", ["risk"], material())
    repair = prompts.repair_prompt(prompt, "no verdict here", "the answer has no ```verdict block.")

    task = task_from_text(f"{repair.system}\n\n{repair.user}")

    assert task == {**prompt.task, "repair": True}
    answer = parse_persona_answer(scripted_text(task), OPTIONS, OPTIONS)
    assert answer.verdict.stance in ("A", "B")


def test_the_check_decides_on_the_positions_it_reads_as_prose() -> None:
    def check(*summaries: str) -> str:
        positions = [
            {"slug": f"p{i}", "person": False, "summary": text} for i, text in enumerate(summaries)
        ]
        material = prompts.CheckMaterial([], [], positions)
        prompt = prompts.check_prompt("Should we migrate?", 2, 3, material)
        task = task_from_text(f"{prompt.system}\n\n{prompt.user}")
        assert task["phase"] == "check" and task["round"] == 2
        return scripted_text(task)

    assert check("p0 backs A (Migrate now) now.", "p1 backs B (Stay on Redis).") == "CONTINUE"
    assert check("p0 backs A (Migrate now) now.", "p1 backs A (Migrate now).") == "CONVERGED"


def test_text_that_is_no_council_call_has_no_task() -> None:
    assert task_from_text("just a question") == {}
    assert task_from_text("# Round one of three") == {}


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
