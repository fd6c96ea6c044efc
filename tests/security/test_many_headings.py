"""A final report or an entry from someone else's repository may hold any number of headings,
or one heading line megabytes long: every reader splits it in time linear in its length, and
a final report is read only up to MAX_REPORT_SECTIONS sections, past which its readers say so
in one line (`report show`, MCP `council_report`) or on the page, and `show` still finds the
Verdict among the sections read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from council_run import Council
from mcp import Client
from offline import no_provider_environment as no_provider_environment  # autouse here

from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules import final_report, markdown, persona, roundlog
from dreamcontext_council.rules.limits import MAX_REPORT_SECTIONS
from dreamcontext_council.views.report_page import report_cards
from dreamcontext_council.views.safe_markdown import LinkTargets

from .command_consent_support import workspace
from .recorded_settings_support import hold_mcp, tool_error

VERDICT = "## Verdict\n\nMigrate now (A). Confidence: medium.\n"
# Far more headings than any report holds: a split that walks the rest of the headings for
# each one (quadratic) takes minutes here, a linear one well under a second.
MANY = 400_000


@pytest.fixture
def council(tmp_path: Path) -> Council:
    return workspace(tmp_path)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def with_final_report(council: Council, sections: int) -> str:
    """A debate whose final-report.md holds a Verdict and `sections - 1` more `##` sections."""
    debate_id = council.new_debate("--rounds", "1")
    more = "".join(f"## Note {n}\n\nline {n}\n" for n in range(sections - 1))
    report = council.folder(debate_id) / "final-report.md"
    report.write_text(f"# Report\n\n{VERDICT}{more}", encoding="utf-8")
    return debate_id


# -- the bound: read up to MAX_REPORT_SECTIONS, and said past it --------------------------


@pytest.mark.parametrize("section", [[], ["--section", "Verdict"]], ids=["whole", "verdict"])
def test_report_show_past_the_bound_says_so_in_one_line(
    council: Council, section: list[str]
) -> None:
    debate_id = with_final_report(council, MAX_REPORT_SECTIONS + 1)

    shown = council.proc("report", "show", debate_id, *section)

    assert shown.code == 1, shown.out[:200]
    line = one_line(shown.err)
    assert f"more than {MAX_REPORT_SECTIONS:,} `##` sections" in line
    assert "final-report.md" in line and shown.out == ""


def test_report_show_at_the_bound_reads_every_section(council: Council) -> None:
    debate_id = with_final_report(council, MAX_REPORT_SECTIONS)

    shown = council.proc("report", "show", debate_id, "--json")

    assert shown.code == 0, shown.err
    data = json.loads(shown.out)
    assert len(data["sections"]) == MAX_REPORT_SECTIONS
    assert data["verdict"]["confidence"] == "medium"


def test_show_finds_the_verdict_of_a_report_past_the_bound(council: Council) -> None:
    debate_id = with_final_report(council, MAX_REPORT_SECTIONS * 50)

    assert final_report.verdict_statement(
        (council.folder(debate_id) / "final-report.md").read_text(encoding="utf-8")
    ) == final_report.VerdictStatement("Migrate now (A).", "medium")


def test_council_report_past_the_bound_is_a_one_line_error(council: Council) -> None:
    debate_id = with_final_report(council, MAX_REPORT_SECTIONS + 1)

    async def scenario(client: Client) -> None:
        text = tool_error(await client.call_tool("council_report", {"debate_id": debate_id}))
        assert f"more than {MAX_REPORT_SECTIONS:,} `##` sections" in text and "\n" not in text

    hold_mcp(council, scenario)


def test_the_page_shows_the_sections_read_and_says_there_are_more(council: Council) -> None:
    debate_id = with_final_report(council, MAX_REPORT_SECTIONS + 5)
    snapshot = load_snapshot(Root(council.root), debate_id)

    cards = report_cards(snapshot, LinkTargets.of([], []))

    assert [c.title for c in cards[:2]] == ["Verdict", "Report"]  # the Verdict leads
    assert [c.title for c in cards[2:-1]] == [f"Note {n}" for n in range(MAX_REPORT_SECTIONS - 1)]
    assert cards[-1].title == "More sections"
    assert f"more than {MAX_REPORT_SECTIONS:,}" in cards[-1].html


# -- linear in the input: sizes that took minutes split in well under the timeout ---------


@pytest.mark.timeout(60)
def test_a_text_of_many_headings_splits_in_linear_time() -> None:
    text = "".join(f"## h{n}\n" for n in range(MANY))

    found = markdown.sections(text, 2)

    assert len(found) == MANY and found[-1] == markdown.Section(f"h{MANY - 1}", 2, MANY - 1, MANY + 1, "")  # fmt: skip


@pytest.mark.timeout(60)
def test_a_persona_context_of_many_sections_reads_in_linear_time() -> None:
    body = "".join(f"## Round 1 — Directives\n\n- directive {n}\n" for n in range(MANY // 2))

    assert persona.directive_rounds(body) == [1]


@pytest.mark.timeout(60)
def test_a_heading_line_megabytes_long_is_read_in_linear_time() -> None:
    line = "## Verdict" + " #" * 1_000_000 + " x"
    log = f"# Round log\n\n{line}\n- Personas: a, b\n"

    assert markdown.headings([line])[0].title.endswith(" x")
    assert roundlog.round_participants(log, 1) is None


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "paragraph",
    ["*" * 2_000_000, "Migrate now. Confidence" + " " * 2_000_000 + "high"],
    ids=["stars", "spaces"],
)
def test_a_verdict_paragraph_megabytes_long_is_read_in_linear_time(paragraph: str) -> None:
    statement = final_report.verdict_statement(f"## Verdict\n\n{paragraph}\n")

    assert statement is not None and statement.confidence is None
