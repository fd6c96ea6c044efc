"""Issue 14, items 4-6: verbatim seats for two voices, a free report structure, promote --to.

Each test runs a real `council run` against the stub server and reads what the
synthesizer was sent, what the round log says and what was written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from stub_server import StubResponse, StubServer

from dreamcontext_council.engine.prompting.compression import compress_answer
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
    before = set(council.ids())
    result = council(
        "run", "--topic", "Redis or Postgres?", "--options", "A=Migrate now,B=Stay on Redis",
        "--personas", roster, "--rounds", "1", "--quiet", env=openai_env(stub.openai_url),
    )  # fmt: skip
    assert result.code == 0, result.err
    [debate_id] = set(council.ids()) - before
    return debate_id


# --- item 4: verbatim seats go to two voices ----------------------------------------------


def test_a_low_gate_seats_two_personas_verbatim_ties_by_roster_order(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.scores = dict.fromkeys(SLUGS, 7)  # every reviewed answer scored the same
    debate_id, _ = run_debate(council, stub, tmp_path, "--rounds", "2", "--gate", "30000")

    seated = seats(council.text(debate_id, "round-log.md"))
    verbatim = [(s.persona, s.round) for s in seated if not s.compressed]
    # The final (round-2) answers, tested by the critiques: the first persona of the roster
    # and the first dissenter (gamma), not one persona's two answers nor round-1 answers.
    assert verbatim == [("alpha", 2), ("gamma", 2)]
    [request] = synthesis_calls(stub.requests)
    sent = sent_answers(messages(request)[1])
    for key in verbatim:
        assert not sent[key].compressed
        assert sent[key].text == entry_body(chamber.answers[key])
    assert sent[("alpha", 1)].compressed


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


def test_the_dashboard_and_the_exports_show_a_free_report_section_by_section(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    debate_id = run_free_report(council, chamber, stub, tmp_path)

    markdown = council("export", debate_id, "--format", "md", "-o", "-")
    assert markdown.code == 0, markdown.err
    report = markdown.out.split("## Final report\n", 1)[1]
    for title in ("Verdict", "What the cutover must prove", APPENDIX):
        assert f"\n### {title}\n" in report
    exported = council("export", debate_id, "--format", "json", "-o", "-")
    assert exported.code == 0, exported.err
    titles = [s["title"] for s in json.loads(exported.out)["final_report"]["sections"]]
    assert titles == h2_titles(
        frontmatter_io.parse(council.text(debate_id, "final-report.md"), "final-report.md")[1]
    )
    page = council("export", debate_id, "--format", "html", "-o", "-")
    assert page.code == 0, page.err
    cards = re.findall(r'<h3 class="card-title">([^<]+)</h3>', page.out)
    assert cards[0] == "Verdict" and "What the cutover must prove" in cards


# --- item 6: promote --to <knowledge-slug> -------------------------------------------------


def knowledge(council: Council, slug: str) -> str:
    return (council.root / "knowledge" / f"{slug}.md").read_text(encoding="utf-8")


def test_promote_to_writes_the_verdict_and_the_load_bearing_sections_with_a_backlink(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    debate_id = run_free_report(council, chamber, stub, tmp_path)

    result = council.proc("promote", debate_id, "--to", "session-store")

    assert result.code == 0, result.err
    assert result.out == "Promoted to knowledge/session-store.md.\n"
    meta, body = frontmatter_io.parse(knowledge(council, "session-store"), "session-store.md")
    assert meta["source_debate"] == debate_id and meta["type"] == "decision"
    # The sections that exist and carry the decision; the record stays in the debate folder.
    assert h2_titles(body) == ["Verdict", "What the cutover must prove"]
    assert section(body, "Verdict").startswith("Migrate now (A). Confidence: medium.")
    assert (
        f"Debate folder: [`_dream_context/council/{debate_id}/`](../council/{debate_id}/)" in body
    )
    assert (council.root / "knowledge" / f"../council/{debate_id}/debate.md").is_file()
    assert council.meta(debate_id)["promoted_to_knowledge"] == "knowledge/session-store.md"
    made = sorted(p.name for p in (council.root / "knowledge").iterdir())
    assert made == [".gitignore", "session-store.md"]  # the doc, and the ignore of temps

    again = council("promote", debate_id, "--to", "session-store")
    assert again.code == 0, again.err
    assert "Already promoted to knowledge/session-store.md" in again.out


def test_promote_to_refuses_a_doc_another_debate_promoted_unless_forced(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    first = run_free_report(council, chamber, stub, tmp_path)
    assert council("promote", first, "--to", "session-store").code == 0
    second = run_free_report(council, chamber, stub, tmp_path)  # same topic, same root
    before = council.tree()

    refused = council.proc("promote", second, "--to", "session-store")

    assert refused.code != 0
    assert refused.err.strip() == (
        f"Error: Cannot promote {second} to knowledge/session-store.md: that doc was promoted "
        f"from debate {first}; pass --force to overwrite it, or choose another --to slug."
    )
    assert council.tree() == before  # nothing on disk changed

    forced = council.proc("promote", second, "--to", "session-store", "--force")
    assert forced.code == 0, forced.err
    meta, _ = frontmatter_io.parse(knowledge(council, "session-store"), "session-store.md")
    assert meta["source_debate"] == second
    assert council.meta(second)["promoted_to_knowledge"] == "knowledge/session-store.md"


def test_promote_to_refuses_a_slug_that_is_not_one(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    debate_id = run_free_report(council, chamber, stub, tmp_path)
    before = council.tree()

    for bad in ("../debate", "Session Store", "a/b", "", "-x"):
        refused = council("promote", debate_id, "--to", bad)
        assert refused.code != 0, bad
        assert "is not a valid knowledge slug; use lowercase letters" in refused.err
    assert council.tree() == before


def test_promote_without_to_still_writes_the_decision_doc_and_keeps_custom_sections(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    debate_id = run_free_report(council, chamber, stub, tmp_path)

    result = council("promote", debate_id)

    assert result.code == 0, result.err
    assert result.out == "Promoted to knowledge/decision-redis-or-postgres.md.\n"
    body = knowledge(council, "decision-redis-or-postgres")
    assert h2_titles(body) == ["Verdict", "What the cutover must prove"]
    assert "Debate folder:" not in body  # the Node tool's doc, as before
    assert body.rstrip("\n").endswith(
        f"See `_dream_context/council/{debate_id}/final-report.md` for the full record._"
    )


def test_a_resynthesis_rewrites_the_doc_promote_to_wrote(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    debate_id = run_free_report(council, chamber, stub, tmp_path)
    assert council("promote", debate_id, "--to", "session-store").code == 0
    chamber.synthesis = lambda _task, _earlier: FREE_REPORT.replace(
        "What the cutover must prove", "What the rollback must prove"
    )

    again = council("run", debate_id, "--resynthesize", env=openai_env(stub.openai_url))

    assert again.code == 0, again.err
    assert "Promoted again, from the new report, to knowledge/session-store.md." in again.out
    body = knowledge(council, "session-store")
    assert h2_titles(body) == ["Verdict", "What the rollback must prove"]
    made = sorted(p.name for p in (council.root / "knowledge").iterdir())
    assert made == [".gitignore", "session-store.md"]  # the doc, and the ignore of temps
