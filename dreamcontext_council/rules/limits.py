"""How large an argument may be: one list, read by the command line and the MCP server alike.

Every limit is checked on the raw text before it is parsed, so a huge input is refused in
time proportional to nothing more than its length, never handed to a parser or a check
that takes longer. docs/mcp.md ("Limits") lists them; the MCP tools also publish them in
their input schemas.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from dreamcontext_council.errors import UsageError

# A debate.
MAX_ROUNDS = 10
MIN_PERSONAS = 2
MAX_PERSONAS = 10
MAX_TOPIC_CHARS = 4_000  # the question, a paragraph or two; context goes in attachments
MAX_OPTIONS = 12
MAX_OPTION_KEY_CHARS = 24
MAX_OPTION_LABEL_CHARS = 200
# The raw `--options` text: every option at its longest, with its `=` and `,`.
MAX_OPTIONS_CHARS = MAX_OPTIONS * (MAX_OPTION_KEY_CHARS + MAX_OPTION_LABEL_CHARS + 2)
MAX_ROSTER_FILE_BYTES = 256 * 1024  # ten personas with long bodies fit several times over
MAX_ATTACHMENTS = 20  # their sizes are bounded in rules/grounding.py (512 KiB, 1 MiB in all)

# Names and paths.
MAX_PATH_CHARS = 4_096  # PATH_MAX on Linux
MAX_MODEL_CHARS = 1_000  # provider:model, or a `command:` line
MAX_NAME_CHARS = 64  # a debate id, a persona or knowledge slug (their forms are checked after)
MAX_SECTION_CHARS = 200  # a `##` title of the final report
# The `##` sections a final report is read as (`report show`, `show`, the page, MCP
# `council_report`): a synthesis writes about ten. The reader stops at the heading that
# would start one more and says so, instead of reading on (a cloned report may hold
# hundreds of thousands of headings).
MAX_REPORT_SECTIONS = 1_000

# What a persona records.
MAX_STANCE_CHARS = MAX_OPTION_LABEL_CHARS  # an option key or label, or free text
MAX_HEADLINE_CHARS = 500
MAX_CONCESSION_CHARS = 2_000
MAX_ENTRY_CHARS = 200 * 1024  # a round entry: as much as a model's answer may be by default

# Budgets.
MAX_CALLS = 100_000
MAX_COST_USD = 100_000.0
# The longest wait for a person's entry a run takes (`--human-timeout`): thirty days.
MAX_HUMAN_TIMEOUT_S = 30 * 86_400.0

# How a run is run: each flag of `council run` and the same setting recorded in debate.md
# (`run:`, rules/run_settings.py), which a cloned folder may hold, pass the one range of
# RUN_SPANS below; not a number, an infinity or NaN never does.
MAX_TIMEOUT_S = 86_400.0  # the longest a call may go without progress (`--timeout`): a day
MAX_RETRIES = 10
MAX_CONCURRENCY = 64
MIN_WINDOW = 1_000  # characters of the synthesizer's window (`--window`)
MAX_WINDOW = 10_000_000  # also the largest compression gate (`--gate`)
MIN_ANSWER_KB = 8
MAX_ANSWER_KB = (
    10_240  # 10 MiB: an answer's cap (`--max-answer-kb`); a debate file is read up to 64 MiB
)
MAX_TOOL_CALLS = 32


class Span(NamedTuple):
    """The values one numeric setting may take: a whole number or a finite number, from
    `least` (excluded when `above_least`) to `most`."""

    least: float
    most: float
    whole: bool
    above_least: bool = False

    def holds(self, value: Any) -> bool:
        """Whether `value` (as YAML or JSON read it) is a value of this setting."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.whole and not isinstance(value, int):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = value > self.least if self.above_least else value >= self.least
        return above and value <= self.most

    def wording(self) -> str:
        """`a whole number from 1 to 64`, `a number above 0, at most 86,400`."""
        kind = "a whole number" if self.whole else "a number"
        least, most = _shown(self.least), _shown(self.most)
        if self.above_least:
            return f"{kind} above {least}, at most {most}"
        return f"{kind} from {least} to {most}"


def _shown(number: float) -> str:
    return f"{number:,.0f}" if float(number).is_integer() else f"{number:,}"


RUN_SPANS: dict[str, Span] = {
    "timeout": Span(0, MAX_TIMEOUT_S, whole=False, above_least=True),
    "retries": Span(0, MAX_RETRIES, whole=True),
    "concurrency": Span(1, MAX_CONCURRENCY, whole=True),
    "max_cost": Span(0, MAX_COST_USD, whole=False),
    "max_calls": Span(0, MAX_CALLS, whole=True),
    "gate": Span(0, MAX_WINDOW, whole=True),
    "window": Span(MIN_WINDOW, MAX_WINDOW, whole=True),
    "max_answer_kb": Span(MIN_ANSWER_KB, MAX_ANSWER_KB, whole=True),
    "max_tool_calls": Span(0, MAX_TOOL_CALLS, whole=True),
    "human_timeout": Span(0, MAX_HUMAN_TIMEOUT_S, whole=False, above_least=True),
}


def check_length(text: str, limit: int, what: str, fix: str) -> str:
    """`text` if it has at most `limit` characters; else UsageError saying so and what to do."""
    if len(text) > limit:
        raise UsageError(f"{what} is {len(text):,} characters long; the limit is {limit:,}. {fix}")
    return text
