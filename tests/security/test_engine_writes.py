"""What `run` writes: it never overwrites what a person wrote meanwhile, never stores an
answer of unbounded size, and never marks a call `ok` before its result is on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from council_run import Council
from debate_story import OPTIONS, TOPIC, entry
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.engine.prompting.compression import find_fenced_blocks
from dreamcontext_council.engine.protocol.answer_cap import cap_answer
from dreamcontext_council.engine.protocol.contract import parse_persona_answer
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import locked
from dreamcontext_council.rules.report import REQUIRED_SECTIONS
from dreamcontext_council.rules.usage import calls_of, usage_totals

from .engine_writes_support import LONG_CAP_KB, gated_command, long_command, wait_for


@pytest.fixture
def council(root_path: Path, workdir: Path, tmp_path: Path) -> Council:
    """The CLI against a fresh workspace (`_dream_context/` not created yet)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Council(root_path, workdir, clean_environment(os.environ, home))


# -- usage truth ----------------------------------------------------------------------


def test_a_run_killed_between_the_synthesis_call_and_its_report_left_no_ok_line(
    council: Council, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    synthesizer = gated_command(tmp_path, gate, phases=("synthesis",))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({synthesizer: [1000.0, 1000.0]}), encoding="utf-8")
    args = ("--synth-model", synthesizer, "--prices", str(prices))
    process = council.spawn("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", *args)
    try:
        wait_for(lambda: (gate.parent / "waiting").exists() or process.poll() is not None)
        assert process.poll() is None, process.communicate()[1].decode()
        [debate_id] = council.ids()
        folder = council.folder(debate_id)
        # Holding the debate's lock stops the run at its first locked write after the call.
        with locked(folder, within=folder.parent.parent):
            gate.touch()
            wait_for(lambda: any(r["phase"] == "synthesis" for r in council.usage_lines(debate_id)))
            process.kill()
            process.communicate()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert not (folder / "final-report.md").exists()
    synthesis = [r for r in council.usage_lines(debate_id) if r["phase"] == "synthesis"]
    assert [r["outcome"] for r in synthesis] == ["pending"]
    paid = synthesis[0]["cost_usd"]
    assert paid > 0

    again = council.proc("run", debate_id, *args)

    assert again.code == 0, again.err
    assert council.status(debate_id) == "complete"
    calls = [r for r in council.usage(debate_id) if r["phase"] == "synthesis"]
    assert [r["outcome"] for r in calls] == ["pending", "ok"]
    shown = council("show", debate_id, "--json")
    assert shown.code == 0, shown.err
    usage = json.loads(shown.out)["usage"]
    everything = council.usage(debate_id)
    assert usage["calls"] == len(everything)
    assert usage["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in everything))
    assert usage["cost_usd"] >= paid + calls[1]["cost_usd"]


def test_a_call_with_two_lines_counts_once_and_a_pending_call_counts_as_paid() -> None:
    lines = [
        {"call": "a1", "outcome": "pending", "cost_usd": 0.5, "provider": "openai"},
        {"call": "b2", "outcome": "pending", "cost_usd": 0.25, "provider": "openai"},
        {"call": "a1", "outcome": "ok", "cost_usd": 0.5, "provider": "openai"},
        {"outcome": "ok", "cost_usd": 0.125, "provider": "scripted"},  # before call ids
        {"call": "c3", "outcome": "discarded", "cost_usd": 1.0, "provider": "openai"},
    ]

    assert [r.get("call") for r in calls_of(lines)] == ["a1", "b2", None, "c3"]
    assert calls_of(lines)[0]["outcome"] == "ok"
    totals = usage_totals(lines)
    assert (totals.calls, totals.failed, totals.cost_usd) == (4, 0, 1.875)


# -- a person's entry is never overwritten ---------------------------------------------


@pytest.mark.parametrize("with_report", [True, False], ids=["verdict and report", "verdict"])
def test_a_verdict_and_report_written_by_hand_while_the_model_answers_are_kept(
    council: Council, tmp_path: Path, with_report: bool
) -> None:
    gate = tmp_path / "gate"
    debate_id = council.new_debate("--rounds", "1")
    slow = gated_command(tmp_path, gate, phases=("opening",), personas=("risk-auditor",))
    council.add_persona(debate_id, "risk-auditor", model=slow)
    for slug in ("growth-cfo", "platform-lead"):
        council.add_persona(debate_id, slug)
    process = council.spawn("run", debate_id, "--yes")
    try:
        wait_for(lambda: (gate.parent / "waiting").exists() or process.poll() is not None)
        assert process.poll() is None, process.communicate()[1].decode()
        verdict = ("verdict", debate_id, "risk-auditor", "1", "--stance", "B")
        by_hand = council(*verdict, "--conviction", "91", "--headline", "Written by hand.")
        assert by_hand.code == 0, by_hand.err
        if with_report:
            report = council(
                "report", "append", debate_id, "risk-auditor", input=entry("Hand-written summary.")
            )
            assert report.code == 0, report.err
        gate.touch()
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode == 0, err.decode()
    assert council.status(debate_id) == "complete"
    kept = council.json_file(debate_id, "verdicts.json")["rounds"]["1"]["risk-auditor"]
    assert (kept["stance"], kept["conviction"], kept["headline"]) == ("B", 91, "Written by hand.")
    report_path = council.folder(debate_id) / "risk-auditor" / "report.md"
    report_md = report_path.read_text("utf-8") if report_path.exists() else ""
    assert ("Hand-written summary." in report_md) is with_report
    assert "scripted reasoning trace" not in report_md
    if not with_report:  # the round closes without the report still to come
        assert "Missing: risk-auditor" in council.log(debate_id)
    log = council.log(debate_id)
    assert "## Hand-written entry kept — risk-auditor in round 1" in log
    assert "The hand-written entry was kept; the model's answer was not saved." in log
    assert "risk-auditor: kept" in err.decode()
    [call] = [r for r in council.usage(debate_id) if r["persona"] == "risk-auditor"]
    assert call["outcome"] == "discarded"


# -- answers have a size cap -----------------------------------------------------------

CAP = LONG_CAP_KB * 1000
SLACK = 2_000  # the marker, the entry's heading, the frontmatter


def test_an_answer_over_the_cap_is_cut_and_kept_whole_beside_it(
    council: Council, tmp_path: Path
) -> None:
    said = tmp_path / "said"
    said.mkdir()
    model = long_command(said)

    done = council.proc(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--rounds",
        "1",
        "--model",
        model,
        "--max-answer-kb",
        str(LONG_CAP_KB),
    )

    assert done.code == 0, done.err
    debate_id = done.last_line
    folder = council.folder(debate_id)
    for slug in council.meta(debate_id)["personas"]:
        answer = (said / f"{slug}-opening.md").read_text(encoding="utf-8").rstrip()
        assert len(answer.encode()) > CAP
        report = (folder / slug / "report.md").read_text(encoding="utf-8")
        assert len(report.encode()) <= CAP + SLACK
        assert f"This answer was {len(answer.encode()):,} bytes" in report
        assert f"`{slug}/raw/round-1.md`" in report
        assert report.count("```") % 2 == 0
        assert (folder / slug / "raw" / "round-1.md").read_text(encoding="utf-8") == answer
    verdicts = council.json_file(debate_id, "verdicts.json")["rounds"]["1"]
    assert sorted(verdicts) == sorted(council.meta(debate_id)["personas"])
    synthesis = (said / "synthesizer-synthesis.md").read_text(encoding="utf-8").rstrip()
    final = (folder / "final-report.md").read_text(encoding="utf-8")
    assert len(final.encode()) <= CAP + 20_000  # plus what the engine renders itself
    assert f"This answer was {len(synthesis.encode()):,} bytes" in final
    assert (folder / "synthesis-raw.md").read_text(encoding="utf-8") == synthesis
    assert (folder / "synthesis-input.md").stat().st_size <= 4 * CAP
    with TestClient(create_app(Root(council.root))) as client:
        page = client.get(f"/d/{debate_id}")
    assert page.status_code == 200
    assert len(page.content) <= 10 * CAP


def test_every_section_is_cut_in_its_middle_with_fences_closed_and_the_verdict_kept() -> None:
    listing = "```python\n" + "x = 1\n" * 20_000 + "```\n"
    body = "".join(
        f"### {title}\n{title} starts here.\n{listing}{title} ends here.\n\n"
        for title in REQUIRED_SECTIONS
    )
    verdict = "```verdict\nstance: A\nconviction: 70\nheadline: Long but sound.\n```"
    text = body + verdict

    capped = cap_answer(text, 50, keep_block="verdict", kept_at="p/raw/round-1.md")

    assert capped.truncated and capped.original_bytes == len(text.encode())
    assert len(capped.text.encode()) <= 50_000
    answer = parse_persona_answer(capped.text, [], [])
    assert answer.verdict.headline == "Long but sound."
    for title in REQUIRED_SECTIONS:
        assert f"{title} starts here." in answer.body and f"{title} ends here." in answer.body
    blocks = find_fenced_blocks(capped.text)
    assert all(b.closed for b in blocks) and len(blocks) == 2 * len(REQUIRED_SECTIONS) + 1
    assert capped.text.count(f"This answer was {len(text.encode()):,} bytes") == 5
    assert cap_answer(verdict, 50, keep_block="verdict", kept_at="x").text == verdict


def test_a_verdict_left_without_its_entry_by_a_killed_run_is_replaced(council: Council) -> None:
    """Only what appears while the model answers is kept: a verdict already there when the
    round's calls began (a run killed between the verdict and the report) is answered over."""
    debate_id = council.new_debate("--rounds", "1", "--personas", "cognitive")
    assert council("round", "start", debate_id, "1").code == 0
    slug = council.meta(debate_id)["personas"][0]
    left = ("verdict", debate_id, slug, "1", "--stance", "B", "--conviction", "12")
    assert council(*left, "--headline", "Left by a killed run.").code == 0

    again = council("run", debate_id)

    assert again.code == 0, again.err
    verdict = council.json_file(debate_id, "verdicts.json")["rounds"]["1"][slug]
    assert verdict["headline"] != "Left by a killed run."
    assert "Hand-written entry kept" not in council.log(debate_id)
    asked = [r for r in council.usage(debate_id) if (r["persona"], r["phase"]) == (slug, "opening")]
    assert [r["outcome"] for r in asked] == ["ok"]
