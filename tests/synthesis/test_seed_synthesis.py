"""Issue 14, items 4-6: verbatim seats for two voices, a free report structure, promote --to.

Each test runs a real `council run` against the stub server and reads what the
synthesizer was sent, what the round log says and what was written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from stub_server import StubResponse, StubServer

from dreamcontext_council.engine.compression import compress_answer
from dreamcontext_council.folder import frontmatter_io

from .chamber import Chamber, entry_body, request_task
from .council_cli import Council, h2_titles, openai_env, roster_file, section
from .reading import messages, phase_of, seats, sent_answers, synthesis_calls
from .test_compression_in_a_run import SLUGS, run_debate

APPENDIX = "Appendix: per-agent per-round summaries"
FREE_REPORT = f"""## Verdict

Migrate now (A). Confidence: medium.

## What the cutover must prove

The dual write holds for two weeks with no lost session. *— alpha R1*

## {APPENDIX}

### alpha — Round 1
Backs A.

```claims
[{{"claim": "A two-week dual write covers every live session.", "proposer": "alpha", "round": 1, "supporters": [], "challengers": ["beta"], "retracted": false, "research": false}}]
```
"""


def run_free_report(council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path) -> str:
    """A one-round debate whose synthesizer writes FREE_REPORT; returns the debate id."""
    chamber.lines = 0
    chamber.synthesis = lambda _task, _earlier: FREE_REPORT
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS[:2], "openai:gpt-stub"))
    result = council(
        "run", "--topic", "Redis or Postgres?", "--options", "A=Migrate now,B=Stay on Redis",
        "--personas", roster, "--rounds", "1", "--quiet", env=openai_env(stub.openai_url),
    )  # fmt: skip
    assert result.code == 0, result.err
    return council.only_id()


# --- item 4: verbatim seats go to two voices ----------------------------------------------


def test_a_low_gate_seats_two_personas_verbatim_ties_by_roster_order(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.scores = dict.fromkeys(SLUGS, 7)  # every reviewed answer scored the same
    debate_id, _ = run_debate(council, stub, tmp_path, "--rounds", "2", "--gate", "30000")

    seated = seats(council.text(debate_id, "round-log.md"))
    verbatim = [(s.persona, s.round) for s in seated if not s.compressed]
    # The reviewed (round-1) answers of the first two personas in the roster, not one
    # persona's two answers.
    assert verbatim == [("alpha", 1), ("beta", 1)]
    [request] = synthesis_calls(stub.requests)
    sent = sent_answers(messages(request)[1])
    for key in verbatim:
        assert not sent[key].compressed
        assert sent[key].text == entry_body(chamber.answers[key])
    assert sent[("alpha", 2)].compressed


def test_the_round_log_states_the_lines_each_compressed_answer_kept(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.scores = {"alpha": 3, "beta": 5, "gamma": 6, "delta": 9}
    # So low that even the tightest compression leaves the input over the gate.
    debate_id, _ = run_debate(council, stub, tmp_path, "--rounds", "2", "--gate", "5000")

    log = council.text(debate_id, "round-log.md")
    seated = seats(log)
    [request] = synthesis_calls(stub.requests)
    sent = sent_answers(messages(request)[1])
    tightest = set()
    for seat in seated:
        original = entry_body(chamber.answers[(seat.persona, seat.round)])
        read = sent[(seat.persona, seat.round)].text
        if not seat.compressed:
            assert read == original
            continue
        assert seat.lines_kept is not None
        head, tail = seat.lines_kept
        assert read == compress_answer(original, head=head, tail=tail)
        tightest.add(seat.lines_kept)
    assert tightest == {(2, 1)}
    assert (
        "- Still over the gate after compression: code is never cut, the verbatim seats stay "
        "whole, and every compressed answer keeps its first 2 and last 1 lines." in log
    )
    assert "first 15 and last 10" not in log


def test_a_cross_examination_without_a_score_gets_the_single_repair(
    council: Council, chamber: Chamber, tmp_path: Path
) -> None:
    chamber.lines = 0

    def unscored(request_json: dict[str, Any]) -> str | StubResponse:
        answer = chamber(request_json)
        task = request_task(request_json)
        if task.get("phase") == "cross-exam" and not task.get("repair"):
            assert isinstance(answer, str) and re.search(r"^Score: \d+/10$", answer, re.M)
            return re.sub(r"^Score: \d+/10\n", "", answer, flags=re.M)
        return answer

    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS[:3], "openai:gpt-stub"))
    with StubServer(responder=unscored) as stub:
        result = council(
            "run", "--topic", "Redis or Postgres?", "--options", "A=Postgres,B=Redis",
            "--personas", roster, "--rounds", "2", "--quiet", env=openai_env(stub.openai_url),
        )  # fmt: skip
    assert result.code == 0, result.err
    debate_id = council.only_id()
    assert council.status(debate_id) == "complete"

    phases = [phase_of(r) for r in stub.requests]
    cross_exams = [r for r in stub.requests if request_task(r.json).get("phase") == "cross-exam"]
    assert phases.count("repair") == 3  # one per critic, never a second
    for request in cross_exams:
        if request_task(request.json).get("repair"):
            peer = request_task(request.json)["peer"]
            assert (
                f"the answer has no ### Cross-examination of {peer} ending in `Score: N/10`."
                in messages(request)[1]
            )
    reviews = council.json_file(debate_id, "reviews.json")["rounds"]["2"]
    assert sorted(reviews) == SLUGS[:3]
    assert all(isinstance(review["score"], int | float) for review in reviews.values())
    broken = [c for c in council.usage(debate_id) if c.get("outcome") == "broken"]
    assert sorted(c["persona"] for c in broken) == SLUGS[:3]


# --- item 5: the synthesizer is free to structure the report ------------------------------


def test_a_report_of_verdict_custom_section_and_appendix_completes_in_one_call(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    debate_id = run_free_report(council, chamber, stub, tmp_path)

    assert council.status(debate_id) == "complete"
    calls = synthesis_calls(stub.requests)
    assert [phase_of(r) for r in calls] == ["synthesis"]  # no repair call
    body = frontmatter_io.parse(council.text(debate_id, "final-report.md"), "final-report.md")[1]
    # The engine adds only what it renders from the record; nothing stands in for the
    # suggested sections the synthesizer left out.
    assert h2_titles(body) == [
        "Verdict",
        "Claims ledger",
        "Position timeline",
        "What the cutover must prove",
        APPENDIX,
    ]
    assert "did not write this section" not in body
    assert section(body, "What the cutover must prove") == (
        "The dual write holds for two weeks with no lost session. *— alpha R1*"
    )
    # The prompt suggests the middle sections without demanding them.
    system = messages(calls[0])[0]
    assert "Two are required: `## Verdict` first and `## Appendix: per-agent per-round " in system
    assert "structure the report however fits this decision" in system
    assert "in exactly this order" not in system
