"""The pack's files have the frontmatter coding agents read, and the contracts they promise."""

from __future__ import annotations

import itertools
import re

import pytest
import yaml
from debate_story import FINAL_REPORT_SECTIONS

from dreamcontext_council.resources import render
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


def test_the_synthesizer_follows_the_synthesis_prompt_run_sends() -> None:
    """One synthesis contract for both drivers: the sub-agent reads the prompt `run` sends
    (synthesis-input.md) and holds to it; its own file sets no rule of its own against it."""
    text = SYNTHESIZER_MD.read_text(encoding="utf-8")
    flat = " ".join(text.split())
    assert "`synthesis-input.md`" in flat
    assert "is the one contract for both drivers" in flat
    assert "Weigh the arguments, not the count" in flat
    assert "`claims` block" in flat
    # What the old contract had and the prompt does not: the tally, its own sections.
    assert "Final round:" not in text and "tally" not in text
    assert "not what you would conclude" not in text
    assert "```markdown" not in text
    assert [line for line in text.splitlines() if line.startswith("## Position timeline")] == []
    system = render("prompts/synthesis-system.md.j2")
    assert "Weigh the arguments, not the count" in system
    assert "```claims" in system
    order = [t for t in FINAL_REPORT_SECTIONS if t != "Position timeline"]
    found = [line[3:] for line in system.splitlines() if line.startswith("## ")]
    assert [t for t in found if t in order] == order


def test_skill_states_the_hard_rules() -> None:
    text = SKILL_MD.read_text(encoding="utf-8")
    assert "The orchestrator never debates." in text
    assert "The orchestrator never reads full reports." in text
    assert "The synthesizer always starts with a clean context" in text
    assert "Irreversible decisions are always deep" in text
