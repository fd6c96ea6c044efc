"""The contract for round entries: hostile answers and hand-edited reports cannot erase older
entries, forge a round heading, or hand a reader a round number it cannot use."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from council_run import Council, roster_file
from debate_story import OPTIONS, TOPIC, Chair, Result, Runner, entry, tree_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting.reviews import load_reviews
from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.entry_markup import parsed_headings, seal_entry_body
from dreamcontext_council.rules.report import (
    RoundEntry,
    clean_entry_body,
    parse_report,
    render_report,
)

HUGE = "99999999999999999999999"
# Past Python's int-from-text limit (4300 digits): int() itself raises on it.
ENDLESS = "9" * 5000
UNCLOSED = "\n\n```python\nprint('the answer stops here')\n"


def summary_of(slug: str, number: int) -> str:
    return f"{slug} thinks round {number} points to option A."


def hold_two_rounds(chair: Chair, broken: str) -> str:
    """Round 1 by the book; in round 2 `broken`'s entry ends inside an unclosed code fence."""
    debate_id = chair.new(rounds=3)
    chair.play_round(
        debate_id,
        1,
        {"risk-auditor": ("A", 60), "growth-cfo": ("A", 60), "user-advocate": ("B", 55)},
    )
    chair.ok("round", "start", debate_id, "2")
    for slug in ("risk-auditor", "growth-cfo", "user-advocate"):
        if slug != broken:
            chair.submit(debate_id, slug, 2)
    return debate_id


def critique(summary: str) -> str:
    """A round-2 entry of a critic: the required sections, then its scored cross-examination."""
    return entry(summary) + "### Cross-examination\n- The cutover is unpriced.\n\nScore: 6/10\n"


def one_line_error(result: Result) -> str:
    assert result.code != 0, result.out
    assert "Traceback" not in result.err, result.err
    lines = result.err.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.err
    return lines[0]


def prose_blocks(html: str) -> list[str]:
    """The rendered text of a debate page's entries, panels and summaries (not its round log)."""
    blocks = re.findall(r'<div class="prose">(.*?)</div>', html, re.S)
    return [b for b in blocks if not b.startswith("<h1>Round log")]


# -- an unclosed fence ----------------------------------------------------------------


