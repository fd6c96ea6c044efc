"""What each call of `run` reads, from the prompts a logging `command:` model received.

Every persona, the check and the synthesizer are one program that writes the prompt it
reads on stdin to a file and answers like the scripted provider. The prompts show: the
peers' whole round-2 answers in round 3, the round-3 answers in round 4, the persona's
own previous answer in round 2, the critic reading its peer's arguments before any table
of stances, a check with no convergence figure, and attachments over the budget filling
at least 90% of it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting.attachments import PROMPT_BUDGET_CHARS
from dreamcontext_council.folder.paths import Root

from .support import OPTIONS, TOPIC, Council, roster_file

SLUGS = ("risk-auditor", "growth-cfo", "platform-lead", "data-steward")
LOGGING_MODEL = """\
import json, os, sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
prompt = sys.stdin.read()
task = task_from_text(prompt)
name = "{phase}-{persona}-{round}-{pid}.json".format(
    phase="repair" if task.get("repair") else task.get("phase"),
    persona=task.get("persona", "orchestrator"), round=task.get("round", 0), pid=os.getpid(),
)
with open(os.path.join(sys.argv[1], name), "w", encoding="utf-8") as log:
    json.dump({"task": task, "prompt": prompt}, log)
print(scripted_text(task))
"""


def design(paragraphs: int = 2000) -> str:
    """A design document far over the prompt budget, with code to keep whole."""
    lines = ["# Session store design", ""]
    for i in range(paragraphs):
        lines += [f"Paragraph {i}: sessions of tenant {i} expire after {i % 9} hours.", ""]
        if i == paragraphs // 2:
            lines += ["```python", "def expire(session):", "    return session.ttl", "```", ""]
    return "\n".join(lines)


def prompts_by_call(folder: Path) -> dict[tuple[str, str, int], str]:
    """(phase, persona, round) → the prompt the program read (one call each)."""
    found: dict[tuple[str, str, int], str] = {}
    for path in folder.iterdir():
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        task = data["task"]
        key = (str(task.get("phase")), str(task.get("persona", "orchestrator")), task["round"])
        assert key not in found, f"asked twice: {key}"
        found[key] = data["prompt"]
    return found


def attachment_bodies(prompt: str) -> list[str]:
    return re.findall(
        r'<attachment name="[^"]*"(?: \w+="[^"]*")?>\n(.*?)\n</attachment>', prompt, re.S
    )


def test_each_call_reads_the_tested_material_in_the_order_that_resists_conformity(
    council: Council, tmp_path: Path
) -> None:
    logs = tmp_path / "prompts"
    logs.mkdir()
    script = tmp_path / "logging_model.py"
    script.write_text(LOGGING_MODEL, encoding="utf-8")
    model = f"command:{sys.executable} {script} {logs}"
    attached = tmp_path / "design.md"
    text = design()
    attached.write_text(text, encoding="utf-8")
    assert len(text) > 2 * PROMPT_BUDGET_CHARS

    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS,
        "--personas", roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, model)),
        "--check-model", model, "--synth-model", model,
        "--attach", str(attached), "--rounds", "4",
    )  # fmt: skip

    assert result.code == 0, result.err
    debate_id = result.last_line
    files = DebateFiles(Root(council.root), debate_id)
    assert files.debate().status.phase == "complete"
    calls = prompts_by_call(logs)
    assert {k[0] for k in calls} == {"opening", "cross-exam", "rebuttal", "check", "synthesis"}
    entries = {slug: {e.round: e.body for e in files.entries(slug)} for slug in SLUGS}

    for slug in SLUGS:
        peers = [p for p in SLUGS if p != slug]
        # Round 2: its own round-1 answer, whole, and the ask to update it.
        cross = calls[("cross-exam", slug, 2)]
        assert entries[slug][1] in cross
        assert "refer to your earlier answer instead of repeating it" in cross
        # The critic reads its peer's arguments first, and no table of stances at all.
        peer = re.search(r"## Your cross-examination assignment: (\S+)", cross)
        assert peer is not None
        assert cross.index(entries[peer.group(1)][1]) < cross.index("## What the other personas")
        assert "## Where the council stood" not in cross
        assert not re.search(rf"\*\*{re.escape(peer.group(1))}\*\*: [AB] \d+", cross)
        # Round 3: every peer's whole round-2 answer (with its cross-examination).
        rebuttal = calls[("rebuttal", slug, 3)]
        for other in peers:
            assert entries[other][2] in rebuttal
            assert "### Cross-examination" in entries[other][2]
        # Round 4: every peer's round-3 rebuttal, whole.
        for other in peers:
            assert entries[other][3] in calls[("rebuttal", slug, 4)]
        # No count of stances in any round.
        assert "## Where the council stood" not in rebuttal

    # The check reads what is unanswered, and no convergence figure.
    for number in (2, 3):
        check = calls[("check", "orchestrator", number)]
        assert "## Still unanswered" in check
        assert not re.search(r"convergence|\d+\s*%", check, re.I)
    assert "Critiques their target has not answered yet:" in calls[("check", "orchestrator", 2)]
    # After round 3 every target's rebuttal named its critic in its Reactions to peers.
    assert "Every critique has been answered by its target." in calls[("check", "orchestrator", 3)]

    # Attachments over the budget: at least 90% of it, never more, code whole.
    readers = [p for (phase, _, _), p in calls.items() if phase != "check"]
    assert len(readers) == 4 * 4 + 1
    for prompt in readers:
        [body] = attachment_bodies(prompt)
        assert 0.9 * PROMPT_BUDGET_CHARS <= len(body) <= PROMPT_BUDGET_CHARS
        assert "```python\ndef expire(session):\n    return session.ttl\n```" in body
        assert re.search(r'compressed="\d+ → \d+ characters, \d+% kept; code kept whole"', prompt)

    # The synthesizer reads the arguments first and the vote table last.
    synthesis = calls[("synthesis", "orchestrator", 4)]
    order = [
        synthesis.index("## The rounds"),
        synthesis.index("## Cross-examination scores"),
        synthesis.index("## How the debating ended"),
        synthesis.index("## Verdict record"),
    ]
    assert order == sorted(order)
    assert "After round 3: CONTINUE" in synthesis


# Answers like the scripted provider and logs every prompt it reads, whole; the check always
# answers CONTINUE (four rounds are run), round 3's first answer of one persona and the
# first synthesis break their contract once, so the repair prompts are read too.
COUNTING_MODEL = """\
import json, os, sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
prompt = sys.stdin.read()
task = task_from_text(prompt)
folder = sys.argv[1]
with open(os.path.join(folder, "calls.jsonl"), "a", encoding="utf-8") as log:
    log.write(json.dumps({"task": task, "prompt": prompt}) + "\\n")
