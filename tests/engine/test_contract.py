"""The persona contract through `run`: one repair request quoting the problem, then missing.
And a debate driven by `run` looks on disk like one driven by hand."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from stub_server import StubServer

from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.report import missing_sections, parse_report

from .support import (
    OPTIONS,
    TOPIC,
    Council,
    calls_by,
    openai_env,
    request_task,
    roster_file,
    scripted_responder,
)

SLUGS = ("risk-auditor", "growth-cfo", "platform-lead")
BROKEN = "growth-cfo"


def no_verdict(text: str) -> str:
    return text[: text.index("```verdict")].rstrip()


def no_open_questions(text: str) -> str:
    return re.sub(r"### Open questions\n[^\n]*\n", "", text)


def stance_z(text: str) -> str:
    return re.sub(r"^stance: .*$", "stance: Z", text, flags=re.M)


def conviction_150(text: str) -> str:
    return re.sub(r"^conviction: .*$", "conviction: 150", text, flags=re.M)


BREAKS: dict[str, tuple[Callable[[str], str], str]] = {
    "missing verdict block": (no_verdict, "the answer has no ```verdict block"),
    "missing section": (no_open_questions, "the report lacks the section(s) ### Open questions"),
    "stance not an option": (stance_z, "Stance 'Z' is not an option of this debate"),
    "conviction 150": (conviction_150, "Conviction must be from 0 to 100, not 150"),
}


def breaking(fault: Callable[[str], str], repairs: bool) -> Callable[[dict[str, Any]], Any]:
    """Scripted answers, but BROKEN's round-1 answer breaks the contract (and so may its repair)."""

    def responder(request_json: dict[str, Any]) -> Any:
        task = request_task(request_json)
        text = scripted_responder(request_json)
        ours = task.get("persona") == BROKEN and task.get("round") == 1
        if ours and (not task.get("repair") or not repairs):
            return fault(text)
        return text

    return responder


def run_with(council: Council, tmp_path: Path, responder: Any) -> tuple[str, StubServer]:
    with StubServer(responder=responder) as stub:
        result = council(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--personas",
            roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, "")),
            "--rounds",
            "1",
            env=openai_env(stub.openai_url),
        )
    assert result.code == 0, result.err
    return result.last_line, stub


@pytest.mark.parametrize("kind", list(BREAKS))
def test_a_broken_answer_gets_one_repair_request_quoting_the_problem(
    council: Council, tmp_path: Path, kind: str
) -> None:
    fault, problem = BREAKS[kind]

    debate_id, stub = run_with(council, tmp_path, breaking(fault, repairs=True))

    calls = calls_by(stub.requests)
    assert len(calls[(BROKEN, 1, "opening")]) == 1
    [repair] = calls[(BROKEN, 1, "repair")]
    assert f"Your previous answer could not be accepted: {problem}" in repair
    assert "<previous-answer>" in repair
    assert not [key for key in calls if key[2] == "repair" and key[0] != BROKEN]
    verdicts = council.json_file(debate_id, "verdicts.json")["rounds"]["1"]
    assert sorted(verdicts) == sorted(SLUGS)
    assert verdicts[BROKEN]["stance"] in ("A", "B")
    phases = [r["phase"] for r in council.usage(debate_id) if r["persona"] == BROKEN]
    assert phases == ["opening", "repair"]
    report = council.text(debate_id, f"{BROKEN}/report.md")
    assert "```verdict" not in report  # the block is taken out of the report


@pytest.mark.parametrize("kind", list(BREAKS))
def test_a_second_broken_answer_records_the_persona_as_missing(
    council: Council, tmp_path: Path, kind: str
) -> None:
    fault, problem = BREAKS[kind]

    debate_id, stub = run_with(council, tmp_path, breaking(fault, repairs=False))

    calls = calls_by(stub.requests)
    assert len(calls[(BROKEN, 1, "opening")]) == 1
    assert len(calls[(BROKEN, 1, "repair")]) == 1  # one repair, never two
    log = council.log(debate_id)
    assert f"## Persona failed — {BROKEN} in round 1" in log
    assert f"- answer broke the contract twice: {problem}" in log
    assert f"Missing: {BROKEN}" in log
    assert BROKEN not in council.json_file(debate_id, "verdicts.json")["rounds"]["1"]
    assert parse_report((council.folder(debate_id) / BROKEN / "report.md").read_text("utf-8")) == []
    assert council.status(debate_id) == "complete"


def test_a_verdict_stance_may_name_an_option_by_label(council: Council, tmp_path: Path) -> None:
    def by_label(request_json: dict[str, Any]) -> Any:
        text = scripted_responder(request_json)
        return re.sub(r"^stance: A$", "stance: migrate now", text, flags=re.M)

    debate_id, stub = run_with(council, tmp_path, by_label)

    assert not [key for key in calls_by(stub.requests) if key[2] == "repair"]
    stances = {
        v["stance"] for v in council.json_file(debate_id, "verdicts.json")["rounds"]["1"].values()
    }
    assert stances <= {"A", "B"}


