"""What a model says around its answer ("Sure! Here is…", "Let me know if…") is not report text."""

from __future__ import annotations

import sys
from pathlib import Path

from dreamcontext_council.engine.protocol.contract import parse_persona_answer

from .support import OPTIONS, TOPIC, Council

REGISTERED = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay on Redis"}]
ENTRY = """### Executive Summary
Migrate behind a dual-write window.

### Position
A.

### Reasoning
Writes peak at 9k/s.

### Reactions to peers
None yet.

### Open questions
How long a window?"""
VERDICT = """```verdict
stance: A
conviction: 60
headline: Migrate with a rollback plan
concession: none
```"""
CHATTY = f"Sure! Here is my analysis as the risk auditor.\n\n{ENTRY}\n\n{VERDICT}\n\nLet me know if you want more."


def test_text_before_the_sections_and_after_the_verdict_is_left_out() -> None:
    answer = parse_persona_answer(CHATTY, REGISTERED, REGISTERED)

    assert answer.body == ENTRY
    assert answer.trimmed


def test_an_answer_without_chatter_is_kept_whole() -> None:
    answer = parse_persona_answer(f"{ENTRY}\n\n{VERDICT}\n", REGISTERED, REGISTERED)

    assert answer.body == ENTRY
    assert not answer.trimmed


CHATTY_PERSONA = """\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
task = task_from_text(sys.stdin.read())
text = scripted_text(task)
if task.get("phase") not in ("synthesis", "check"):
    text = "Sure! Here is my answer.\\n\\n" + text + "\\n\\nLet me know if you need more."
print(text)
"""


def test_a_run_stores_the_entry_and_keeps_the_whole_answer_beside_it(
    council: Council, tmp_path: Path
) -> None:
    script = tmp_path / "chatty.py"
    script.write_text(CHATTY_PERSONA, encoding="utf-8")
    model = f"command:{sys.executable} {script}"

    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--model", model
    )

    assert result.code == 0, result.err
    debate_id = result.last_line
    folder = council.folder(debate_id)
    for persona in council.meta(debate_id)["personas"]:
        report = (folder / persona / "report.md").read_text(encoding="utf-8")
        assert "Sure! Here is" not in report and "Let me know" not in report
        raw = (folder / persona / "raw" / "round-1.md").read_text(encoding="utf-8")
        assert raw.startswith("Sure! Here is my answer.")
        assert "Let me know if you need more." in raw
