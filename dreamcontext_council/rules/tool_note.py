"""A tool call as a research note: its topic and body, from untrusted arguments and results.

Pure and deterministic. Result text comes from a program and, through it, from anyone:
control characters are stripped (newline and tab kept), and the text sits in a fence
longer than any backtick run in it, so a heading or a fence inside it stays text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dreamcontext_council import resources
from dreamcontext_council.folder.names import slugify

RESULT_LIMIT = 16 * 1024
TOPIC_LIMIT = 80
_SUMMARY_LIMIT = 60
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_BACKTICKS = re.compile("`+")


@dataclass(frozen=True)
class Cut:
    """Text cut to a byte limit: what is kept, and both sizes in UTF-8 bytes."""

    text: str
    kept: int
    total: int

    @property
    def was_cut(self) -> bool:
        return self.kept < self.total

    @property
    def notice(self) -> str:
        """`N of M bytes` when the text was cut, else empty."""
        return f"{self.kept} of {self.total} bytes" if self.was_cut else ""


def clean(text: str) -> str:
    """`text` without control characters other than newline and tab (CR and CRLF end lines)."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def cut(text: str, limit: int) -> Cut:
    """`text` cut to at most `limit` UTF-8 bytes, never inside a character."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return Cut(text, len(data), len(data))
    kept = data[:limit].decode("utf-8", "ignore")
    return Cut(kept, len(kept.encode("utf-8")), len(data))


def fence(text: str) -> str:
    """A backtick fence longer than any backtick run in `text` (at least three)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def code_span(text: str) -> str:
    """`text` as inline code, whatever backticks it holds."""
    text = " ".join(clean(text).split())
    ticks = "`" * (max((len(r) for r in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def arguments_json(arguments: Mapping[str, Any]) -> str:
    """The arguments as indented JSON, readable (non-ASCII kept) and free of control text."""
    return clean(json.dumps(dict(arguments), ensure_ascii=False, indent=2, default=str))


def topic(tool: str, arguments: Mapping[str, Any], outcome: str) -> str:
    """`<tool>: <argument values>`, e.g. `lookup: postgres write throughput`, plus the
    outcome in brackets when the call did not succeed."""
    values = [v if isinstance(v, str) else json.dumps(v, default=str) for v in arguments.values()]
    summary = " ".join(clean(", ".join(values)).split())
    if len(summary) > _SUMMARY_LIMIT:
        summary = summary[:_SUMMARY_LIMIT].rsplit(" ", 1)[0] + "..."
    name = " ".join(clean(tool).split())[:40]
    text = f"{name}: {summary}" if summary else name
    if outcome != "ok":
        text += f" ({outcome})"
    text = text[:TOPIC_LIMIT]
    if not slugify(text, TOPIC_LIMIT):  # nothing to name a file by: a tool named in CJK, say
        text = f"tool call: {text}"[:TOPIC_LIMIT]
    return text


_OUTCOME_LINE = re.compile(r"^- \*\*Outcome:\*\* (\S+)\s*$", re.M)
_ROUND_LINE = re.compile(r"^- \*\*Round:\*\* (\d{1,2})\s*$", re.M)


@dataclass(frozen=True)
class CallFacts:
    """What a tool-call note says of its call: the round it was made in and its outcome."""

    round: int
    outcome: str


def call_facts(note_text: str) -> CallFacts | None:
    """The round and outcome of the call a note records; None for a note written by hand."""
    number, outcome = _ROUND_LINE.search(note_text), _OUTCOME_LINE.search(note_text)
    if number is None or outcome is None:
        return None
    return CallFacts(int(number.group(1)), outcome.group(1))


def failed_call(note_text: str) -> bool:
    """Whether a note records a tool call that gave no result (an error, a timeout, a denial).

    Such a note is a record, not evidence. A note written by hand has no outcome line."""
    found = _OUTCOME_LINE.search(note_text)
    return found is not None and found.group(1) != "ok"


def body(
    *,
    tool: str,
    server: str,
    round: int,
    outcome: str,
    arguments: Mapping[str, Any],
    result: Cut,
    limit: int,
    called_at: str,
    latency_s: float,
) -> str:
    """The note's body: tool, round, outcome, time, the arguments and the (cut) result."""
    shown_arguments = cut(arguments_json(arguments), limit)
    return resources.render(
        "files/tool-call-note.md.j2",
        tool=code_span(tool),
        server=code_span(server),
        round=round,
        outcome=outcome,
        called_at=called_at,
        duration=f"{latency_s:.2f} s",
        arguments=shown_arguments.text,
        arguments_cut=shown_arguments.notice,
        arguments_fence=fence(shown_arguments.text),
        result=result.text,
        result_cut=result.notice,
        result_fence=fence(result.text),
    )