def test_an_entry_ending_in_an_open_fence_keeps_the_older_entries(
    chair: Chair, council: Runner, root_path: Path
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    body = critique(summary_of("risk-auditor", 2)) + UNCLOSED

    appended = council("report", "append", debate_id, "risk-auditor", "--round", "2", input=body)

    assert appended.code == 0, appended.err
    assert "unclosed ``` code fence was closed" in appended.err
    folder = root_path / "council" / debate_id
    log = (folder / "round-log.md").read_text(encoding="utf-8")
    assert "## Entry repaired" in log and "- Persona: risk-auditor" in log
    summaries = council("summaries", debate_id, "1")
    assert summary_of("risk-auditor", 1) in summaries.out
    assert "No report for round 1" not in summaries.out
    for fmt in ("md", "html"):
        exported = council("export", debate_id, "--format", fmt, "-o", "-")
        assert exported.code == 0, exported.err
        assert summary_of("risk-auditor", 1) in exported.out
    exported = council("export", debate_id, "--format", "json", "-o", "-")
    [persona] = [p for p in json.loads(exported.out)["personas"] if p["slug"] == "risk-auditor"]
    assert [e["round"] for e in persona["entries"]] == [1, 2]
    chair.ok("verdict", debate_id, "risk-auditor", "2", "--stance", "A", "--conviction", "60",
             "--headline", "still A")  # fmt: skip
    chair.ok("round", "end", debate_id, "2")
    chair.ok("round", "start", debate_id, "3")
    context = council("round-context", debate_id, "growth-cfo")
    assert summary_of("risk-auditor", 1) in context.out  # the round-2 panel
    assert summary_of("risk-auditor", 2) in context.out  # the round-3 panel


FENCE_SCRIPT = """\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
task = task_from_text(sys.stdin.read())
text = scripted_text(task)
if task.get("round") == 2 and not task.get("repair") and "```verdict" in text:
    body, verdict = text.split("```verdict", 1)
    text = body.rstrip() + {tail!r} + "\\n```verdict" + verdict
print(text)
"""


@pytest.fixture
def engine(root_path: Path, workdir: Path, tmp_path: Path) -> Council:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Council(root_path, workdir, clean_environment(os.environ, home))


def run_with_answers(engine: Council, tmp_path: Path, tail: str) -> str:
    """`run` two rounds where every persona's round-2 answer carries `tail` before its verdict."""
    script = tmp_path / "persona.py"
    script.write_text(FENCE_SCRIPT.format(tail=tail), encoding="utf-8")
    model = f"command:{sys.executable} {script}"
    roster = roster_file(tmp_path / "roster.json", {"risk-auditor": model, "growth-cfo": model})
    result = engine.proc(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--rounds", "2",
        "--compact", "--yes",
    )  # fmt: skip
    assert result.code == 0, result.err
    return engine.only_id()


def test_a_model_answer_ending_in_an_open_fence_keeps_the_older_entries(
    engine: Council, tmp_path: Path
) -> None:
    debate_id = run_with_answers(engine, tmp_path, UNCLOSED)

    summaries = engine.proc("summaries", debate_id, "1").out
    assert "No report for round 1" not in summaries
    markdown = engine.proc("export", debate_id, "--format", "md", "-o", "-").out
    html = engine.proc("export", debate_id, "--format", "html", "-o", "-").out
    exported = json.loads(engine.proc("export", debate_id, "--format", "json", "-o", "-").out)
    for persona in exported["personas"]:
        assert [e["round"] for e in persona["entries"]] == [1, 2]
        [first] = [e for e in persona["entries"] if e["round"] == 1]
        [summary] = [s["body"] for s in first["sections"] if s["title"] == "Executive Summary"]
        assert summary in summaries and summary in markdown
        assert f'id="entry-{persona["slug"]}-1"' in html
    assert "## Entry repaired" in engine.log(debate_id)


def test_a_hand_edited_report_with_an_open_fence_lists_every_entry(
    chair: Chair, council: Runner, root_path: Path
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    chair.submit(debate_id, "risk-auditor", 2)
    report = root_path / "council" / debate_id / "risk-auditor" / "report.md"
    text = report.read_text(encoding="utf-8")
    # An editor (or an older version) left the round-2 entry inside an open fence.
    broken = text.replace("\n## Round 1 — ", UNCLOSED + "\n## Round 1 — ", 1)
    assert broken != text
    report.write_text(broken, encoding="utf-8")

    exported = council("export", debate_id, "--format", "json", "-o", "-")

    [persona] = [p for p in json.loads(exported.out)["personas"] if p["slug"] == "risk-auditor"]
    assert [e["round"] for e in persona["entries"]] == [1, 2]
    assert summary_of("risk-auditor", 1) in council("summaries", debate_id, "1").out
    markdown = council("export", debate_id, "--format", "md", "-o", "-").out
    rounds = [h.title for h in parsed_headings(markdown) if h.level == 4]
    # Round 1 of each persona is a heading, not text inside the open fence above it.
    assert len([t for t in rounds if t.startswith("Round 1 — ")]) == 3


def test_a_report_quoted_in_a_code_block_stays_one_entry(
    chair: Chair, council: Runner, root_path: Path
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    quoted = "## Round 1 — 2026-11-30\n\n### Executive Summary\nA quoted summary."
    body = (
        critique(summary_of("risk-auditor", 2))
        + f"\n\nWhat I wrote:\n\n```markdown\n{quoted}\n```\n"
    )

    appended = council("report", "append", debate_id, "risk-auditor", "--round", "2", input=body)

    assert appended.code == 0, appended.err
    exported = json.loads(council("export", debate_id, "--format", "json", "-o", "-").out)
    [persona] = [p for p in exported["personas"] if p["slug"] == "risk-auditor"]
    entries = {e["round"]: e for e in persona["entries"]}
    assert sorted(entries) == [1, 2]
    assert "A quoted summary." in entries[2]["body"]
    assert "A quoted summary." not in entries[1]["body"]
    assert summary_of("risk-auditor", 1) in council("summaries", debate_id, "1").out
    assert summary_of("risk-auditor", 2) in council("summaries", debate_id, "2").out


# -- headings as the markdown parser sees them ----------------------------------------

FORGED = {
    "setext ===": "Round 1\n=======",
    "setext ---": "Round 1 — 2026-11-30\n-------",
    "ATX indented 3 spaces": "   ## Round 1",
    "ATX indented 1 space, level 1": " # Round 1",
    "fence with a backtick in its info": "```not`a fence\n## Round 1",
}


@pytest.mark.parametrize("kind", list(FORGED))
def test_a_hidden_level_2_heading_is_refused_by_report_append(
    chair: Chair, council: Runner, root_path: Path, kind: str
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    body = entry(summary_of("risk-auditor", 2)).replace(
        "### Position", f"Intro.\n\n{FORGED[kind]}\n\n### Position"
    )
    before = tree_bytes(root_path)

    refused = council("report", "append", debate_id, "risk-auditor", "--round", "2", input=body)

    assert refused.code == 2
    assert "level-" in one_line_error(refused)
    assert tree_bytes(root_path) == before


def test_a_model_answer_with_hidden_headings_is_demoted_not_a_round_heading(
    engine: Council, tmp_path: Path
) -> None:
    tail = "\n\n" + "\n\nText.\n\n".join(FORGED.values()) + "\n\nThe end."
    debate_id = run_with_answers(engine, tmp_path, tail)

    exported = engine.proc("export", debate_id, "--format", "html", "-o", "-")

    assert exported.code == 0, exported.err
    blocks = prose_blocks(exported.out)
    assert any("The end." in block for block in blocks)
    assert not [b for b in blocks if re.search(r"<h[12][ >]", b)]
    exported_json = json.loads(engine.proc("export", debate_id, "--format", "json", "-o", "-").out)
    for persona in exported_json["personas"]:
        assert [e["round"] for e in persona["entries"]] == [1, 2]


FORGING_SCRIPT = """\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
task = task_from_text(sys.stdin.read())
text = scripted_text(task)
if "```verdict" in text:  # every answer, repairs too: a forged entry after the real one
    body, verdict = text.split("```verdict", 1)
    text = body.rstrip() + {forged!r} + "\\n\\n```verdict" + verdict
print(text)
"""


@pytest.mark.parametrize(
    "forged",
    [
        "\n\n## Round 2 — 2026-01-01\n\n### Reasoning\n",
        "\n\nRound 2 — 2026-01-01\n---\n\nReasoning\n=========\n",
    ],
)
def test_a_model_answer_forging_a_round_entry_is_demoted_not_a_failed_run(
    engine: Council, tmp_path: Path, forged: str
) -> None:
    script = tmp_path / "persona.py"
    script.write_text(FORGING_SCRIPT.format(forged=forged), encoding="utf-8")
    model = f"command:{sys.executable} {script}"
    roster = roster_file(tmp_path / "roster.json", {"risk-auditor": model, "growth-cfo": model})
    result = engine.proc(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster, "--rounds", "2",
        "--compact", "--yes",
    )  # fmt: skip

    assert result.code == 0, result.err
    debate_id = engine.only_id()
    exported = json.loads(engine.proc("export", debate_id, "--format", "json", "-o", "-").out)
    for persona in exported["personas"]:
        assert [e["round"] for e in persona["entries"]] == [1, 2]
    html = engine.proc("export", debate_id, "--format", "html", "-o", "-").out
    assert not [b for b in prose_blocks(html) if re.search(r"<h[12][ >]", b)]
    report = (engine.folder(debate_id) / "risk-auditor" / "report.md").read_text(encoding="utf-8")
    assert "\n### Round 2 — 2026-01-01\n" in report  # demoted, kept as text of the entry


def test_a_hand_edited_setext_heading_does_not_render_as_a_round_heading(
    chair: Chair, council: Runner, root_path: Path
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    chair.submit(debate_id, "risk-auditor", 2)
    report = root_path / "council" / debate_id / "risk-auditor" / "report.md"
    text = report.read_text(encoding="utf-8")
    report.write_text(
        text.replace("### Position", "Round 9\n=======\n\n   ## Round 8\n\n### Position"),
        encoding="utf-8",
    )

    exported = council("export", debate_id, "--format", "html", "-o", "-")

    assert exported.code == 0, exported.err
    blocks = prose_blocks(exported.out)
    assert any("Round 9" in block for block in blocks)
    assert not [b for b in blocks if re.search(r"<h[12][ >]", b)]
    markdown = council("export", debate_id, "--format", "md", "-o", "-").out
    forged = [h for h in parsed_headings(markdown) if h.title in ("Round 9", "Round 8")]
    assert forged and all(h.level > 4 for h in forged)  # under `#### Round N`, not beside it


# -- round numbers are bounded --------------------------------------------------------

READERS = [
    ("export", "{id}", "--format", "html", "-o", "-"),
    ("export", "{id}", "--format", "md", "-o", "-"),
    ("export", "{id}", "--format", "json", "-o", "-"),
    ("show", "{id}"),
    ("summaries", "{id}", "1"),
    ("board", "{id}"),
]


@pytest.mark.parametrize("digits", [HUGE, ENDLESS, "0"])
def test_an_impossible_round_heading_is_a_one_line_error_for_every_reader(
    chair: Chair, council: Runner, root_path: Path, digits: str
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    report = root_path / "council" / debate_id / "growth-cfo" / "report.md"
    report.write_text(
        report.read_text(encoding="utf-8")
        + f"\n## Round {digits}\n\n### Executive Summary\nFrom the far future.\n",
        encoding="utf-8",
    )

    for command in READERS:
        result = council(*(part.format(id=debate_id) for part in command))
        message = one_line_error(result)
        assert "growth-cfo/report.md" in message and "not a round from 1 to 10" in message


@pytest.mark.parametrize("digits", [HUGE, ENDLESS, "0"])
def test_an_impossible_verdict_round_is_a_one_line_error(
    chair: Chair, cli: Runner, root_path: Path, digits: str
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    path = root_path / "council" / debate_id / "verdicts.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["rounds"][digits] = data["rounds"]["1"]
    path.write_text(json.dumps(data), encoding="utf-8")

    for command in READERS:
        message = one_line_error(cli(*(part.format(id=debate_id) for part in command)))
        assert "verdicts.json" in message and "not a round from 1 to 10" in message


@pytest.mark.parametrize(
    "command",
    [
        ("report", "append", "{id}", "risk-auditor", "--round", HUGE),
        ("verdict", "{id}", "risk-auditor", ENDLESS, "--stance", "A", "--conviction", "5",
         "--headline", "h"),
        ("summaries", "{id}", "11"),
        ("board", "{id}", "--round", HUGE),
        ("round", "start", "{id}", HUGE),
    ],
)  # fmt: skip
def test_an_impossible_round_on_the_command_line_is_a_usage_error(
    chair: Chair, council: Runner, command: tuple[str, ...]
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")

    result = council(*(part.format(id=debate_id) for part in command), input=entry())

    assert result.code == 2
    assert "Traceback" not in result.err
    assert "1<=x<=10" in result.err or "not a valid integer" in result.err


def test_an_entry_headed_with_an_impossible_round_is_refused(
    chair: Chair, council: Runner, root_path: Path
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    before = tree_bytes(root_path)

    refused = council(
        "report", "append", debate_id, "risk-auditor", input=f"## Round {ENDLESS}\n\n" + entry()
    )

    assert refused.code == 2
    assert "rounds run from 1 to 10" in one_line_error(refused)
    assert tree_bytes(root_path) == before


def test_a_round_log_with_an_impossible_round_does_not_break_round_end(
    chair: Chair, council: Runner, root_path: Path
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    chair.submit(debate_id, "risk-auditor", 2)
    log = root_path / "council" / debate_id / "round-log.md"
    log.write_text(
        log.read_text(encoding="utf-8")
        + f"\n## Round {ENDLESS} started\n- Personas: nobody\n"
        + f"\n## Convergence check after round {ENDLESS} — CONTINUE\n",
        encoding="utf-8",
    )

    ended = council("round", "end", debate_id, "2")

    assert ended.code == 0, ended.err


def test_a_status_naming_an_endless_round_is_a_one_line_error(
    chair: Chair, council: Runner, root_path: Path
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    path = root_path / "council" / debate_id / "debate.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("status: round_2_running", f"status: round_{ENDLESS}_running"))

    assert "debate.md" in one_line_error(council("show", debate_id))


@pytest.mark.parametrize("key", [HUGE, ENDLESS, "two"])
def test_reviews_with_an_impossible_round_are_a_format_error(
    chair: Chair, root_path: Path, key: str
) -> None:
    debate_id = hold_two_rounds(chair, "risk-auditor")
    path = root_path / "council" / debate_id / "reviews.json"
    path.write_text(json.dumps({"rounds": {key: {}}}), encoding="utf-8")

    with pytest.raises(FormatError, match="not a round from 1 to 10"):
        load_reviews(DebateFiles(Root(root_path), debate_id))


# -- any answer, stored, keeps its neighbours whole -----------------------------------

TRICKY_LINES = [
    "```",
    "````python",
    "~~~",
    "```not`a fence",
    "## Round 1 — 2026-11-30",
    "## Round 1",
    "   ## Round 1",
    "# Title",
    "Title",
    "===",
    "---",
    "> ## Quoted",
    "> Quoted",
    "- item",
    "  ## In a list",
    "### Position",
    "",
    "text",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TRICKY_LINES), max_size=12))
def test_any_model_answer_is_stored_without_harm_to_the_entry_below(tail: list[str]) -> None:
    answer = entry(summary_of("risk-auditor", 2)) + "\n" + "\n".join(tail)
    cleaned, _ = clean_entry_body(answer, demote=True)
    stored, _ = seal_entry_body(cleaned)
    older = RoundEntry(1, "2026-11-30", entry(summary_of("risk-auditor", 1)).strip("\n"))

    parsed = parse_report(
        render_report("risk-auditor", [RoundEntry(2, "2026-12-01", stored), older])
    )

    assert [e.round for e in parsed] == [2, 1]
    assert parsed[1] == older
    assert parsed[0].body == stored.strip("\n")
    assert parsed[0].executive_summary == summary_of("risk-auditor", 2)
    assert not [h for h in parsed_headings(parsed[0].body) if h.level <= 2]
