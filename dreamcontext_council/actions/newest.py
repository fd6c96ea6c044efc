"""Which debate a command means when it names none: `@last`, an omitted id, or the one run
that stopped and can be resumed.

The CLI's read commands and `run`, and the MCP server's reads, all choose through here, so
`@last` means the same debate everywhere: the newest one under the root (index.json keeps
the debates newest first, by when they were made).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dreamcontext_council.errors import NotFoundError, UsageError
from dreamcontext_council.folder.paths import Root

LAST = "@last"
"""The id that stands for the newest debate under the root."""


@dataclass(frozen=True)
class ChosenDebate:
    """The debate a command works on, and whether it was chosen for the user."""

    id: str
    topic: str = ""
    chosen_for_you: bool = False
    """No id was given (or `@last`): the command says on stderr which debate it took."""

    def line(self, why: str = "the newest debate") -> str:
        """`council_AbC12345, the newest debate: Should we migrate …`, the topic on one line
        (a terminal cuts it to its width: views/terminal.cut_to)."""
        topic = " ".join(self.topic.split())
        return f"{self.id}, {why}: {topic}" if topic else f"{self.id}, {why}"


def choose_debate(root: Root, given: str | None) -> ChosenDebate:
    """The debate `given` names; the newest under the root when it is None or `@last`.

    NotFoundError, saying how to start one, when the root holds no debate yet."""
    if given is not None and given != LAST:
        return ChosenDebate(given)
    newest = newest_entry(root)
    if newest is None:
        raise NotFoundError(
            f"No debates under {root.council} yet; start one with `dreamcontext council run "
            '--topic "…"` (or `dreamcontext council new "…"`), then name it or leave the id out.'
        )
    return _chosen(newest)


def newest_entry(root: Root) -> dict[str, Any] | None:
    """The index entry of the newest debate under the root; None when there is none."""
    from dreamcontext_council.actions.index import load_index

    entries = load_index(root)
    return entries[0] if entries else None


def stopped_runs(root: Root) -> list[ChosenDebate]:
    """The debates whose `council run` stopped before the end (a limit, a failure, Ctrl-C,
    a killed process) and that are not complete: what `run <id>` would resume, newest first."""
    from dreamcontext_council.actions.index import load_index
    from dreamcontext_council.actions.run_state import debate_run_state

    found = []
    for entry in load_index(root):
        debate_id, status = str(entry.get("id")), str(entry.get("status"))
        state = debate_run_state(root.council / debate_id, debate_id, status)
        if state is not None and state.state == "stopped":
            found.append(_chosen(entry))
    return found


def _chosen(entry: dict[str, Any]) -> ChosenDebate:
    return ChosenDebate(str(entry.get("id")), str(entry.get("topic") or ""), chosen_for_you=True)


def debate_to_resume(root: Root | None) -> ChosenDebate | None:
    """What `run` with neither an id nor --topic resumes: the one debate under the root whose
    run stopped. None when there is none (or no root), and `run` says to pass an id or a
    topic; UsageError naming them when several stopped, since which one is meant is unclear."""
    found = stopped_runs(root) if root is not None and root.council.is_dir() else []
    if len(found) <= 1:
        return found[0] if found else None
    named = ", ".join(chosen.id for chosen in found[:5]) + (", …" if len(found) > 5 else "")
    raise UsageError(
        f'Pass either a debate id or --topic "…": {len(found)} runs stopped and can be '
        f"resumed ({named}); name one, as in `dreamcontext council run {found[0].id}`."
    )
