"""Whether to debate another round: the exactly-CONTINUE rule and the early stop."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamcontext_council.rules.debate import bounded_round

EARLY_STOP = 90
_LOGGED = re.compile(r"^## Convergence check after round (\d+) — (\S+)", re.M)


def is_continue(answer: str) -> bool:
    """Only an answer that is exactly CONTINUE after trimming and upper-casing continues."""
    return answer.strip().upper() == "CONTINUE"


def early_stop(convergences: list[int]) -> bool:
    """Convergence at or above 90% in two rounds in a row ends the debating."""
    return len(convergences) >= 2 and all(c >= EARLY_STOP for c in convergences[-2:])


@dataclass(frozen=True)
class LoggedCheck:
    round: int
    answer: str


def logged_checks(log: str) -> dict[int, LoggedCheck]:
    """Convergence checks already recorded in round-log.md, by round."""
    found = ((bounded_round(m.group(1)), m.group(2)) for m in _LOGGED.finditer(log))
    return {n: LoggedCheck(n, answer) for n, answer in found if n is not None}


def check_heading(number: int, answer: str) -> str:
    """The round-log heading of a check; the answer is shown as one token."""
    token = "_".join(answer.strip().split())[:40] or "(empty)"
    return f"Convergence check after round {number} — {token}"
