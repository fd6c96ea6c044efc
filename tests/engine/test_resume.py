"""SIGKILL `council run` at several points, run it again: it finishes, asks nothing twice,
duplicates nothing, and every file still parses."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.report import missing_sections

from .support import OPTIONS, TOPIC, Council, entry, ok_answers, wait_for

DELAY = {"DREAMCONTEXT_SCRIPTED_DELAY": "0.2"}
# Headings a finished debate holds once each, whatever happened to the runs.
ONCE = re.compile(
    r"^## (Round \d+ (?:started|complete)|Convergence check after round \d+|Synthesis started"
    r"|Synthesis written|Debate complete|Synthesis input under the gate|Compression before synthesis)",
    re.M,
)


def ok_calls(council: Council) -> int:
    """Calls whose result is on disk: usage.jsonl's `ok` lines (a call is `pending` first)."""
    ids = council.ids()
    path = council.folder(ids[0]) / "usage.jsonl" if ids else None
    if not path or not path.exists():
        return 0
    lines = path.read_text(encoding="utf-8").splitlines()
    return sum('"outcome": "ok"' in line for line in lines)


def log_has(text: str) -> Callable[[Council], bool]:
    def condition(council: Council) -> bool:
        ids = council.ids()
        return bool(ids) and text in council.log(ids[0])

    return condition


def status_is(status: str) -> Callable[[Council], bool]:
    def condition(council: Council) -> bool:
        ids = council.ids()
        try:
            return bool(ids) and council.status(ids[0]) == status
        except (OSError, ValueError, KeyError):
            return False

    return condition


KILL_POINTS: dict[str, Callable[[Council], bool]] = {
    "two answers into round 1": lambda c: ok_calls(c) >= 2,
    "round 2 started": log_has("## Round 2 started"),
    "mid round 2": lambda c: ok_calls(c) >= 6,
    "after the check": log_has("## Convergence check after round 2"),
    "synthesis begun": status_is("synthesizing"),
    "during the synthesis call": log_has("## Synthesis input under the gate"),
}


