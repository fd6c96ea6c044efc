"""docs/personas.md: its presets are the code's, and its roster examples parse."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dreamcontext_council.rules.roster import PRESETS, parse_roster

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "personas.md").read_text(encoding="utf-8")


def test_every_preset_is_listed_with_its_personas() -> None:
    for name, personas in PRESETS.items():
        row = next(line for line in PAGE.split("\n") if line.startswith(f"| `{name}`"))
        assert row.split("|")[2].strip() == ", ".join(p.slug for p in personas)


@pytest.mark.parametrize("language", ["yaml", "json"])
def test_the_roster_examples_parse(language: str) -> None:
    (example,) = re.findall(rf"```{language}\n(.*?)```", PAGE, re.DOTALL)
    personas = parse_roster(example, f"the {language} example")
    assert [p.slug for p in personas][:2] == ["risk-auditor", "growth-cfo"]
    assert personas[0].model == "anthropic:claude-sonnet-4-5"
    assert personas[1].aspects == ["cost", "revenue", "payback"]
