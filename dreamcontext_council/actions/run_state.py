"""Whether a debate's `council run` is going or stopped, for every view that shows its status.

The state machine in debate.md says where a debate stands (`round_1_running`); it cannot
say whether anything is still driving it. That comes from run.json (see
`folder.run_record`): a run that stopped cleanly recorded why; a run whose process is
gone without a word was killed. A live run that waits on a person's seat says so in its
in-flight files (`folder.in_flight`, state `waiting`): the views then show `waiting for
alice` instead of running.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.names import check_slug
from dreamcontext_council.folder.paths import Root

if TYPE_CHECKING:
    from dreamcontext_council.folder.run_record import RunRecord

KILLED = "the run (pid {pid}) ended without finishing: it was killed or crashed"


@dataclass(frozen=True)
class RunState:
    """`running` (its process is alive) or `stopped` (with the reason), and how to go on."""

    debate_id: str
    state: str
    reason: str | None
    since: str
    pid: int
    host: str
    stopped_at: str | None = None
    waiting_for: tuple[str, ...] = ()
    """The persona slugs whose person the live run waits on, in the order it began waiting."""

    @property
    def waiting(self) -> str:
        """`waiting for alice, bob` while the live run waits on people; empty otherwise."""
        return f"waiting for {', '.join(self.waiting_for)}" if self.waiting_for else ""

    @property
    def label(self) -> str:
        """What a status shows in place of the debate's own: `stopped`, `waiting for alice`,
        or empty (the status says it)."""
        return "stopped" if self.state == "stopped" else self.waiting

    @property
    def resume(self) -> str:
        return f"dreamcontext council run {self.debate_id}"

    def line(self) -> str:
        """`stopped: <reason>, resume with dreamcontext council run <id>`, or `running: …`
        (ending `, waiting for alice` while it waits on a person)."""
        if self.state == "stopped":
            return f"stopped: {self.reason}, resume with {self.resume}"
        running = f"running: pid {self.pid} on {self.host} since {self.since}"
        return f"{running}, {self.waiting}" if self.waiting_for else running

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "state": self.state,
            "line": self.line(),
            "pid": self.pid,
            "host": self.host,
            "started_at": self.since,
            "waiting_for": list(self.waiting_for),
        }
        if self.state == "stopped":
            data.update(reason=self.reason, stopped_at=self.stopped_at, resume=self.resume)
        return data


def run_state_of(
    record: RunRecord | None,
    debate_id: str,
    status: str,
    waiting_for: tuple[str, ...] = (),
) -> RunState | None:
    """What a run record says about a debate whose debate.md status is `status`.

    None when no run is recorded, when the debate is complete, or when a clean stop's
    record is stale (the debate was driven on by hand since). `waiting_for` (the seats
    the in-flight files say are waited on) counts only for a run still going.
    """
    if record is None or status == "complete":
        return None
    from dreamcontext_council.folder.run_record import still_running

    if record.stopped_reason is not None:
        if record.stopped_status is not None and record.stopped_status != status:
            return None
        reason = record.stopped_reason
    elif still_running(record):
        return RunState(
            debate_id,
            "running",
            None,
            record.started_at,
            record.pid,
            record.host,
            waiting_for=waiting_for,
        )
    else:
        reason = KILLED.format(pid=record.pid)
    return RunState(
        debate_id,
        "stopped",
        reason,
        record.started_at,
        record.pid,
        record.host,
        stopped_at=record.stopped_at,
    )


def debate_run_state(folder: Path, debate_id: str, status: str) -> RunState | None:
    """The run state of the debate in `folder` (see `run_state_of`)."""
    if status == "complete":
        return None  # no read: most debates listed are complete
    # Imported here, like the in-flight files below: a complete debate needs neither.
    from dreamcontext_council.folder.run_record import read_run_record

    record = read_run_record(folder)
    waiting = waiting_for(folder, status) if record and record.stopped_reason is None else ()
    return run_state_of(record, debate_id, status, waiting)


def waiting_for(folder: Path, status: str) -> tuple[str, ...]:
    """The seats a live process waits on a person for (in-flight files in state `waiting`),
    each once, oldest wait first. Read only while a round runs: one directory listing.
    A name in a file that is not a persona slug is left out, and so is a file from another
    host (its writer cannot be checked from here)."""
    if not status.endswith("_running"):
        return ()
    from dreamcontext_council.folder.in_flight import WAITING, read_in_flight

    slugs = [
        call.persona
        for call in read_in_flight(folder)
        if call.state == WAITING and not call.other_host and _is_slug(call.persona)
    ]
    return tuple(dict.fromkeys(slugs))


def _is_slug(value: str) -> bool:
    try:
        check_slug(value)
    except CouncilError:
        return False
    return True


def with_run_states(root: Root, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Index entries, each with a `run` key (its run state as JSON, or None) and
    `waiting_for` (the seats its live run waits on a person for)."""
    found = []
    for entry in entries:
        debate_id, status = str(entry.get("id")), str(entry.get("status"))
        state = debate_run_state(root.council / debate_id, debate_id, status)
        found.append(
            {
                **entry,
                "run": state.to_json() if state else None,
                "waiting_for": list(state.waiting_for) if state else [],
            }
        )
    return found
