"""The calls in progress as the debate page and the MCP progress show them.

A run's in-flight files (`folder/in_flight.py`) tell, per call, who is asked and the text
so far. The page puts each call's text in the cell of its persona and round (the synthesis
in the report's place) as plain text; MCP progress tells the characters per call in one
line. Both are pure functions of what `read_in_flight` gave.
"""

from __future__ import annotations

import re
from typing import Any

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.in_flight import WAITING, InFlight
from dreamcontext_council.folder.names import check_slug
from dreamcontext_council.views.safe_markdown import cell_anchor

# The end of each call's text the page is sent: a cell shows a few screens of it at most.
SHOWN_CHARS = 6_000
SYNTHESIS = "(synthesis)"
# What a browser should not be handed even as plain text: C0 controls but tab and newline,
# DEL, C1, and the bidi overrides that make a line read otherwise than it says.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _place(call: InFlight) -> str:
    """Where the page shows a call: a matrix cell's id, `synthesis`, or `calls` (the list
    of other calls, such as the orchestrator's)."""
    if call.persona == SYNTHESIS:
        return "synthesis"
    try:
        return cell_anchor(check_slug(call.persona), call.round)
    except CouncilError:
        return "calls"  # the orchestrator's, or a name no cell has


def page_calls(calls: list[InFlight], shown: int = SHOWN_CHARS) -> list[dict[str, Any]]:
    """Each call as the page's `in-flight` event carries it: `to_json()` with where it goes,
    when it started and the end of its text, cleaned of control characters."""
    found = []
    for call in calls:
        text = _HIDDEN.sub("", call.text.replace("\r\n", "\n"))
        found.append(
            call.to_json()
            | {
                "place": _place(call),
                "text": text[-shown:],
                "cut": call.chars > len(text[-shown:]),
            }
        )
    return found


def progress_line(calls: list[InFlight]) -> str:
    """The calls in progress in one line, round by round, e.g. `round 1: contrarian 1,234
    chars, pragmatist 880 chars; waiting for alice`; empty with none. A call from another
    host adds `(from host <name>, not checked)`."""
    rounds: dict[int, list[str]] = {}
    waits: list[str] = []
    for call in calls:
        unchecked = f" ({call.detail})" if call.other_host else ""
        if call.state == WAITING:
            waits.append(f"waiting for {call.persona}{unchecked}")
            continue
        said = f"{call.persona} {call.chars:,} chars"
        if call.state != "streaming":
            said += f" ({call.state})"
        said += unchecked
        rounds.setdefault(call.round, []).append(said)
    parts = [f"round {number}: {', '.join(said)}" for number, said in sorted(rounds.items())]
    if waits:
        parts.append(", ".join(waits))
    line = "; ".join(parts)
    return _HIDDEN.sub("", line)
