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
