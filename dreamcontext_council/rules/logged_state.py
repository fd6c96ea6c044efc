"""The state of the machine that round-log.md records, to check debate.md's status against.

Every status change appends its own entry to the round log (`Round N started`, `Round N
complete`, `Synthesis started`, `Debate complete`, `Rounds extended`). A hand merge of two
branches may keep one side's debate.md and both sides' log entries; the log then tells the
latest state either side reached.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from dreamcontext_council.rules.debate import MAX_ROUNDS, Status, bounded_round
from dreamcontext_council.rules.markdown import headings

_ROUND = re.compile(r"Round (\d+) (started|complete)\b", re.IGNORECASE)
_PLANNED = re.compile(r"- Rounds planned: (\d+)\s*$")
# Synthesis and completion: ranks above any round.
_SYNTHESIS_RANK = 2 * MAX_ROUNDS + 1
_COMPLETE_RANK = 2 * MAX_ROUNDS + 2


def rank(status: Status) -> int:
    """Where a status stands in the machine: created 0, round N running 2N-1, complete 2N, …"""
    if status.phase == "running":
        return 2 * status.round - 1
    if status.phase == "round_complete":
        return 2 * status.round
    if status.phase == "synthesizing":
        return _SYNTHESIS_RANK
    if status.phase == "complete":
        return _COMPLETE_RANK
    return 0


class LoggedState(NamedTuple):
    """The furthest state the log records, and the most rounds it says were planned."""

    status: Status
    rounds_planned: int
    resynthesized: bool
    last_round: Status = Status("created", 0)  # the furthest round entry, before any synthesis


def logged_state(log: str) -> LoggedState:
    """The furthest status the round log's entries record (created when it records none)."""
    lines = log.split("\n")
    furthest = last_round = Status("created", 0)
    planned = 0
    resynthesized = False
    for mark in headings(lines):
        if mark.level != 2:
            continue
        found: Status | None = None
        match = _ROUND.match(mark.title)
        if match and (number := bounded_round(match.group(1))) is not None:
            phase = "running" if match.group(2).lower() == "started" else "round_complete"
            found = Status(phase, number)
            if rank(found) > rank(last_round):
                last_round = found
        elif mark.title.startswith("Synthesis started"):
            found = Status("synthesizing", 0)
        elif mark.title.startswith("Debate complete"):
            found = Status("complete", 0)
        elif mark.title.startswith("Resynthesis"):
            resynthesized = True
        elif mark.title.startswith("Rounds extended"):
            for line in lines[mark.line + 1 : mark.line + 4]:
                bullet = _PLANNED.match(line)
                if bullet and (number := bounded_round(bullet.group(1))) is not None:
                    planned = max(planned, number)
        if found is not None and rank(found) > rank(furthest):
            furthest = found
    return LoggedState(furthest, planned, resynthesized, last_round)


def status_behind(status: Status, log: str) -> Status | None:
    """The state the log records when debate.md's status is behind it; None when it is not.

    A resynthesis takes a complete debate back to synthesizing on purpose: that is not behind.
    """
    logged = logged_state(log)
    if rank(logged.status) <= rank(status):
        return None
    if (
        status.phase == "synthesizing"
        and logged.status.phase == "complete"
        and logged.resynthesized
    ):
        return None
    return logged.status
