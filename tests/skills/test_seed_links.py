"""The installed pack teaches what the dashboard draws (seed 004): `**slug**:` reactions and
`slug RN` citations to the persona, and the free report structure to the synthesizer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dreamcontext_council.resources import render
from dreamcontext_council.views.safe_markdown import LinkTargets, render_markdown

ROSTER = ("risk-auditor", "growth-cfo", "user-advocate", "peer-slug")
CODE_SPAN = re.compile(r"`([^`\n]+)`")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The council pack as `dreamcontext install-skill` puts it in a project."""
    target = tmp_path_factory.mktemp("project")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dreamcontext_council",
            "install-skill",
            "--packs",
            "council",
            "--target",
            str(target),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return target / ".claude"


def rendered(example: str) -> str:
    return str(render_markdown(example, LinkTargets.of(ROSTER, (1, 2, 3))))


def test_the_persona_writes_reactions_the_dashboard_turns_into_chips(installed: Path) -> None:
    text = (installed / "agents" / "council-persona.md").read_text("utf-8")
    spans = CODE_SPAN.findall(text)
    assert "**slug**:" in spans
    reactions = [s for s in spans if any(s.startswith(f"**{slug}**:") for slug in ROSTER)]
    assert reactions, "no `**slug**:` example with a real slug"
    for example in reactions:
        assert 'class="chip persona-chip"' in rendered(example), example
    # the wrong spellings it warns against really stay plain text
    for wrong in ("**risk-auditor:**", "**Risk Auditor**:"):
        assert f"`{wrong}`" in text
        assert "persona-chip" not in rendered(wrong + " x")
    template = text[text.index("### Reactions to peers") :].split("\n")[1]
    assert "**peer-slug**:" in template


def test_the_persona_cites_peers_the_way_the_dashboard_links_them(installed: Path) -> None:
    text = (installed / "agents" / "council-persona.md").read_text("utf-8")
    citations = [s for s in CODE_SPAN.findall(text) if re.fullmatch(r"[a-z0-9-]+ R\d+(\+R\d+)*", s)]
    assert {"growth-cfo R1", "growth-cfo R1+R2"} <= set(citations)
    for example in citations:
        page = rendered(example)
        assert page.count('class="cite"') == example.count("R"), example
    prose = next(s for s in CODE_SPAN.findall(text) if s.startswith("as growth-cfo R1"))
    assert 'class="cite"' in rendered(prose)


def test_the_synthesizer_is_free_to_structure_the_middle(installed: Path) -> None:
    text = (installed / "agents" / "council-synthesizer.md").read_text("utf-8")
    flat = " ".join(text.split())
    assert (
        "Only `## Verdict` (the decision, its option key, `Confidence: high|medium|low.`) and "
        "`## Appendix: per-agent per-round summaries` are required" in flat
    )
    assert "write the sections that are load-bearing for this call" in flat
    system = " ".join(render("prompts/synthesis-system.md.j2").split())
    assert "structure the report however fits this decision" in system
    # citations the synthesizer is told to write are the ones the dashboard links
    assert 'class="cite"' in rendered("growth-cfo R1+R2")
    assert "`slug R1` or `slug R1+R2`" in text
