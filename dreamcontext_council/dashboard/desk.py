"""The debate page's desk: its run's stop and resume, and the person's seats to answer.

Shown only on a page asked with the write path's cookie (dashboard/write_path.py); it
stands outside the page's live part, so a live update never wipes what a person types,
and is fetched again (`/d/<id>/desk`) when its `key` (the run's state and the open seats)
changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.run_state import RunState, debate_run_state
from dreamcontext_council.dashboard.seat_form import Seat, open_seats
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root


@dataclass(frozen=True)
class Desk:
    """What the desk shows for one debate."""

    debate_id: str
    token: str
    status: str
    run: RunState | None
    seats: tuple[Seat, ...]
    problem: str | None = None

    @property
    def can_stop(self) -> bool:
        return self.run is not None and self.run.state == "running"

    @property
    def can_resume(self) -> bool:
        return self.status != "complete" and not self.can_stop

    @property
    def key(self) -> str:
        """Changes when the desk would show something else (not for each call's progress)."""
        run = f"{self.run.state}:{self.run.pid}" if self.run else "none"
        return "|".join([self.status, run, *(seat.key for seat in self.seats)])


def desk_for(
    root: Root, debate_id: str, token: str, *, seat: Seat | None = None, problem: str | None = None
) -> Desk:
    """The desk of a debate; `seat` (a refused form, its values kept) stands in for its
    empty one."""
    files = DebateFiles(root, debate_id)
    status = str(files.debate().status)
    run = debate_run_state(files.paths.folder, debate_id, status)
    try:
        seats = open_seats(root, debate_id)
    except CouncilError as exc:  # a file of the debate cannot be read now: said on the desk
        seats, problem = [], problem or str(exc)
    if seat is not None:
        seats = [seat if s.slug == seat.slug else s for s in seats]
    return Desk(debate_id, token, status, run, tuple(seats), problem)
