"""The protocol rules the NiraNexus Council seed sets, read from the prompts a logging
provider received: what the convergence check reads and who decides, what a rebuttal
round reads (compressed over its budget), and compact grounded debates."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stub_server import StubServer

from dreamcontext_council.engine.protocol.convergence import exchange_points
from dreamcontext_council.engine.providers.scripted import scripted_text

from .support import (
    OPTIONS,
    TOPIC,
    Council,
    Result,
    calls_by,
    openai_env,
    request_task,
    roster_file,
)

SLUGS = ("risk-auditor", "growth-cfo", "platform-lead", "data-steward")
GATE = "21000"
CODE = "```python\ndef rollback(plan):\n    return plan.undo()  # kept whole\n```"


def perspective(slug: str, number: int) -> str:
    return f"PERSPECTIVE-{slug}-R{number}"


def gap(critic: str, peer: str) -> str:
    return f"GAP-{critic}-ON-{peer}"


def marked_answers(check: str = "CONTINUE", pad: int = 0) -> Callable[[dict[str, Any]], Any]:
    """Scripted answers with a marker in each executive summary and each cross-examination,
    `pad` filler lines and a code block in each answer; the check answers `check`."""

    def responder(request_json: dict[str, Any]) -> Any:
        task = request_task(request_json)
        if task.get("phase") == "check":
            return check
        text = scripted_text(task)
        if task.get("phase") not in ("opening", "cross-exam", "rebuttal"):
            return text
        slug, number = task["persona"], task["round"]
        text = text.replace(
            "### Executive Summary\n", f"### Executive Summary\n{perspective(slug, number)}: ", 1
        )
        if task.get("peer"):
            text = text.replace(
                "### Cross-examination\n",
                f"### Cross-examination\n- {gap(slug, task['peer'])}: the rollback plan is missing.\n",
                1,
            )
        filler = "\n".join(f"Filler {i} from {slug} in round {number}." for i in range(pad))
        padding = f"\n{filler}\n\n{CODE}\n" if pad else ""
        return text.replace("### Reactions to peers", f"{padding}\n### Reactions to peers", 1)

    return responder


def run_debate(
    council: Council, tmp_path: Path, stub: StubServer, *args: str, slugs: tuple[str, ...] = SLUGS
) -> Result:
    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster_file(tmp_path / "roster.json", dict.fromkeys(slugs, "")),
        *args,
        env=openai_env(stub.openai_url),
    )
    assert result.code == 0, result.err
    return result


def reviews(council: Council, debate_id: str) -> dict[str, dict[str, Any]]:
    """critic → {target, score} of round 2."""
    data = json.loads(council.text(debate_id, "reviews.json"))
    return dict(data["rounds"]["2"])


# -- item 1: the convergence check ---------------------------------------------------


def test_the_check_reads_every_round_1_perspective_and_each_round_2_exchange(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=marked_answers("CONVERGED")) as stub:
        result = run_debate(council, tmp_path, stub, "--rounds", "3")
        calls = calls_by(stub.requests)

    [seen] = calls[("orchestrator", 2, "check")]
    for slug in SLUGS:
        assert perspective(slug, 1) in seen
    exchanges = reviews(council, result.last_line)
    assert set(exchanges) == set(SLUGS)
    for critic, review in exchanges.items():
        target = review["target"]
        assert f"### {critic} → {target} — {review['score']:g}/10" in seen
        assert f"- {gap(critic, target)}: the rollback plan is missing." in seen
    # The round-2 positions are there too, and the answer decided.
    assert all(perspective(slug, 2) in seen for slug in SLUGS)
    assert "## Round 3 started" not in council.log(result.last_line)


def test_the_check_model_decides_even_when_the_council_agrees(
    council: Council, tmp_path: Path
) -> None:
    # Two scripted personas never dissent: 100% convergence in rounds 1 and 2.
    with StubServer(responder=marked_answers("CONTINUE")) as stub:
        result = run_debate(
            council, tmp_path, stub, "--rounds", "3", slugs=("risk-auditor", "growth-cfo")
        )
        calls = calls_by(stub.requests)

    assert len(calls[("orchestrator", 2, "check")]) == 1
    log = council.log(result.last_line)
    assert "## Convergence check after round 2 — CONTINUE" in log
    assert "Early stop" not in log
    assert "## Round 3 started" in log
    assert council.meta(result.last_line)["current_round"] == 3


def test_exchange_points_name_the_critique_without_its_score() -> None:
    critique = "\n".join(
        [
            "**growth-cfo** assumes the migration is free.",
            "",
            "- It leaves out the rollback cost.",
            "```sql",
            "SELECT 1;",
            "```",
            "Score: 4/10",
        ]
    )
    assert exchange_points(critique) == [
        "growth-cfo assumes the migration is free.",
        "It leaves out the rollback cost.",
    ]
    many = "\n".join(f"- point {i}" for i in range(8))
    assert exchange_points(many)[-1] == "(and 3 more lines)"


# -- item 2: the rebuttal reads the full transcript ------------------------------------


def test_each_rebuttal_reads_the_whole_debate_with_its_critiques_marked(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=marked_answers("CONTINUE")) as stub:
        result = run_debate(council, tmp_path, stub, "--rounds", "3")
        calls = calls_by(stub.requests)

    exchanges = reviews(council, result.last_line)
    for slug in SLUGS:
        [seen] = calls[(slug, 3, "rebuttal")]
        # Every answer, whole, once, before this round's title: round 2's message (its own
        # round-1 answer, its peer's), then its own round-2 answer, then the peers' answers
        # not read yet, round by round: the round-2 answers hold every cross-examination.
        title = seen.index("# Round 3 of 3 — rebuttal")
        assert seen.index("# Round 2 of 3 — cross-examination") < title
        second = seen.index("### Round 2: cross-examination")
        for peer in SLUGS:
            if peer == slug:
                continue
            assert f'<peer-answer persona="{peer}" round="1">' in seen
            assert f'<peer-answer persona="{peer}" round="2">' in seen
            assert second < seen.index(perspective(peer, 2)) < title
            target = exchanges[peer]["target"]
            assert f"- {gap(peer, target)}: the rollback plan is missing." in seen
        assert 'latest="yes"' not in seen
        assert seen.index('<your-answer round="1">') < seen.index('<your-answer round="2">')
        assert seen.index('<your-answer round="2">') < second < title
        assert seen.count(perspective(slug, 1)) == 1
        assert seen.count(perspective(slug, 2)) == 1  # its own answer once, in its round
        own = title
        # The critiques aimed at it, marked, in full in this round's part.
        aimed = [c for c, r in exchanges.items() if r["target"] == slug]
        assert aimed
        heading = seen.index("## Critiques aimed at you")
        assert heading > own
        for critic in aimed:
            assert f"Round 2: {critic} → {slug} (" in seen
            assert f"### From {critic}, round 2" in seen
            assert seen.rindex(gap(critic, slug)) > heading
        assert "accepted — <reason>" in seen and "rejected — <reason>" in seen
        # No count of stances: the debater reads arguments and critiques.
        assert "## Where the council stood" not in seen
    assert "transcript compressed" not in council.log(result.last_line)


def test_a_transcript_over_its_budget_compresses_the_peers_older_rounds_first(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=marked_answers("CONTINUE", pad=60)) as stub:
        result = run_debate(council, tmp_path, stub, "--rounds", "3", "--gate", GATE)
        calls = calls_by(stub.requests)

    debate_id = result.last_line
    log = council.log(debate_id)
    assert "## Round 3 transcript compressed — " in log
    entry = log[log.index("## Round 3 transcript compressed") :].split("\n## ")[0]
    exchanges = reviews(council, debate_id)
    for slug in SLUGS:
        [seen] = calls[(slug, 3, "rebuttal")]
        assert "lines compressed." in seen
        # Code is never cut: every answer's code block arrives whole.
        assert seen.count(CODE) >= 2 * len(SLUGS)
        line = next(b for b in entry.split("\n") if b.startswith(f"- {slug}: "))
        # The gate counts the whole call: the transcript gets what the rest leaves of it,
        # and the budget is filled, not undershot.
        assert f"the {int(GATE):,} gate less " in line
        assert 0.9 * int(GATE) <= len(seen) - 1 <= int(GATE)  # system, "\n", user
        whole = line.split("whole: ")[1].split(";")[0].split(", ")
        compressed = line.split("compressed: ")[1]
        # The peers' round-1 answers gave way first, then the persona's own older answer,
        # before any peer's latest; its latest answer and the critiques aimed at it stayed whole.
        for peer in SLUGS:
            if peer != slug:
                assert f"{peer} R1 (first " in compressed
                assert f'<peer-answer persona="{peer}" round="1" compressed=' in seen
        if any(f"{peer} R2 (first " in compressed for peer in SLUGS):
            assert f"{slug} R1 (first " in compressed
        assert f"{slug} R2" in whole
        for critic, review in exchanges.items():
            if review["target"] == slug:
                assert f"{critic} R2 cross-examination of {slug}" in whole
                assert gap(critic, slug) in seen
        pad = "\n".join(f"Filler {i} from {slug} in round 2." for i in range(60))
        assert pad in seen  # its own latest answer, whole


# -- item 3: grounded debates run compact -------------------------------------------


def test_a_debate_with_attachments_runs_two_rounds_without_a_check(
    council: Council, tmp_path: Path
) -> None:
    design = tmp_path / "design.md"
    design.write_text("# Cache design\n\nWrite-through cache in front of Postgres.\n")
    with StubServer(responder=marked_answers("CONTINUE")) as stub:
        result = run_debate(council, tmp_path, stub, "--attach", str(design))
        phases = {request_task(r.json).get("phase") for r in stub.requests}

    debate_id = result.last_line
    assert council.meta(debate_id)["rounds_planned"] == 2
    assert "check" not in phases
    assert "Convergence check" not in council.log(debate_id)
    assert council.status(debate_id) == "complete"


def test_an_explicit_rounds_overrides_the_compact_default(council: Council, tmp_path: Path) -> None:
    design = tmp_path / "design.md"
    design.write_text("# Cache design\n\nWrite-through cache in front of Postgres.\n")
    with StubServer(responder=marked_answers("CONTINUE")) as stub:
        result = run_debate(council, tmp_path, stub, "--attach", str(design), "--rounds", "3")
        calls = calls_by(stub.requests)

    assert council.meta(result.last_line)["rounds_planned"] == 3
    assert len(calls[("orchestrator", 2, "check")]) == 1
    assert all((slug, 3, "rebuttal") in calls for slug in SLUGS)


def test_new_with_attachments_plans_two_rounds_unless_told(
    council: Council, tmp_path: Path
) -> None:
    design = tmp_path / "design.md"
    design.write_text("# Cache design\n\nWrite-through cache in front of Postgres.\n")
    grounded = council.new_debate("--attach", str(design))
    told = council.new_debate("--attach", str(design), "--rounds", "3")
    plain = council.new_debate()

    assert council.meta(grounded)["rounds_planned"] == 2
    assert council.meta(told)["rounds_planned"] == 3
    assert council.meta(plain)["rounds_planned"] == 3


def test_the_dry_run_plans_a_grounded_debate_compact(council: Council, tmp_path: Path) -> None:
    design = tmp_path / "design.md"
    design.write_text("# Cache design\n\nWrite-through cache in front of Postgres.\n")
    base = ("run", "--topic", TOPIC, "--options", OPTIONS, "--attach", str(design), "--dry-run")

    compact = json.loads(council(*base, "--json").out)["plan"]
    told = json.loads(council(*base, "--rounds", "3", "--json").out)["plan"]

    assert {c["phase"] for c in compact} == {"persona", "synthesis"}
    assert max(c["round"] for c in compact) == 2
    assert [c["round"] for c in told if c["phase"] == "check"] == [2]
    # A rebuttal reads the transcript: more input than a cross-examination.
    inputs = {c["round"]: c["input_tokens"] for c in told if c["phase"] == "persona"}
    assert inputs[3] > inputs[2]


def test_the_check_defaults_to_the_synthesis_model_not_the_debaters(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=marked_answers("CONTINUE")) as stub:
        result = run_debate(council, tmp_path, stub, "--rounds", "3", "--synth-model", "scripted")
        calls = calls_by(stub.requests)

    # The personas asked the stub; the check and the synthesis went to --synth-model.
    assert (SLUGS[0], 2, "cross-exam") in calls
    assert ("orchestrator", 2, "check") not in calls
    log = council.log(result.last_line)
    check = log[log.index("## Convergence check after round 2") :].split("\n## ")[0]
    assert "- Answered by: scripted:scripted" in check
