"""The exchange goes on after the rebuttal: from round 4 a critic reads its target's answer
to its critique and presses or drops each point, and a critique already answered comes
back with its answer, not as new. Read from the prompts a logging provider received."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from stub_server import StubServer, prompt_text

from dreamcontext_council.engine.providers.scripted import scripted_text

from .support import (
    OPTIONS,
    TOPIC,
    Council,
    calls_by,
    openai_env,
    request_task,
    roster_file,
)

SLUGS = ("risk-auditor", "growth-cfo", "platform-lead", "data-steward")
_INDEX = re.compile(r"^- Round 2: (\S+) → (\S+) \(", re.M)


def answer(target: str, critic: str, number: int) -> str:
    return f"ANSWER-{target}-TO-{critic}-R{number}"


def press(critic: str, target: str, number: int) -> str:
    return f"PRESS-{critic}-ON-{target}-R{number}"


def exchanging(request_json: dict[str, Any]) -> Any:
    """Scripted answers whose rebuttals take up the exchanges: round 3 answers each critique
    `partly accepted`, round 4 presses each answer, round 5 answers the press and drops."""
    task = request_task(request_json)
    if task.get("phase") == "check":
        return "CONTINUE"
    text = scripted_text(task)
    if task.get("phase") != "rebuttal":
        return text
    slug, number = task["persona"], task["round"]
    pairs = _INDEX.findall(prompt_text(request_json))
    lines = []
    for critic, target in pairs:
        if target == slug and number == 3:
            lines.append(f"**{critic}**: partly accepted — {answer(slug, critic, 3)}")
        if target == slug and number == 5:
            lines.append(f"**{critic}**: rejected — {answer(slug, critic, 5)}")
        if critic == slug and number == 4:
            lines.append(f"**{target}**: pressed — {press(slug, target, 4)}")
        if critic == slug and number == 5:
            lines.append(f"**{target}**: dropped — the answer holds.")
    # Only the exchange's reactions: no other peer is named.
    head, rest = text.split("### Reactions to peers\n", 1)
    tail = rest[rest.index("\n### ") :]
    return f"{head}### Reactions to peers\n" + "\n".join(lines or ["None this round."]) + tail


def run_five_rounds(council: Council, tmp_path: Path, stub: StubServer) -> str:
    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, "")),
        "--rounds",
        "5",
        env=openai_env(stub.openai_url),
    )
    assert result.code == 0, result.err
    return result.last_line


def pairs_of(council: Council, debate_id: str) -> dict[str, str]:
    return {str(c): str(t) for c, t in council.meta(debate_id)["cross_examination"].items()}


def test_from_round_4_a_critic_reads_its_targets_answer_and_presses_or_drops(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=exchanging) as stub:
        debate_id = run_five_rounds(council, tmp_path, stub)
        calls = calls_by(stub.requests)

    pairs = pairs_of(council, debate_id)
    for critic, target in pairs.items():
        [round_3] = calls[(critic, 3, "rebuttal")]
        assert "## Answers to your critiques" not in round_3  # nothing answered yet
        [seen] = calls[(critic, 4, "rebuttal")]
        part = seen[seen.index("## Answers to your critiques") :]
        assert f"### Your critique of {target}, round 2 — {target} answered in round 3" in part
        assert f"{target}'s answer, round 3 (partly accepted):" in part
        assert answer(target, critic, 3) in part
        assert "pressed — <the point" in part and "dropped — <why the answer holds>" in part
        assert f": yours; {target} answered it in round 3, below" in seen
        # What the round-4 answer adds, in this round's part of the message.
        assert "Then each answer to your own critique" in part


def test_a_critique_already_answered_comes_back_with_its_answer_not_as_new(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=exchanging) as stub:
        debate_id = run_five_rounds(council, tmp_path, stub)
        calls = calls_by(stub.requests)

    for critic, target in pairs_of(council, debate_id).items():
        [round_3] = calls[(target, 3, "rebuttal")]
        assert f"### From {critic}, round 2" in round_3 and "— AIMED AT YOU" in round_3
        [message] = calls[(target, 4, "rebuttal")]
        # Round 3's part stays as it was sent; round 4's own part follows its title.
        assert message.startswith(round_3)
        seen = message[message.index("# Round 4 of 5 — rebuttal") :]
        critiques = seen[seen.index("## Critiques aimed at you") :]
        assert "AIMED AT YOU" not in seen
        assert f"### From {critic}, round 2 (score " in critiques
        assert "— answered by you in round 3\n" in critiques
        assert f"Your answer, round 3 (partly accepted):\n\n**{critic}**: partly accepted" in seen
        assert "You have answered every critique aimed at you" in critiques
        assert "aimed at you, answered by you in round 3; below with your answer" in seen
        # Round 5: the critic pressed in round 4, so the critique is the target's to answer again.
        [seen] = calls[(target, 5, "rebuttal")]
        assert f"{critic} pressed it in round 4: answer again" in seen
        assert f"{critic}'s reply to it, round 4 (pressed):" in seen
        assert press(critic, target, 4) in seen
        assert "partly accepted — <what holds and what does not>" in seen


def test_the_check_counts_a_partly_accepted_critique_as_answered_and_a_press_as_open(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=exchanging) as stub:
        debate_id = run_five_rounds(council, tmp_path, stub)
        calls = calls_by(stub.requests)

    pairs = pairs_of(council, debate_id)
    [after_3] = calls[("orchestrator", 3, "check")]
    assert "Every critique has been answered by its target." in after_3
    [after_4] = calls[("orchestrator", 4, "check")]
    for critic, target in pairs.items():
        line = f"- {critic} → {target} (round 2): answered, and pressed again in round 4"
        assert line in after_4
    # The round-4 answers hold the presses, read back as the critics wrote them.
    for critic, target in pairs.items():
        assert press(critic, target, 4) in council.text(debate_id, f"{critic}/report.md")


def test_reactions_are_read_as_accepted_partly_accepted_rejected_pressed_or_dropped() -> None:
    from dreamcontext_council.rules.reactions import (
        DROPPED,
        PARTLY_ACCEPTED,
        PRESSED,
        REJECTED,
        reaction_to,
    )

    reactions = "\n".join(
        [
            "**risk-auditor**: partly accepted — the cost holds, the latency claim does not.",
            "  it still needs a number.",
            "- **growth-cfo**: Rejected: the rollback is shown in R1.",
            "**platform-lead:** pressed — the p99 stays unmeasured.",
            "",
            "**data-steward**: dropped — the answer holds.",
            "**data-steward-two**: accepted — fine.",
            "",
            "As growth-cfo-lead said, nothing else.",
            "I agree with platform-lead on cost.",
        ]
    )

    def word(slug: str, text: str = reactions) -> str | None:
        found = reaction_to(text, slug)
        assert found is not None, slug
        return found.word

    assert word("risk-auditor") == PARTLY_ACCEPTED
    assert word("growth-cfo") == REJECTED
    assert word("platform-lead") == PRESSED
    assert word("data-steward") == DROPPED
    assert word("growth-cfo", "**growth-cfo**: partially accepted — x") == PARTLY_ACCEPTED
    partly = reaction_to(reactions, "risk-auditor")
    assert partly is not None and partly.text.endswith("it still needs a number.")
    pressed = reaction_to(reactions, "platform-lead")
    assert pressed is not None and "I agree with platform-lead on cost." in pressed.text
    dropped = reaction_to(reactions, "data-steward")
    assert dropped is not None and "data-steward-two" not in dropped.text  # another persona
    assert reaction_to(reactions, "user-advocate") is None
    assert reaction_to(None, "user-advocate") is None
    # Named without a word: taken up, and the word is unknown.
    assert word("user-advocate", "user-advocate has a point.") is None
    assert word("user-advocate", "I read **user-advocate** closely.") is None
