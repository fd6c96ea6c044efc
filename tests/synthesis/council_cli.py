"""The CLI against one workspace, in-process, and the debate folder read back.

The runner, rosters and report reading live in tests/council_run.py, shared with the engine
and grounding suites; the synthesis tests import them from here.
"""

from __future__ import annotations

from council_run import Council as Council
from council_run import h2_titles as h2_titles
from council_run import roster_file as roster_file
from council_run import section as section

TEST_KEY = "sk-test-synthesis-0123456789"


def openai_env(url: str) -> dict[str, str]:
    """Every default (openai) call goes to the stub server."""
    return {"OPENAI_API_KEY": TEST_KEY, "OPENAI_BASE_URL": url}
