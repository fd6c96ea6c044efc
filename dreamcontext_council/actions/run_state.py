"""Whether a debate's `council run` is going or stopped, for every view that shows its status.

The state machine in debate.md says where a debate stands (`round_1_running`); it cannot
say whether anything is still driving it. That comes from run.json (see
`folder.run_record`): a run that stopped cleanly recorded why; a run whose process is
gone without a word was killed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.run_record import RunRecord, read_run_record, still_running

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

    @property
    def resume(self) -> str:
        return f"dreamcontext council run {self.debate_id}"

    def line(self) -> str:
        """`stopped: <reason>, resume with dreamcontext council run <id>`, or `running: …`."""
        if self.state == "stopped":
            return f"stopped: {self.reason}, resume with {self.resume}"
        return f"running: pid {self.pid} on {self.host} since {self.since}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "state": self.state,
            "line": self.line(),
            "pid": self.pid,
            "host": self.host,
            "started_at": self.since,
        }
        if self.state == "stopped":
            data.update(reason=self.reason, stopped_at=self.stopped_at, resume=self.resume)
        return data


def run_state_of(record: RunRecord | None, debate_id: str, status: str) -> RunState | None:
    """What a run record says about a debate whose debate.md status is `status`.

    None when no run is recorded, when the debate is complete, or when a clean stop's
    record is stale (the debate was driven on by hand since).
    """
    if record is None or status == "complete":
        return None
    if record.stopped_reason is not None:
        if record.stopped_status is not None and record.stopped_status != status:
            return None
        reason = record.stopped_reason
    elif still_running(record):
        return RunState(debate_id, "running", None, record.started_at, record.pid, record.host)
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
    return run_state_of(read_run_record(folder), debate_id, status)


def with_run_states(root: Root, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Index entries, each with a `run` key: its run state as JSON, or None."""
    found = []
    for entry in entries:
        debate_id, status = str(entry.get("id")), str(entry.get("status"))
        state = debate_run_state(root.council / debate_id, debate_id, status)
        found.append({**entry, "run": state.to_json() if state else None})
    return found
