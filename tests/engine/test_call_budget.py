"""The gate counts everything a call reads: a grounded debate's attachments, the system
prompt and the records take their share of it before the transcript or the answers do."""

from __future__ import annotations

import re
from pathlib import Path

from stub_server import StubServer, prompt_text

from .support import Council, calls_by, request_task
from .test_seed_protocol import marked_answers, run_debate

GATE = 30_000


def design_doc(chars: int) -> str:
    lines = ["# Cache design", ""]
    n = 0
    while sum(len(line) + 1 for line in lines) < chars:
        lines.append(
            f"Line {n}: the write-through cache keeps session {n} warm in front of Postgres."
        )
        n += 1
    return "\n".join(lines) + "\n"


def test_attachments_count_against_the_rebuttal_and_synthesis_budgets(
    council: Council, tmp_path: Path
) -> None:
    design = tmp_path / "design.md"
    design.write_text(design_doc(9_000), encoding="utf-8")
    with StubServer(responder=marked_answers("CONTINUE", pad=60)) as stub:
        result = run_debate(
            council, tmp_path, stub, "--attach", str(design), "--rounds", "3", "--gate", str(GATE)
        )
        calls = calls_by(stub.requests)
        [synthesis] = [
            prompt_text(r.json)
            for r in stub.requests
            if request_task(r.json).get("phase") == "synthesis"
        ]

    debate_id = result.last_line
    log = council.log(debate_id)
    rebuttals = [
        text
        for (_slug, number, phase), texts in calls.items()
        if number == 3 and phase == "rebuttal"
        for text in texts
    ]
    assert len(rebuttals) == 4
    for text in rebuttals:
        assert design.read_text(encoding="utf-8") in text  # the attachment, whole
        assert len(text) - 1 <= GATE  # system, "\n", user
    # The rest of each rebuttal prompt (the attachment first of all) is taken off its budget.
    taken = [int(n.replace(",", "")) for n in re.findall(r"the 30,000 gate less ([\d,]+) for", log)]
    assert len(taken) == 4 and all(n > 9_000 for n in taken)
    # The synthesizer's prompt holds the attachment too, and stays within the gate.
    assert design.read_text(encoding="utf-8") in synthesis
    assert len(synthesis) - 1 <= GATE
    [reads] = re.findall(
        r"- Gate: 30,000 characters; the rest of the prompt .*? reads ([\d,]+),", log
    )
    assert int(reads.replace(",", "")) > 9_000