phase = task.get("phase")
answer = "CONTINUE" if phase == "check" else scripted_text(task)
first = (phase, task.get("persona"), task.get("round"), task.get("repair"))
broken = first in (("rebuttal", "growth-cfo", 3, None), ("synthesis", None, 4, None))
if broken:
    answer = answer.split("```")[0]
print(answer)
"""
# A line that lists a persona with a stance letter and a conviction, and a heading that
# does (`- **contrarian**: B 70 — "..."`, `### contrarian — B 70: "..."`).
STANCE_LINE = re.compile(r"^\s*-\s*\*\*[a-z0-9-]+\*\*:\s*[A-Z]\s+\d{1,3}\b", re.M)
STANCE_HEADING = re.compile(r"^#{2,4}\s+[a-z0-9-]+(?: \(a person\))?\s+—\s+[A-Z]\s+\d{1,3}\b", re.M)


def test_no_prompt_carries_a_machine_line_or_the_count(council: Council, tmp_path: Path) -> None:
    assert STANCE_LINE.search('- **contrarian**: B 70 — "Stay"')
    assert STANCE_HEADING.search('### contrarian — B 70: "Stay"')
    logs = tmp_path / "prompts"
    logs.mkdir()
    script = tmp_path / "counting_model.py"
    script.write_text(COUNTING_MODEL, encoding="utf-8")
    model = f"command:{sys.executable} {script} {logs}"

    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS,
        "--personas", roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, model)),
        "--check-model", model, "--synth-model", model, "--baseline", "--rounds", "4",
    )  # fmt: skip

    assert result.code == 0, result.err
    files = DebateFiles(Root(council.root), result.last_line)
    assert files.debate().status.phase == "complete"
    assert "## Verdict" in files.paths.final_report.read_text(encoding="utf-8")
    calls = [json.loads(line) for line in (logs / "calls.jsonl").read_text("utf-8").splitlines()]
    kinds = {
        ("repair" if c["task"].get("repair") else c["task"].get("phase"), c["task"].get("round"))
        for c in calls
    }
    expected = {("baseline", 1), ("opening", 1), ("cross-exam", 2), ("repair", 3), ("repair", 4)}
    expected |= {("rebuttal", 3), ("rebuttal", 4), ("check", 2), ("check", 3), ("synthesis", 4)}
    assert kinds == expected
    # Every persona answered every round, each call read as its own.
    debating = [
        c["task"]
        for c in calls
        if c["task"]["phase"] in ("opening", "cross-exam", "rebuttal")
        and not c["task"].get("repair")
    ]
    assert sorted((t["persona"], t["round"]) for t in debating) == sorted(
        (slug, number) for slug in SLUGS for number in range(1, 5)
    )

    for call in calls:
        prompt = call["prompt"]
        if call["task"]["phase"] == "synthesis":
            # The synthesizer's vote table is last, and only there.
            record = prompt.rindex("\n## Verdict record\n")
            assert re.search(r"^\| risk-auditor \| [AB] \d+ \|", prompt[record:], re.M)
            prompt = prompt[:record]
        assert "council-call" not in prompt
        assert '"split"' not in prompt
        assert not STANCE_LINE.search(prompt), STANCE_LINE.search(prompt)
        assert not STANCE_HEADING.search(prompt), STANCE_HEADING.search(prompt)
