"""What the folder records (seed 004, dreamcontext council debates): the round log names each
submission, context-and-persona.md shows what a persona received, `prompt` prints what a model
was sent, and debates of any roster size move between the Node tool and this one."""

from __future__ import annotations

import re
from pathlib import Path

from debate_story import Chair, entry

from dreamcontext_council.rules.roundlog import round_participants

from .support import OPTIONS, TOPIC, Council, roster_file

SUBMITTED = re.compile(
    r"^## Report (submitted|replaced) — (\S+) in round (\d+) — "
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\n- Executive summary: (.*)$",
    re.MULTILINE,
)


def submissions(log: str) -> list[tuple[str, str, int, str]]:
    """(event, persona, round, summary) of every submission line in a round log."""
    return [(m[1], m[2], int(m[3]), m[5]) for m in SUBMITTED.finditer(log)]


# -- item 7: the round log names each submission ---------------------------------------


def test_report_append_logs_who_when_and_the_first_sentence(chair: Chair) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    log_path = chair.folder(debate_id) / "round-log.md"
    before = log_path.read_text(encoding="utf-8")
    summary = "Migrate, but only behind a flag. Cost drops by half.\nRollback stays cheap."
    chair.ok("report", "append", debate_id, "growth-cfo", "--round", "1", input=entry(summary))
    after = log_path.read_text(encoding="utf-8")
    assert after.startswith(before.rstrip("\n"))  # append-only
    assert submissions(after) == [
        ("submitted", "growth-cfo", 1, "Migrate, but only behind a flag.")
    ]
    chair.ok("report", "append", debate_id, "growth-cfo", "--round", "1", input=entry("Stay."))
    again = log_path.read_text(encoding="utf-8")
    assert again.startswith(after.rstrip("\n"))
    assert submissions(again)[-1] == ("replaced", "growth-cfo", 1, "Stay.")
    # the readers that look for round starts still find who took part
    assert round_participants(again, 1) == ["risk-auditor", "growth-cfo", "user-advocate"]


def test_a_long_summary_is_cut_to_one_short_line(chair: Chair) -> None:
    debate_id = chair.new()
    chair.ok("round", "start", debate_id, "1")
    summary = " ".join(["word"] * 200) + ". Second sentence."
    chair.ok("report", "append", debate_id, "growth-cfo", "--round", "1", input=entry(summary))
    [(_, _, _, line)] = submissions((chair.folder(debate_id) / "round-log.md").read_text("utf-8"))
    assert line.endswith("…") and len(line) <= 240 and "Second" not in line


def test_a_run_logs_every_answer_with_its_time(council: Council, tmp_path: Path) -> None:
    slugs = ("risk-auditor", "growth-cfo", "platform-lead")
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(slugs, "scripted"))
    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--rounds", "2"
    )
    assert result.code == 0, result.err
    debate_id = council.only_id()
    found = submissions(council.log(debate_id))
    assert sorted((slug, number) for _, slug, number, _ in found) == sorted(
        (slug, number) for slug in slugs for number in (1, 2)
    )
    for _, slug, _number, summary in found:
        assert summary.startswith(f"{slug} backs "), summary
    # the Node tool's readers: `## Round N started` is still followed by its personas line
    for number in (1, 2):
        assert round_participants(council.log(debate_id), number) == list(slugs)
    assert council("summaries", debate_id, "2").code == 0
