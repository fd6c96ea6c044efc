"""`run --only slug,slug`: some personas of a running round answered here, the rest elsewhere.

One debate can be answered on many machines: each branch or clone runs its own personas'
pending calls, and git merges the answers (see docs/engine.md, "One debate, many machines").
"""

from __future__ import annotations

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.rounds import participants
from dreamcontext_council.errors import StateError, UsageError
from dreamcontext_council.folder.names import check_slug


def parse_only(spec: str) -> list[str]:
    """The slugs of `--only a,b`, in the order given, each once."""
    slugs: list[str] = []
    for part in spec.split(","):
        slug = part.strip()
        if slug and slug not in slugs:
            slugs.append(check_slug(slug))
    if not slugs:
        raise UsageError(
            "--only names no persona; pass their slugs, as --only risk-auditor,growth-cfo."
        )
    return slugs


def only_round(files: DebateFiles, slugs: list[str]) -> int:
    """The running round whose calls `--only` makes; an error unless every slug takes part."""
    debate = files.debate()
    status = debate.status
    if status.phase != "running":
        raise StateError(
            f"run --only answers personas of a running round, and {debate.id} is {status}; "
            f"start the round first (`dreamcontext council round start {debate.id} "
            f"{debate.current_round + 1}`), commit it, then answer on each machine."
            if status.phase in ("created", "round_complete")
            else f"run --only answers personas of a running round, and {debate.id} is {status}."
        )
    seated = participants(files, debate, status.round)
    strangers = [s for s in slugs if s not in seated]
    if strangers:
        raise UsageError(
            f"--only names {', '.join(strangers)}, not in round {status.round} of {debate.id} "
            f"(its personas: {', '.join(seated) or 'none'})."
        )
    return status.round
