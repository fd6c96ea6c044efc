"""docs/grounding.md and the README say what the guard does: their examples are run here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dreamcontext_council.engine.prompting.attachments import PROMPT_BUDGET_CHARS
from dreamcontext_council.rules.grounding import (
    MAX_ATTACHMENT_BYTES,
    MAX_TOTAL_ATTACHMENT_BYTES,
    question_problems,
)

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "grounding.md").read_text(encoding="utf-8")
README = (REPO / "README.md").read_text(encoding="utf-8")


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of the markdown table under `header`, each cell's `code` text."""
    lines = text.split(header, 1)[1].split("\n")[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        rows.append([c[1:-1] if c.startswith("`") and c.endswith("`") else c for c in cells])
    return rows


ROWS = table_rows(DOC, "| stops | passes |")


def test_the_doc_has_the_example_table() -> None:
    assert len(ROWS) >= 12


@pytest.mark.parametrize("question", [row[0] for row in ROWS])
def test_what_the_doc_says_stops_stops(question: str) -> None:
    assert question_problems(question, attached=True)


@pytest.mark.parametrize("question", [row[1] for row in ROWS])
def test_what_the_doc_says_passes_passes(question: str) -> None:
    assert question_problems(question, attached=False) == []


def quoted(text: str, verb: str) -> list[str]:
    """`"…" passes` / `"…" stop(s)` examples in prose."""
    return re.findall(rf'"([^"]+)"\s+{verb}', " ".join(text.split()))


def test_the_prose_examples_hold() -> None:
    passing = quoted(DOC, "passes")
    assert len(passing) >= 3
    for question in passing:
        assert question_problems(question, attached=False) == [], question
    assert question_problems("TODO: comments or issue links?", attached=False)
    for question in (
        "Is this design safe?",
        "Given this design, should we ship Friday or wait until Monday?",
    ):
        assert question_problems(question, attached=False)
        assert f'"{question}"' in " ".join(DOC.split())


def test_readme_examples_pass() -> None:
    section = README.split("### Grounded debates", 1)[1].split("\n## ", 1)[0]
    examples = re.findall(r'\("([^"]+)", "([^"]+)", "([^"]+)"\)', " ".join(section.split()))
    assert examples, "the README lists questions that pass"
    for question in examples[0]:
        assert question_problems(question, attached=False) == [], question
    assert "docs/grounding.md" in section


def test_the_limits_in_the_docs_are_the_code_s() -> None:
    assert f"{PROMPT_BUDGET_CHARS:,}-character" in README
    assert f"{PROMPT_BUDGET_CHARS:,} characters" in DOC
    assert MAX_ATTACHMENT_BYTES == 512 * 1024 and "512 KiB" in DOC and "512 KiB" in README
    assert MAX_TOTAL_ATTACHMENT_BYTES == 1024 * 1024 and "1 MiB" in DOC and "1 MiB" in README
