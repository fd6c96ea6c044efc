"""The pack's files have the frontmatter coding agents read, and the contracts they promise."""

from __future__ import annotations

import itertools
import re

import pytest
import yaml
from debate_story import FINAL_REPORT_SECTIONS

from dreamcontext_council.rules.report import OPTIONAL_SECTIONS, REQUIRED_SECTIONS

from .pack_commands import PERSONA_MD, PROTOCOL_MD, SKILL_MD, SYNTHESIZER_MD


def frontmatter(text: str) -> dict:
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, "no YAML frontmatter"
    data = yaml.safe_load(match.group(1))
    assert isinstance(data, dict)
    return data


def test_skill_frontmatter() -> None:
    data = frontmatter(SKILL_MD.read_text(encoding="utf-8"))
    assert data["name"] == "council"
    assert 50 < len(data["description"]) <= 1024


@pytest.mark.parametrize(
    ("path", "name"), [(PERSONA_MD, "council-persona"), (SYNTHESIZER_MD, "council-synthesizer")]
)
def test_agent_frontmatter(path, name: str) -> None:
    data = frontmatter(path.read_text(encoding="utf-8"))
    assert data["name"] == name
    assert data["description"]
    assert "Bash" in [t.strip() for t in data["tools"].split(",")]


def test_protocol_states_the_report_contract_the_cli_enforces() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    for title in REQUIRED_SECTIONS:
        assert f"| `### {title}` | yes |" in text
    # The one optional section is required of a round-2 critic, with its score.
    assert OPTIONAL_SECTIONS == ("Cross-examination",)
    row = next(line for line in text.split("\n") if line.startswith("| `### Cross-examination` |"))
    assert "round 2" in row and "Score: N/10" in row


def test_protocol_has_a_conviction_rubric_covering_0_to_100() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    bands = re.findall(r"^\| (\d+)–(\d+) \|", text, re.M)
    assert bands[0][0] == "0" and bands[-1][1] == "100"
    for (_, high), (low, _) in itertools.pairwise(bands):
        assert int(low) == int(high) + 1


def test_synthesizer_report_sections_are_in_the_format_order() -> None:
    order = list(FINAL_REPORT_SECTIONS)
    text = SYNTHESIZER_MD.read_text(encoding="utf-8")
    found = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert [t for t in found if t in order] == order


def test_skill_states_the_hard_rules() -> None:
    text = SKILL_MD.read_text(encoding="utf-8")
    assert "The orchestrator never debates." in text
    assert "The orchestrator never reads full reports." in text
    assert "The synthesizer always starts with a clean context" in text
    assert "Irreversible decisions are always deep" in text