# -- the same files as by hand ------------------------------------------------------


ENTRY = """### Executive Summary
{slug} backs {stance}.

### Position
Option {stance}.

### Reasoning
- Because.

### Reactions to peers
No peers yet.

### Open questions
None.
"""

REPORT = """## Verdict

Migrate now (A). Confidence: medium.

## Decision card

| Chosen | Runner-up | Deciding factors | Strongest dissent | Conditions to revisit |
|---|---|---|---|---|
| A | B | cost | none | a failed assumption |

## Why

- Cheaper. *— risk-auditor R1*

## Position timeline

## What was debated

Cost.

## Minority view & revisit conditions

None.

## Open risks

- Cutover.

## Appendix: per-agent per-round summaries

### risk-auditor — Round 1
Backs A.
"""

OURS = {"usage.jsonl", "reviews.json", "synthesis-input.md", "claims.json"}


def by_hand(council: Council) -> str:
    """A one-round debate driven command by command, as an agent would."""
    debate_id = council.new_debate("--rounds", "1")
    for slug in ("risk-auditor", "growth-cfo"):
        council.add_persona(debate_id, slug)
    assert council("round", "start", debate_id, "1").code == 0
    for slug, stance in (("risk-auditor", "A"), ("growth-cfo", "B")):
        verdict = council(
            "verdict",
            debate_id,
            slug,
            "1",
            "--stance",
            stance,
            "--conviction",
            "60",
            "--headline",
            f"{slug} backs {stance}",
        )
        assert verdict.code == 0, verdict.err
        report = council(
            "report",
            "append",
            debate_id,
            slug,
            "--round",
            "1",
            "--body",
            ENTRY.format(slug=slug, stance=stance),
        )
        assert report.code == 0, report.err
    assert council("round", "end", debate_id, "1").code == 0
    assert council("synthesize", debate_id).code == 0
    meta = {
        "debate_id": debate_id,
        "topic": TOPIC,
        "synthesized_at": "2026-11-30T00:00:00Z",
        "personas": ["risk-auditor", "growth-cfo"],
        "rounds": 1,
    }
    (council.folder(debate_id) / "final-report.md").write_text(
        frontmatter_io.render(meta, REPORT), encoding="utf-8"
    )
    assert council("complete", debate_id).code == 0
    return debate_id


def by_run(council: Council, tmp_path: Path) -> str:
    roster = roster_file(
        tmp_path / "roster.json", dict.fromkeys(("risk-auditor", "growth-cfo"), "")
    )
    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--rounds", "1"
    )
    assert result.code == 0, result.err
    return result.last_line


def files_of(council: Council, debate_id: str) -> set[str]:
    folder = council.folder(debate_id)
    return {
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


def meta_keys(council: Council, debate_id: str, name: str) -> set[str]:
    meta, _ = frontmatter_io.parse(council.text(debate_id, name), name)
    return set(meta)


def test_a_run_and_a_debate_by_hand_look_alike_on_disk(council: Council, tmp_path: Path) -> None:
    hand, run = by_hand(council), by_run(council, tmp_path)

    # and `<slug>/prompts/round-N.json`: the prompts run sent, which a hand-run debate has not
    sent = {f for f in files_of(council, run) if re.fullmatch(r"[^/]+/prompts/round-\d+\.json", f)}
    assert sent == {f"{slug}/prompts/round-1.json" for slug in ("risk-auditor", "growth-cfo")}
    # synthesize by hand writes synthesis-input.md as run does, and round start the seed
    assert files_of(council, run) - (OURS - {"synthesis-input.md"}) - sent == files_of(
        council, hand
    )
    assert meta_keys(council, run, "debate.md") - {"flags", "run"} == meta_keys(
        council, hand, "debate.md"
    )
    for name in ("final-report.md",):
        assert meta_keys(council, run, name) - {"synthesized_by"} == meta_keys(council, hand, name)
    for slug in ("risk-auditor", "growth-cfo"):
        for name in ("context-and-persona.md", "report.md"):
            path = f"{slug}/{name}"
            assert meta_keys(council, run, path) == meta_keys(council, hand, path)
        for debate_id in (hand, run):
            [entry] = parse_report(council.text(debate_id, f"{slug}/report.md"), "report.md")
            assert entry.round == 1
            assert missing_sections(entry.body) == []
    verdict_keys = [
        {key for v in council.json_file(d, "verdicts.json")["rounds"]["1"].values() for key in v}
        for d in (hand, run)
    ]
    assert verdict_keys[0] <= verdict_keys[1] <= verdict_keys[0] | {"concession"}
    index = json.loads((council.root / "council" / "index.json").read_text(encoding="utf-8"))
    assert len({frozenset(entry) for entry in index}) == 1
    assert {council.status(hand), council.status(run)} == {"complete"}
    shared = (
        "## Round 1 started",
        "## Round 1 complete",
        "## Synthesis started",
        "## Debate complete",
    )
    for debate_id in (hand, run):
        assert all(heading in council.log(debate_id) for heading in shared)
