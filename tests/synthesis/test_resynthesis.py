"""`run --resynthesize`: synthesis again from the stored originals, no debater called."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stub_server import StubServer

from dreamcontext_council.engine.providers.scripted import synthesis_answer
from dreamcontext_council.folder import frontmatter_io

from .chamber import Chamber
from .council_cli import TEST_KEY, Council, openai_env, roster_file, section
from .reading import messages, phase_of, request_task, synthesis_calls

TOPIC = "Should we migrate the session store from Redis to Postgres?"
SLUGS = ["alpha", "beta", "gamma", "delta"]
SCORES = {"alpha": 7, "beta": 4, "gamma": 8, "delta": 2}
ORIGINALS = ("report.md", "context-and-persona.md")


def complete_debate(council: Council, stub: StubServer, tmp_path: Path, *args: str) -> str:
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, "openai:gpt-stub"))
    result = council(
        "run", "--topic", TOPIC, "--options", "A=Migrate now,B=Stay on Redis",
        "--personas", roster, "--rounds", "2", "--quiet", *args,
        env=openai_env(stub.openai_url),
    )  # fmt: skip
    assert result.code == 0, result.err
    [debate_id] = council.ids()
    assert council.status(debate_id) == "complete"
    return debate_id


def both_apis(stub: StubServer) -> dict[str, str]:
    """Environment for personas on openai and a synthesizer on anthropic, both on the stub."""
    return openai_env(stub.openai_url) | {
        "ANTHROPIC_API_KEY": TEST_KEY,
        "ANTHROPIC_BASE_URL": stub.url,
    }


def stored(council: Council, debate_id: str) -> dict[str, bytes]:
    """What resynthesis must never change: the answers, verdicts, reviews and usage so far."""
    folder = council.folder(debate_id)
    files = {
        f"{slug}/{name}": (folder / slug / name).read_bytes()
        for slug in SLUGS
        for name in ORIGINALS
    }
    for name in ("verdicts.json", "reviews.json"):
        files[name] = (folder / name).read_bytes()
    return files


def kept_reports(council: Council, debate_id: str) -> dict[str, bytes]:
    folder = council.folder(debate_id)
    return {p.name: p.read_bytes() for p in sorted(folder.glob("final-report.*.md"))}


def without_verdict(task: dict[str, Any]) -> str:
    report = synthesis_answer(task)
    start = report.index("## Verdict")
    return report[:start] + report[report.index("## Decision card") :]


def test_resynthesis_reads_the_stored_answers_and_calls_no_debater(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.scores = SCORES
    debate_id = complete_debate(council, stub, tmp_path, "--gate", "30000")
    before = stored(council, debate_id)
    first_report = (council.folder(debate_id) / "final-report.md").read_bytes()
    usage_before = len(council.usage(debate_id))
    asked_before = len(stub.requests)

    result = council(
        "run", debate_id, "--resynthesize", "--synth-model", "anthropic:claude-stub",
        "--gate", "30000", "--quiet", env=both_apis(stub),
    )  # fmt: skip

    assert result.code == 0, result.err
    assert council.status(debate_id) == "complete"
    new_requests = stub.requests[asked_before:]
    assert [phase_of(r) for r in new_requests] == ["synthesis"]
    assert [r.api for r in new_requests] == ["anthropic"]
    assert new_requests[0].json["model"] == "claude-stub"
    new_usage = council.usage(debate_id)[usage_before:]
    assert [(u["phase"], u["persona"], u["provider"]) for u in new_usage] == [
        ("synthesis", "(synthesis)", "anthropic")
    ]

    # Nothing is lost: the previous report is kept byte for byte, the originals are untouched.
    [(kept_name, kept)] = kept_reports(council, debate_id).items()
    assert kept == first_report
    assert stored(council, debate_id) == before
    log = council.text(debate_id, "round-log.md")
    assert "## Resynthesis — " in log and f"- Previous report kept as {kept_name}" in log

    # Same originals, same compression: the synthesizer read the same user message again.
    [first, again] = synthesis_calls(stub.requests)
    assert messages(first) == messages(again)
    record = council.text(debate_id, "synthesis-input.md")
    assert all(part in record for part in messages(again))
    meta, body = frontmatter_io.parse(council.text(debate_id, "final-report.md"), "final-report.md")
    assert meta["synthesized_by"] == "anthropic:claude-stub"
    assert "## Claims ledger" in body


def test_every_resynthesis_keeps_the_report_it_replaces(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    debate_id = complete_debate(council, stub, tmp_path)
    report = council.folder(debate_id) / "final-report.md"
    versions = [report.read_bytes()]
    for model in ("anthropic:claude-one", "anthropic:claude-two"):
        result = council(
            "run", debate_id, "--resynthesize", "--synth-model", model, "--quiet",
            env=both_apis(stub),
        )  # fmt: skip
        assert result.code == 0, result.err
        versions.append(report.read_bytes())

    assert len(set(versions)) == 3
    assert sorted(kept_reports(council, debate_id).values()) == sorted(versions[:2])
    assert [request_task(r.json)["phase"] for r in stub.requests].count("synthesis") == 3


def test_a_missing_required_section_gets_one_repair(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    debate_id = complete_debate(council, stub, tmp_path)
    asked_before = len(stub.requests)
    appendix = "Appendix: per-agent per-round summaries"

    def without_appendix(task: dict[str, Any], earlier: int) -> str:
        report = synthesis_answer(task)
        if task.get("repair"):
            return report.replace(f"## {appendix}\n", f"## {appendix}\n\nRepaired.\n", 1)
        return report[: report.index("## Appendix")] + report[report.index("```claims") :]

    chamber.synthesis = without_appendix
    result = council("run", debate_id, "--resynthesize", "--quiet", env=openai_env(stub.openai_url))

    assert result.code == 0, result.err
    calls = stub.requests[asked_before:]
    assert [phase_of(r) for r in calls] == ["synthesis", "repair"]
    assert f"the report lacks the section(s) ## {appendix}." in messages(calls[1])[1]
    body = council.text(debate_id, "final-report.md")
    assert section(body, appendix).startswith("Repaired.")


def test_a_missing_suggested_section_costs_no_repair(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    debate_id = complete_debate(council, stub, tmp_path)
    asked_before = len(stub.requests)

    def without_open_risks(task: dict[str, Any], earlier: int) -> str:
        report = synthesis_answer(task)
        start = report.index("## Open risks")
        return report[:start] + report[report.index("## Appendix") :]

    chamber.synthesis = without_open_risks
    result = council("run", debate_id, "--resynthesize", "--quiet", env=openai_env(stub.openai_url))

    assert result.code == 0, result.err
    assert [phase_of(r) for r in stub.requests[asked_before:]] == ["synthesis"]
    body = council.text(debate_id, "final-report.md")
    assert "## Open risks" not in body
    assert "did not write this section" not in body


def test_verdict_still_missing_after_the_repair_stops_resumably(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    debate_id = complete_debate(council, stub, tmp_path)
    first_report = (council.folder(debate_id) / "final-report.md").read_bytes()
    asked_before = len(stub.requests)
    chamber.synthesis = lambda task, earlier: without_verdict(task)

    failed = council("run", debate_id, "--resynthesize", env=openai_env(stub.openai_url))

    assert failed.code == 1
    assert "The synthesizer wrote no ## Verdict section, even after a repair request" in failed.err
    assert f"dreamcontext council run {debate_id}" in failed.err
    assert "Traceback" not in failed.err
    assert council.status(debate_id) == "synthesizing"
    calls = stub.requests[asked_before:]
    assert [phase_of(r) for r in calls] == ["synthesis", "repair"]
    assert "the report lacks the section(s) ## Verdict." in messages(calls[1])[1]
    assert (council.folder(debate_id) / "final-report.md").read_bytes() == first_report
    assert list(kept_reports(council, debate_id).values()) == [first_report]

    # Resumable: the same command, or a plain run, finishes with a working synthesizer.
    chamber.synthesis = None
    asked_before = len(stub.requests)
    again = council("run", debate_id, "--resynthesize", env=openai_env(stub.openai_url))

    assert again.code == 0, again.err
    assert council.status(debate_id) == "complete"
    assert [phase_of(r) for r in stub.requests[asked_before:]] == ["synthesis"]
    assert list(kept_reports(council, debate_id).values()) == [first_report]  # kept once
    body = council.text(debate_id, "final-report.md")
    assert section(body, "Verdict").startswith("Migrate now (A).")


def test_a_stale_compressed_view_goes_when_the_new_synthesis_reads_the_originals(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.scores = SCORES
    debate_id = complete_debate(council, stub, tmp_path, "--gate", "30000")
    folder = council.folder(debate_id)
    # Every persona has a compressed view: the round-1 answers are all compressed, and of the
    # final (round-2) answers only gamma's (the best reviewed, dissenting) and alpha's (the
    # best reviewed of the majority) are read verbatim.
    assert sorted(p.parent.name for p in folder.glob("*/compressed.md")) == sorted(SLUGS)
    assert "## Round 2 —" not in (folder / "gamma" / "compressed.md").read_text(encoding="utf-8")

    # The gate of the first run is remembered: a wider window needs a wider gate too.
    result = council(
        "run", debate_id, "--resynthesize", "--window", "200000", "--gate", "120000",
        env=openai_env(stub.openai_url),
    )  # fmt: skip

    assert result.code == 0, result.err
    assert not list(folder.glob("*/compressed.md"))
    assert "## Synthesis input under the gate — " in council.text(debate_id, "round-log.md")
    [_, again] = synthesis_calls(stub.requests)
    assert 'compressed="true"' not in messages(again)[1]


def test_resynthesis_needs_a_debate_that_reached_synthesis(
    council: Council, stub: StubServer
) -> None:
    created = council("new", TOPIC)
    assert created.code == 0, created.err
    debate_id = created.last_line

    result = council("run", debate_id, "--resynthesize", env=openai_env(stub.openai_url))

    assert result.code != 0
    assert f"Cannot resynthesize {debate_id}: it is created" in result.err
    assert stub.requests == []