def assert_whole(council: Council, debate_id: str) -> None:
    """Every file parses, nothing is duplicated, no answer on disk was asked for twice."""
    folder = council.folder(debate_id)
    snapshot = load_snapshot(Root(council.root), debate_id)
    assert snapshot.debate.status.phase == "complete"
    for path in folder.rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))
    for line in (folder / "usage.jsonl").read_text(encoding="utf-8").splitlines():
        assert isinstance(json.loads(line), dict)
    for path in folder.rglob("*.md"):
        if not path.name.startswith("."):
            frontmatter_io.parse(path.read_text(encoding="utf-8"), path.name)

    counts = ok_answers(council.usage(debate_id))
    assert counts and max(counts.values()) == 1, counts
    for persona in snapshot.personas:
        rounds = [e.round for e in persona.entries]
        assert len(rounds) == len(set(rounds)), f"{persona.slug} has a round twice"
        assert rounds == list(range(snapshot.debate.current_round, 0, -1))
        assert all(not missing_sections(e.body) for e in persona.entries)
        assert persona.context is not None
        assert persona.context.round_entries == len(rounds)
        panels = persona.context.panel_rounds()
        assert len(panels) == len(set(panels))
    headings = ONCE.findall(snapshot.log)
    assert len(headings) == len(set(headings)), headings
    reviews = council.json_file(debate_id, "reviews.json")["rounds"]["2"]
    assert sorted(reviews) == sorted(snapshot.debate.personas)
    assert sorted(r["target"] for r in reviews.values()) == sorted(snapshot.debate.personas)
    assert all(r["score"] is not None for r in reviews.values())
    verdicts = council.json_file(debate_id, "verdicts.json")
    assert sorted(verdicts["rounds"]) == [
        str(n) for n in range(1, snapshot.debate.current_round + 1)
    ]
    index = json.loads((council.root / "council" / "index.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in index] == [debate_id]
    assert index[0]["status"] == "complete"


def signal_run_at(
    council: Council, point: str, signum: int, delay: dict[str, str] = DELAY
) -> tuple[int, str]:
    """Start `run --topic`, send it `signum` at `point`; its exit code and stderr."""
    process = council.spawn("run", "--topic", TOPIC, "--options", OPTIONS, env=delay)
    try:
        wait_for(lambda: KILL_POINTS[point](council) or process.poll() is not None)
        assert process.poll() is None, f"the run finished before {point}"
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, err.decode()


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_a_killed_run_finishes_when_run_again(council: Council, point: str) -> None:
    signal_run_at(council, point, signal.SIGKILL)
    [debate_id] = council.ids()
    assert council.status(debate_id) != "complete"

    again = council.proc("run", debate_id, env=DELAY)

    assert again.code == 0, again.err
    assert_whole(council, debate_id)


def test_killed_twice_in_a_row_still_finishes(council: Council) -> None:
    process = council.spawn("run", "--topic", TOPIC, "--options", OPTIONS, env=DELAY)
    wait_for(lambda: ok_calls(council) >= 3)
    process.kill()
    process.communicate()
    [debate_id] = council.ids()
    process = council.spawn("run", debate_id, env=DELAY)
    wait_for(lambda: ok_calls(council) >= 9)
    process.kill()
    process.communicate()

    again = council.proc("run", debate_id, env=DELAY)

    assert again.code == 0, again.err
    assert_whole(council, debate_id)


def test_a_count_left_short_by_a_kill_is_put_right(council: Council) -> None:
    """A kill between writing report.md and context-and-persona.md leaves `round_entries`
    one short; the run that finds the answer on disk counts again."""
    debate_id = council.new_debate("--rounds", "1", "--personas", "cognitive")
    assert council("round", "start", debate_id, "1").code == 0
    slug = council.meta(debate_id)["personas"][0]
    verdict = ("verdict", debate_id, slug, "1", "--stance", "A", "--conviction", "7")
    assert council(*verdict, "--headline", "Migrate.").code == 0
    assert council("report", "append", debate_id, slug, input=entry()).code == 0
    context = council.folder(debate_id) / slug / "context-and-persona.md"
    meta, body = frontmatter_io.parse(context.read_text(encoding="utf-8"), context.name)
    assert meta["round_entries"] == 1
    meta["round_entries"] = 0
    context.write_text(frontmatter_io.render(meta, body), encoding="utf-8")

    again = council("run", debate_id)

    assert again.code == 0, again.err
    asked = ok_answers(council.usage(debate_id))
    assert (slug, 1) not in asked and len(asked) == len(council.meta(debate_id)["personas"]) - 1
    snapshot = load_snapshot(Root(council.root), debate_id)
    assert snapshot.debate.status.phase == "complete"
    for persona in snapshot.personas:
        assert persona.context is not None
        assert persona.context.round_entries == len(persona.entries) == 1, persona.slug


def test_a_run_of_a_complete_debate_changes_nothing(council: Council, tmp_path: Path) -> None:
    debate_id = council("run", "--topic", TOPIC, "--rounds", "1").last_line
    folder = council.folder(debate_id)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    again = council("run", debate_id)

    assert again.code == 0, again.err
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def stop_before_completion(council: Council, debate_id: str) -> None:
    """Put the folder where a run killed between writing the report and completing leaves it."""
    path = council.folder(debate_id) / "debate.md"
    meta, body = frontmatter_io.parse(path.read_text(encoding="utf-8"), "debate.md")
    meta["status"] = "synthesizing"
    path.write_text(frontmatter_io.render(meta, body), encoding="utf-8")
    log = council.folder(debate_id) / "round-log.md"
    text = log.read_text(encoding="utf-8")
    log.write_text(text[: text.index("\n## Debate complete")] + "\n", encoding="utf-8")


def test_a_report_written_before_the_kill_is_not_asked_for_again(council: Council) -> None:
    debate_id = council("run", "--topic", TOPIC, "--rounds", "1").last_line
    report = council.text(debate_id, "final-report.md")
    stop_before_completion(council, debate_id)
    calls = len(council.usage(debate_id))

    again = council("run", debate_id)

    assert again.code == 0, again.err
    assert council.status(debate_id) == "complete"
    assert len(council.usage(debate_id)) == calls
    assert council.text(debate_id, "final-report.md") == report
    assert council.log(debate_id).count("## Debate complete") == 1


def test_resynthesize_asks_the_synthesizer_again(council: Council) -> None:
    debate_id = council("run", "--topic", TOPIC, "--rounds", "1").last_line
    calls = len(council.usage(debate_id))

    again = council("run", debate_id, "--resynthesize")

    assert again.code == 0, again.err
    records = council.usage(debate_id)
    assert [r["phase"] for r in records[calls:]] == ["synthesis"]
    assert list(council.folder(debate_id).glob("final-report.*.md"))
    assert council.status(debate_id) == "complete"


def test_a_second_run_of_the_same_debate_is_refused(council: Council) -> None:
    process = council.spawn("run", "--topic", TOPIC, "--options", OPTIONS, env=DELAY)
    try:
        wait_for(lambda: log_has("## Round 1 started")(council))
        [debate_id] = council.ids()

        second = council.proc("run", debate_id, env=DELAY)

        assert second.code == 1
        assert f"Another `dreamcontext council run` is driving {debate_id}" in second.err
    finally:
        _out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()
    assert_whole(council, debate_id)

    # The lock goes with the process: a finished run leaves the debate free.
    assert council("run", debate_id).code == 0
