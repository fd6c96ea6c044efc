"""Attachments: copied and recorded, carried by every persona and synthesizer prompt, within a
budget (compressed without cutting code), listed by round-context, refused before any write."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from stub_server import StubServer

from dreamcontext_council.engine.prompting.attachments import PROMPT_BUDGET_CHARS
from dreamcontext_council.engine.prompting.compression import find_fenced_blocks
from dreamcontext_council.rules.grounding import MAX_ATTACHMENT_BYTES, MAX_TOTAL_ATTACHMENT_BYTES

from .conftest import STUB_ENV, Council, calls, stub_args

PLAN = """# Session store migration

1. Dual-write sessions to Redis and Postgres for two weeks.
2. Flip reads to Postgres behind a flag.

```sql
CREATE TABLE sessions (id uuid PRIMARY KEY, data jsonb NOT NULL);
```
"""
# CRLF line ends and non-ASCII text must survive the copy byte for byte.
SCHEMA = "-- Schéma des sessions\r\nALTER TABLE sessions ADD COLUMN expires_at timestamptz;\r\n"


def long_design(paragraphs: int = 300) -> str:
    """A design far over the prompt budget, with code at the start, middle and end."""
    parts = ["# Cache design", "", "```python", "def head() -> int:", "    return 1", "```", ""]
    for i in range(paragraphs):
        parts += [f"Paragraph {i}: the cache keeps session {i} warm for {i % 7} minutes. " * 3, ""]
        if i == paragraphs // 2:
            parts += [
                "~~~~rust",
                "fn middle() -> u8 {",
                "    // keep me whole",
                "    42",
                "}",
                "~~~~",
            ]
            parts += ["", "```", "line with trailing spaces   ", "\tand a tab", "```", ""]
    parts += ["```yaml", "tail: true", "```", ""]
    return "\n".join(parts)


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "docs" / "plan.md"
    path.parent.mkdir()
    path.write_text(PLAN, encoding="utf-8")
    return path


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    path = tmp_path / "0042_sessions.sql"
    path.write_bytes(SCHEMA.encode("utf-8"))
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def attachment_section(prompt: str) -> str:
    """The `## Attachments` section of a prompt ('' when there is none)."""
    found = re.search(r"^## Attachments\n(.*?)(?=^## |\Z)", prompt, re.S | re.M)
    return found.group(1) if found else ""


def attachment_bodies(section: str) -> list[str]:
    """The text inside each `<attachment>` tag of a section."""
    return re.findall(
        r'<attachment name="[^"]*"(?: \w+="[^"]*")?>\n(.*?)\n</attachment>', section, re.S
    )


# -- copied and recorded ---------------------------------------------------------------


def test_new_attach_copies_the_files_and_records_them(
    council: Council, plan: Path, schema: Path
) -> None:
    debate_id = council.new(
        "Is this migration plan safe?", "--attach", str(plan), "--attach", str(schema)
    )

    folder = council.folder(debate_id) / "attachments"
    assert sorted(p.name for p in folder.iterdir()) == ["0042_sessions.sql", "plan.md"]
    assert (folder / "plan.md").read_bytes() == plan.read_bytes()
    assert (folder / "0042_sessions.sql").read_bytes() == schema.read_bytes()
    assert council.meta(debate_id)["attachments"] == [
        {"name": "plan.md", "bytes": len(plan.read_bytes()), "sha256": sha(plan.read_bytes())},
        {
            "name": "0042_sessions.sql",
            "bytes": len(schema.read_bytes()),
            "sha256": sha(schema.read_bytes()),
        },
    ]


def test_round_context_lists_the_attachments(council: Council, plan: Path, schema: Path) -> None:
    debate_id = council.new(
        "Is this migration plan safe?", "--attach", str(plan), "--attach", str(schema)
    )
    assert (
        council("agent", "create", debate_id, "risk-auditor", "--body", "You judge risk.").code == 0
    )
    assert council("round", "start", debate_id, "1").code == 0

    result = council("round-context", debate_id, "risk-auditor")

    assert result.code == 0, result.err
    section = result.out.split("## Attachment files\n", 1)[1].split("\n## ")[0]
    copied = council.folder(debate_id) / "attachments"
    assert f"- `{copied / 'plan.md'}` ({len(PLAN.encode())} bytes)" in section
    assert f"- `{copied / '0042_sessions.sql'}` ({len(SCHEMA.encode())} bytes)" in section
    assert "read each one before you answer" in section


def test_round_context_has_no_attachment_section_without_attachments(council: Council) -> None:
    debate_id = council.new("Should we migrate?")
    council("agent", "create", debate_id, "risk-auditor", "--body", "You judge risk.")

    assert "## Attachments" not in council("round-context", debate_id, "risk-auditor").out


# -- carried by every prompt -------------------------------------------------------------


def test_every_persona_and_the_synthesizer_read_the_attachments(
    council: Council, stub: StubServer, small_roster: str, plan: Path, schema: Path
) -> None:
    result = council(
        "run", "--topic", "Is this migration plan safe to run on Friday?",
        "--attach", str(plan), "--attach", str(schema),
        "--personas", small_roster, "--rounds", "2", *stub_args(stub), env=STUB_ENV,
    )  # fmt: skip

    assert result.code == 0, result.err
    debate_id = result.last_line
    copied = council.folder(debate_id) / "attachments"
    assert (copied / "0042_sessions.sql").read_bytes() == SCHEMA.encode("utf-8")
    seen = {(t.get("persona"), t.get("round"), t.get("phase")) for t, _ in calls(stub)}
    for slug in ("risk-auditor", "platform-lead"):
        assert (slug, 1, "opening") in seen and (slug, 2, "cross-exam") in seen
    readers = 0
    for task, prompt in calls(stub):
        if task.get("phase") not in ("opening", "cross-exam", "rebuttal", "synthesis"):
            assert "## Attachments" not in prompt  # the one-word check needs no files
            continue
        readers += 1
        section = attachment_section(prompt)
        # Whole, in the order attached, CRLF and accents included.
        assert f'<attachment name="plan.md">\n{PLAN}\n</attachment>' in section
        assert f'<attachment name="0042_sessions.sql">\n{SCHEMA}\n</attachment>' in section
        assert section.index("plan.md") < section.index("0042_sessions.sql")
        assert "compressed=" not in section
    assert readers == 5  # 2 personas × 2 rounds + synthesis
    assert council.meta(debate_id)["status"] == "complete"


def test_over_the_budget_attachments_are_compressed_and_code_is_never_cut(
    council: Council, stub: StubServer, small_roster: str, tmp_path: Path
) -> None:
    design = tmp_path / "cache-design.md"
    text = long_design()
    design.write_text(text, encoding="utf-8")
    assert len(text) > PROMPT_BUDGET_CHARS
    blocks = find_fenced_blocks(text)
    assert len(blocks) == 4

    result = council(
        "run", "--topic", "Is this cache design sound?", "--attach", str(design),
        "--personas", small_roster, "--rounds", "2", *stub_args(stub), env=STUB_ENV,
    )  # fmt: skip

    assert result.code == 0, result.err
    assert (
        council.folder(result.last_line) / "attachments" / "cache-design.md"
    ).read_text() == text
    readers = [
        p for t, p in calls(stub) if t.get("phase") in ("opening", "cross-exam", "synthesis")
    ]
    assert len(readers) == 5
    for prompt in readers:
        section = attachment_section(prompt)
        # The compressed view fills its budget: at least 90% of it, never more.
        [body] = attachment_bodies(section)
        assert 0.9 * PROMPT_BUDGET_CHARS <= len(body) <= PROMPT_BUDGET_CHARS
        share = len(body) * 100 // len(text)
        assert (
            f'<attachment name="cache-design.md" compressed="{len(text)} → {len(body)} '
            f'characters, {share}% kept; code kept whole">'
        ) in section
        assert re.search(r"\[\.\.\. \d+ lines compressed\.", section)
        for block in blocks:
            assert text[block.start : block.end] in section  # byte for byte, fences included
        assert "Paragraph 0:" in section and "Paragraph 299:" in section
        assert "Paragraph 150:" not in section


def test_a_file_of_few_long_lines_is_wrapped_before_it_is_compressed(
    council: Council, stub: StubServer, small_roster: str, tmp_path: Path
) -> None:
    long_code = "x = [" + ", ".join(str(i) for i in range(120)) + "]"
    indented = "    " + "call(argument) and " * 20
    paragraph = "The replica lags behind the primary when the batch job runs at night. " * 40
    text = "\n".join(
        [f"{paragraph}{i}" for i in range(10)]
        + ["```python", long_code, "```", indented]
        + [f"{paragraph}{i}" for i in range(10, 20)]
    )
    assert len(text.splitlines()) < 30 and len(text) > PROMPT_BUDGET_CHARS
    design = tmp_path / "one-paragraph-per-line.md"
    design.write_text(text, encoding="utf-8")

    result = council(
        "run", "--topic", "Is this replication design sound?", "--attach", str(design),
        "--personas", small_roster, "--rounds", "1", *stub_args(stub), env=STUB_ENV,
    )  # fmt: skip

    assert result.code == 0, result.err
    readers = [p for t, p in calls(stub) if t.get("phase") in ("opening", "synthesis")]
    assert len(readers) == 3
    for prompt in readers:
        section = attachment_section(prompt)
        [body] = attachment_bodies(section)
        assert 0.9 * PROMPT_BUDGET_CHARS <= len(body) <= PROMPT_BUDGET_CHARS
        assert f"```python\n{long_code}\n```" in section  # a long code line is never wrapped
        assert "lines compressed." in section


# -- refused before anything is written -----------------------------------------------------


def missing(tmp: Path) -> list[Path]:
    return [tmp / "nowhere.md"]


def binary(tmp: Path) -> list[Path]:
    path = tmp / "diagram.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    return [path]


def latin1(tmp: Path) -> list[Path]:
    path = tmp / "notes.txt"
    path.write_bytes("Schéma à revoir".encode("latin-1"))
    return [path]


def too_large(tmp: Path) -> list[Path]:
    path = tmp / "dump.sql"
    path.write_bytes(b"-- x\n" * (MAX_ATTACHMENT_BYTES // 5 + 1))
    return [path]


def too_large_together(tmp: Path) -> list[Path]:
    paths = []
    for name in ("a.md", "b.md", "c.md"):
        path = tmp / name
        path.write_bytes(b"word " * (MAX_TOTAL_ATTACHMENT_BYTES // 15 + 1))
        paths.append(path)
    return paths


def a_folder(tmp: Path) -> list[Path]:
    path = tmp / "docs"
    path.mkdir()
    return [path]


def empty(tmp: Path) -> list[Path]:
    path = tmp / "plan.md"
    path.write_text("  \n")
    return [path]


def same_name(tmp: Path) -> list[Path]:
    for folder in ("one", "two"):
        (tmp / folder).mkdir()
        (tmp / folder / "Plan.md").write_text("# Plan\n")
    (tmp / "two" / "Plan.md").rename(tmp / "two" / "plan.md")
    return [tmp / "one" / "Plan.md", tmp / "two" / "plan.md"]


def hidden(tmp: Path) -> list[Path]:
    path = tmp / ".env"
    path.write_text("SECRET=1\n")
    return [path]


REFUSED: dict[str, tuple[Callable[[Path], list[Path]], str]] = {
    "missing": (missing, "does not exist"),
    "binary": (binary, "is a binary file"),
    "not UTF-8": (latin1, "is not UTF-8 text"),
    "too large": (too_large, "is too large"),
    "too large together": (too_large_together, "bytes together"),
    "a folder": (a_folder, "is a directory"),
    "empty": (empty, "is empty"),
    "same name": (same_name, "have the same name"),
    "hidden": (hidden, "hidden name"),
}


@pytest.mark.parametrize("case", list(REFUSED))
@pytest.mark.parametrize("command", ["new", "run"])
def test_a_bad_attachment_is_refused_before_anything_is_written(
    council: Council, tmp_path: Path, small_roster: str, case: str, command: str
) -> None:
    make, message = REFUSED[case]
    files = make(tmp_path)
    attach = [arg for path in files for arg in ("--attach", str(path))]
    args = (
        ["new", "Is this plan safe?", *attach]
        if command == "new"
        else ["run", "--topic", "Is this plan safe?", "--personas", small_roster, *attach]
    )

    first = council(*args)

    assert first.code == 2, first.err
    assert message in first.err
    assert str(files[-1].name) in first.err or case == "too large together"
    assert not council.root.exists()  # not even the root was created

    council.new("An earlier debate?")
    before = council.tree()
    again = council(*args)
    assert again.code == 2
    assert council.tree() == before
