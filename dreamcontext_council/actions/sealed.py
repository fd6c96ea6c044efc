"""Whether round 1 is sealed for a person's seat, for the readers that do not load a whole
snapshot: the live file, the dashboard's stream of calls in progress, `run`'s progress."""

from __future__ import annotations

from dataclasses import replace

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.in_flight import InFlight
from dreamcontext_council.rules.sealing import (
    SEALED_ROUND,
    pending_people,
    round_one_runs,
    round_one_sealed,
)
from dreamcontext_council.rules.seats import is_person


def round_one_sealed_in(files: DebateFiles) -> bool:
    """Whether round 1 is sealed (rules/sealing.py), read from the files only as far as it
    takes: nothing past debate.md unless round 1 runs. A seat's file that cannot be read
    now (half-written, conflicted) keeps the round sealed: a reader errs on the blind side."""
    debate = files.debate()
    if not round_one_runs(debate.status):
        return False
    try:
        people = [
            slug
            for slug in debate.personas
            if files.persona_paths(slug).context.exists() and is_person(files.context(slug).model)
        ]
        if not people:
            return False
        verdicts = files.verdicts().round(SEALED_ROUND)
        reported = [s for s in people if any(e.round == SEALED_ROUND for e in files.entries(s))]
    except (CouncilError, OSError, UnicodeDecodeError):
        return True
    return round_one_sealed(debate.status, pending_people(people, verdicts, reported))


def sealed_calls(calls: list[InFlight]) -> list[InFlight]:
    """The calls in progress with the text of round 1's left out (its characters are counted)."""
    return [replace(c, text="") if c.round == SEALED_ROUND else c for c in calls]
