"""A run refused after its debate folder was made takes the folder with it: the next
`run --topic` and `list` find no empty debate left behind."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from council_run import Council
from debate_story import TOPIC
from offline import no_provider_environment as no_provider_environment  # autouse here

from .command_consent_support import workspace

ORCHESTRATOR_SCRIPT = """\
import sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
task = task_from_text(sys.stdin.read())
print(ANSWER if task.get("phase") == "persona-generation" else scripted_text(task))
"""

ANSWERS = {
    "prose, not a roster": "I would seat a risk auditor and a finance lead.",
    "a roster with a bad slug": json.dumps(
        [
            {"slug": "risk-auditor", "aspects": ["risk"], "body": "You weigh risk."},
            {"slug": "../../outside", "aspects": ["cost"], "body": "You weigh cost."},
        ]
    ),
}


@pytest.mark.parametrize("answer", ANSWERS)
def test_an_auto_roster_that_is_refused_leaves_no_debate_behind(
    answer: str, tmp_path: Path
) -> None:
    council: Council = workspace(tmp_path)
    script = tmp_path / "orchestrator.py"
    script.write_text(
        ORCHESTRATOR_SCRIPT.replace("ANSWER", repr(ANSWERS[answer])), encoding="utf-8"
    )
    model = f"command:{sys.executable} {script}"

    refused = council.proc(
        "run", "--topic", TOPIC, "--personas", "auto", "--rounds", "1", "--model", model, "--yes"
    )

    assert refused.code != 0, refused.out
    assert "Traceback" not in refused.err
    assert refused.err.strip().splitlines()[-1].startswith("Error: ")
    assert council.ids() == []
    assert not (tmp_path / "outside").exists()
    listed = council.proc("list", "--all", "--json")
    assert listed.code == 0 and json.loads(listed.out) == []
    ran = council.proc("run", "--topic", TOPIC, "--rounds", "1", "--yes")
    assert ran.code == 0, ran.err
    assert council.ids() == [ran.last_line]
    assert [d["id"] for d in json.loads(council.proc("list", "--all", "--json").out)] == [
        ran.last_line
    ]
