"""The wait for a person's entry reads the folder only when the kernel says one of its two
files was written: nothing polls, other writes wake nothing, and the entry ends the wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from debate_story import TOPIC, Chair, entry

from dreamcontext_council.actions import submissions
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.protocol import seat_watch
from dreamcontext_council.engine.protocol.convergence import check_material
from dreamcontext_council.engine.protocol.round_page import compression_of
from dreamcontext_council.engine.protocol.synthesis import synthesis_values
from dreamcontext_council.folder.paths import Root

from .support import Council


@pytest.fixture
def waiting(council: Council) -> DebateFiles:
    """A debate in round 1 with a person's seat (alice) and a model's (bob)."""
    debate_id = council.new_debate()
    council.add_persona(debate_id, "alice", model="human")
    council.add_persona(debate_id, "bob", model="scripted")
    assert council("round", "start", debate_id, "1").code == 0
    return DebateFiles(Root(council.root), debate_id)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each time the wait reads the folder to see whether the entry landed."""
    counted: list[int] = []
    real = seat_watch.entry_landed

    def counting(files: DebateFiles, slug: str, number: int) -> bool:
        counted.append(number)
        return real(files, slug, number)

    monkeypatch.setattr(seat_watch, "entry_landed", counting)
    return counted


def test_nothing_written_means_nothing_read_until_the_time_runs_out(
    waiting: DebateFiles, reads: list[int]
) -> None:
    async def wait() -> bool:
        loop = asyncio.get_running_loop()
        # Writes of other files of the debate wake no read.
        loop.call_later(0.2, lambda: _touch(waiting.paths.folder / "usage.jsonl"))
        loop.call_later(0.3, lambda: _touch(waiting.persona_paths("alice").folder / "notes.md"))
        return await seat_watch.until_landed(waiting, "alice", 1, timeout=1.0)

    assert asyncio.run(wait()) is False
    assert reads == [1, 1]  # once on entering, once when the time ran out


def test_the_entry_landing_ends_the_wait(waiting: DebateFiles, reads: list[int]) -> None:
    root, debate_id = waiting.root, waiting.id

    def verdict() -> None:
        submissions.record_verdict(
            root, debate_id, "alice", 1, stance="B", conviction=60, headline="Stay"
        )

    def report() -> None:
        submissions.append_report(root, debate_id, "alice", entry(), number=1)

    async def wait() -> bool:
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, verdict)  # the verdict alone has not landed the entry
        loop.call_later(0.6, report)
        return await seat_watch.until_landed(waiting, "alice", 1, timeout=60)

    assert asyncio.run(wait()) is True
    assert 3 <= len(reads) <= 8  # a few reads, one per write of verdicts.json or report.md
    assert seat_watch.answer_on_disk(waiting, "alice", 1)


def test_a_model_persona_is_on_disk_with_its_entry_a_person_with_both(
    waiting: DebateFiles,
) -> None:
    submissions.append_report(waiting.root, waiting.id, "alice", entry(), number=1)
    submissions.append_report(waiting.root, waiting.id, "bob", entry(), number=1)

    assert seat_watch.answer_on_disk(waiting, "bob", 1)
    assert not seat_watch.answer_on_disk(waiting, "alice", 1)  # no verdict yet


def _touch(path: Path) -> None:
    with open(path, "a", encoding="utf-8") as stream:
        stream.write("{}\n")


def test_the_check_and_the_synthesizer_name_a_person_as_a_person(chair: Chair, root: Root) -> None:
    """What the convergence check and the synthesizer read says which seat a person holds."""
    debate_id = chair.new(personas=("risk-auditor", "alice"), rounds=3)
    chair.ok(
        "agent", "create", debate_id, "alice", "--force", "--model", "human", "--body", "A person."
    )
    chair.play_round(debate_id, 1, {"risk-auditor": ("A", 60), "alice": ("B", 70)})
    chair.play_round(debate_id, 2, {"risk-auditor": ("A", 65), "alice": ("B", 75)})
    files = DebateFiles(root, debate_id)

    check = prompts.check_prompt(TOPIC, 2, 3, check_material(files, 2)).user
    values, task = synthesis_values(root, files, compression_of(files.debate()))
    synthesis = prompts.synthesis_prompt(values, task).user

    # In round 1's perspectives and round 2's positions, by name, with no stance.
    assert check.count("\n### alice (a person)\n") == 2
    assert check.count("\n### risk-auditor\n") == 2
    assert "B 70" not in check and "A 65" not in check
    assert "holds the seat of alice (a person)" in synthesis
    assert '<answer persona="alice" round="1" seat="a person">' in synthesis
    assert '<answer persona="risk-auditor" round="1">' in synthesis
