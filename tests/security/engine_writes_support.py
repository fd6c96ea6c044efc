"""`command:` models for the engine-writes tests: one that waits on a file gate, one that
answers at great length; both answer like the scripted provider otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

GATED_SCRIPT = """\
import sys, time
from pathlib import Path
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
gate, phases, personas = Path(sys.argv[1]), sys.argv[2].split(","), sys.argv[3].split(",")
task = task_from_text(sys.stdin.read())
if task.get("phase") in phases and (personas == ["*"] or task.get("persona") in personas):
    (gate.parent / "waiting").touch()
    while not gate.exists():
        time.sleep(0.02)
print(scripted_text(task))
"""


def gated_command(
    folder: Path, gate: Path, *, phases: Sequence[str], personas: Sequence[str] = ()
) -> str:
    """A `command:` model that, for `phases` (and `personas`, when named), touches
    `gate.parent / "waiting"` and answers only once `gate` exists."""
    script = folder / "gated_model.py"
    script.write_text(GATED_SCRIPT, encoding="utf-8")
    wanted = ",".join(personas) or "*"
    return f"command:{sys.executable} {script} {gate} {','.join(phases)} {wanted}"


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll until `condition()` holds; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition never held")
        time.sleep(0.01)


LONG_SCRIPT = """\
import sys
from pathlib import Path
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
out = Path(sys.argv[1])
task = task_from_text(sys.stdin.read())
text = scripted_text(task)
filler = "```python\\n" + "x = 1  # a line of a long listing\\n" * 1500 + "```\\n"
filler += "A long paragraph of reasoning, said again and again.\\n" * 300
heading = "## Why\\n" if task.get("phase") == "synthesis" else "### Reasoning\\n"
text = text.replace(heading, heading + filler, 1)
name = task.get("persona") or "synthesizer"
(out / f"{name}-{task.get('phase')}.md").write_text(text, encoding="utf-8")
print(text)
"""


LONG_CAP_KB = 40


def long_command(folder: Path) -> str:
    """A `command:` model that answers every call with ~70 KB: a valid answer whose
    Reasoning (or the synthesis's Why) holds a long code listing and long prose; over a
    `--max-answer-kb` of LONG_CAP_KB and within the budget that is read whole (the cap
    plus `answer_read.ANSWER_ROOM`), so it is cut as the cap says. Each
    answer is also written to `folder / "<persona or synthesizer>-<phase>.md"`."""
    script = folder / "long_model.py"
    script.write_text(LONG_SCRIPT, encoding="utf-8")
    return f"command:{sys.executable} {script} {folder}"
