"""What a round entry states of its verdict: read back only where it says it once."""

from __future__ import annotations

import pytest

from dreamcontext_council.rules.entry_verdict import doubled_sections, entry_verdict
from dreamcontext_council.rules.report import RoundEntry

SUMMARY = "### Executive Summary\nMigrate now. The rest follows.\n\n"


@pytest.mark.parametrize(
    ("position", "stance", "conviction"),
    [
        ("Option B: Stay on Redis, with conviction 70.", "B", 70),
        ("**Option a**, conviction: 85", "A", 85),
        ("stance: B (conviction of 40)", "B", 40),
        ("Option A.", "A", None),
        ("Option A now, option B later; conviction 60.", None, 60),
        ("Conviction 70 at first, conviction 50 now, option A.", "A", None),
        ("Option C, conviction 70.", None, 70),  # not an option of the debate
        ("Conviction 170, option B.", "B", None),
        ("We should migrate.", None, None),
    ],
)
def test_the_stated_verdict_is_read_only_when_it_is_said_once(
    position: str, stance: str | None, conviction: int | None
) -> None:
    entry = RoundEntry(1, "2026-11-30", f"{SUMMARY}### Position\n{position}\n")
    stated = entry_verdict(entry, ["A", "B"])
    assert (stated.stance, stated.conviction) == (stance, conviction)
    assert stated.headline == "Migrate now."
    assert stated.whole == (stance is not None and conviction is not None)


def test_a_section_twice_is_a_doubled_entry_and_other_headings_are_not() -> None:
    once = f"{SUMMARY}### Position\nOption A.\n\n### Notes\nx\n\n### Notes\ny\n"
    assert doubled_sections(RoundEntry(1, "", once)) == []
    twice = once + "\n### Position\nOption B.\n"
    assert doubled_sections(RoundEntry(1, "", twice)) == ["Position"]
