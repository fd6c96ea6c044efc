"""Reading back what the synthesizer was sent and what the engine logged about it."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from stub_server import RecordedRequest

from .chamber import request_task

_ANSWER = re.compile(
    r'<answer persona="([^"]+)" round="(\d+)"(?: final="yes")?( compressed="true")?>\n(.*?)\n</answer>',
    re.S,
)
_SEAT = re.compile(
    r"^- seat (\d+): (\S+) R(\d+) (kept verbatim|kept whole|compressed)"
    r"(?: \((?:tightened: )?first (\d+), last (\d+) lines\))? \(([\d,]+) → ([\d,]+)\)$"
)


class SentAnswer(NamedTuple):
    persona: str
    round: int
    compressed: bool
    text: str


class Seat(NamedTuple):
    seat: int
    persona: str
    round: int
    compressed: bool
    original_chars: int
    view_chars: int
    lines_kept: tuple[int, int] | None = None
    """(first, last) lines the log says a compressed answer kept."""


def sent_answers(user_message: str) -> dict[tuple[str, int], SentAnswer]:
    """The `<answer>` elements of a synthesis prompt, by (persona, round)."""
    found = {}
    for persona, number, compressed, text in _ANSWER.findall(user_message):
        found[(persona, int(number))] = SentAnswer(persona, int(number), bool(compressed), text)
    return found


def seats(round_log: str, heading: str = "## Compression before synthesis") -> list[Seat]:
    """The seat lines of the last compression entry of round-log.md."""
    entry = round_log[round_log.rindex(heading) :].split("\n\n", 1)[0]
    rows = []
    for line in entry.split("\n"):
        match = _SEAT.match(line)
        if match:
            seat, persona, number, state, head, tail, before, after = match.groups()
            rows.append(
                Seat(
                    int(seat),
                    persona,
                    int(number),
                    state == "compressed",
                    int(before.replace(",", "")),
                    int(after.replace(",", "")),
                    (int(head), int(tail)) if head else None,
                )
            )
    return rows


def phase_of(request: RecordedRequest) -> str:
    """`synthesis`, `repair`, `opening`… for one request the stub received."""
    task = request_task(request.json)
    return "repair" if task.get("repair") else str(task.get("phase"))


def synthesis_calls(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    """The synthesizer's requests (first asks and repairs), in order."""
    return [r for r in requests if request_task(r.json).get("phase") == "synthesis"]


def messages(request: RecordedRequest) -> tuple[str, str]:
    """(system prompt, last user message) of a request to either API."""
    body: dict[str, Any] = request.json
    if request.api == "anthropic":
        system = body.get("system") or ""
        user = body["messages"][-1]["content"]
    else:
        chat = body["messages"]
        system = next((m["content"] for m in chat if m["role"] == "system"), "")
        user = chat[-1]["content"]
    if isinstance(system, list):
        system = "".join(block["text"] for block in system)
    if isinstance(user, list):
        user = "".join(block["text"] for block in user)
    return str(system), str(user)
