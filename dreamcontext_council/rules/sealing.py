"""Round 1 is blind for a person's seat: the other seats' round-1 answers are sealed.

A person who reads the council before answering conforms to it. So while round 1 runs and
a person's seat (`model: human`) has not recorded its round-1 answer (its report entry and
its verdict), every reader a person can look at (the live output of `run`, `show`,
`board`, `watch`, the dashboard, the MCP tools) shows of round 1 only that a seat has
answered: no stance, conviction, headline, summary or text of a call in progress. Once
round 1 is complete (every seat answered, or the missing ones excused) everything shows
as it always does. The files themselves keep what they hold.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from dreamcontext_council.rules.debate import Status

SEALED_ROUND = 1
SEALED = "sealed until round 1 closes"
# What a sealed round-1 entry reads as: that the seat answered, nothing of what it said.
SEALED_ENTRY = f"### Executive Summary\nAnswered; {SEALED} (a person's seat has yet to answer).\n"
_SUBMISSION = r"## Report (?:submitted|replaced) — .+ in round (\d+) — "  # compiled when used


def pending_people(
    people: Iterable[str], verdicts: Mapping[str, object], reported: Collection[str]
) -> list[str]:
    """The person's seats whose round-1 answer is not recorded yet: `verdicts` are round 1's
    verdicts by seat, `reported` the seats with a round-1 report entry."""
    return [slug for slug in people if slug not in verdicts or slug not in reported]


def round_one_runs(status: Status) -> bool:
    """Whether the debate stands in round 1, not yet complete: the only time a seal holds."""
    return status.phase == "running" and status.round == SEALED_ROUND


def round_one_sealed(status: Status, pending: Collection[str]) -> bool:
    """Whether round 1's answers are sealed: round 1 runs and a person's seat has not
    answered it yet (`pending`, from `pending_people`)."""
    return round_one_runs(status) and bool(pending)


def sealed_log(log: str) -> str:
    """round-log.md with what the round-1 submissions say withheld: each `Report submitted`
    entry of round 1 keeps its heading (who answered, when), its bullets say it is sealed."""
    lines = log.split("\n")
    kept: list[str] = []
    sealing = False
    for line in lines:
        if line.startswith("## "):
            match = re.match(_SUBMISSION, line)
            sealing = match is not None and int(match.group(1)) == SEALED_ROUND
            kept.append(line)
            if sealing:
                kept.append(f"- Executive summary: {SEALED}")
            continue
        if sealing and line.startswith("- "):
            continue
        kept.append(line)
    return "\n".join(kept)


def stances_line(verdicts: Mapping[str, tuple[str, int]]) -> str:
    """`Round 1, unsealed: contrarian B 70, alice A 65`: the stances a run kept back while
    round 1 was sealed, told once it closes."""
    shown = ", ".join(
        f"{slug} {stance} {conviction}" for slug, (stance, conviction) in verdicts.items()
    )
    return f"Round {SEALED_ROUND}, unsealed: {shown or 'no verdicts'}"
