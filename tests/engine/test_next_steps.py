"""What `run` and the closing commands tell the user to do next, on a debate `run` drives."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from debate_story import OPTIONS, TOPIC

from dreamcontext_council.cli import cli
from dreamcontext_council.engine.model_calls.accounting import BudgetReached, Ledger, PriceTable
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.rules.roster import PRESETS

from .support import Council


def _stopped_early(council: Council) -> str:
    result = council("run", "--topic", TOPIC, "--options", OPTIONS, "--max-calls", "2")
    assert result.code == EXIT_STOPPED, result.err  # stopped by its limit, not done
    return result.last_line


def test_complete_and_promote_on_a_stopped_run_name_the_run_command(council: Council) -> None:
    debate_id = _stopped_early(council)

    for command in ("complete", "promote"):
        result = council(command, debate_id)
        assert result.code != 0
        assert f"run `dreamcontext council run {debate_id}` to finish it" in result.err
        assert "synthesize" not in result.err and "council complete" not in result.err


def test_on_a_debate_held_by_hand_they_still_name_the_hand_steps(council: Council) -> None:
    debate_id = council("new", TOPIC, "--personas", "cognitive").last_line
    assert "council synthesize" in council("complete", debate_id).err
    assert f"council complete {debate_id}" in council("promote", debate_id).err


def test_max_calls_counts_the_calls_still_in_flight(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "usage.jsonl", PriceTable(), max_calls=3)
    spec = parse_model("scripted")
    for _ in range(3):
        ledger.admit(spec, 10, 10)  # four personas asked at once: three admitted

    with pytest.raises(BudgetReached, match=r"^--max-calls 3 reached after 3 calls$"):
        ledger.admit(spec, 10, 10)


def test_a_resynthesis_rewrites_the_promoted_knowledge_doc(council: Council) -> None:
    first = council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--promote")
    debate_id = first.last_line
    doc = council.root / council.meta(debate_id)["promoted_to_knowledge"]
    doc.write_text("---\nid: stale\n---\n\nA verdict from an older report.\n", encoding="utf-8")

    result = council("run", debate_id, "--resynthesize")

    assert result.code == 0, result.err
    assert "Promoted again, from the new report, to knowledge/decision-" in result.out
    text = doc.read_text(encoding="utf-8")
    assert "older report" not in text and "## Verdict" in text


def test_a_complete_run_names_the_commands_to_try_next(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1")

    debate_id = result.last_line
    assert (
        f"Next: `dreamcontext council report show {debate_id}`, `dreamcontext council serve`, "
        f"`dreamcontext council export {debate_id} --format html` (writes {debate_id}.html)"
    ) in result.err


def test_run_help_names_every_preset() -> None:
    run = cli.commands["council"].commands["run"]  # type: ignore[attr-defined]
    personas = next(
        p for p in run.params if isinstance(p, click.Option) and p.name == "personas_spec"
    )
    assert all(name in (personas.help or "") for name in PRESETS)


def test_the_synthesis_call_is_not_booked_to_the_debater_called_synthesizer(
    council: Council,
) -> None:
    debate_id = council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "2").last_line

    usage = council.usage(debate_id)
    by_synthesizer = {u["phase"] for u in usage if u["persona"] == "synthesizer"}
    assert by_synthesizer == {"opening", "cross-exam"}
    assert {u["persona"] for u in usage if u["phase"] == "synthesis"} == {"(synthesis)"}
