"""The dashboard's list of debates: searched, filtered and cut into pages on the server.

A root may hold 10,000 debates; the page shows `PAGE_SIZE` of them. The search words and
the status filter are applied to the whole index; a debate's run state (run.json) is read
only for the rows shown, or for the debates still open when the filter needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

PAGE_SIZE = 50
STATUS_FILTERS = {
    "": "All statuses",
    "active": "In progress",
    "running": "Round running",
    "stopped": "Run stopped",
    "complete": "Complete",
    "promoted": "Promoted",
    "unpromoted": "Complete, not promoted",
}
# Filters that depend on whether a `council run` is going or stopped.
_RUN_FILTERS = frozenset({"running", "stopped"})

RunOf = Callable[[dict[str, Any]], dict[str, Any] | None]
# A complete debate's decision for its row (`Migrate now (A) · medium`), empty when unknown.
VerdictOf = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class ListRow:
    id: str
    topic: str
    status: str
    tone: str
    run: str  # `running for 3 min`, `stopped: <reason>, resume with …`, or empty
    since: str  # when a running run started (ISO), for the page to count on; else empty
    verdict: str  # a complete debate's decision and confidence, else empty
    label: str  # the badge: `stopped` for a run that stopped short, `waiting for alice`, else the status
    round: str
    promoted: bool
    updated: str
    created: str
    conflict: str = ""  # debate.md's frontmatter holds git conflict markers: the line saying so


@dataclass(frozen=True)
class DebateList:
    """One page of the list, and how it was chosen."""

    rows: list[ListRow]
    total: int  # debates under the root
    matched: int  # debates the search and filter keep
    page: int  # 1-based
    pages: int
    query: str
    status: str
    evals: bool = False  # the debates an eval made are listed too
    eval_debates: int = 0  # how many debates under the root an eval made

    def link(self, page: int, *, evals: bool | None = None) -> str:
        """The query string of another page of the same search (`evals`: with or without
        the eval debates, instead of as now)."""
        shown = self.evals if evals is None else evals
        params = [
            ("q", self.query),
            ("status", self.status),
            ("evals", "1" if shown else ""),
            ("page", str(page)),
        ]
        return "?" + urlencode([(k, v) for k, v in params if v and (k != "page" or page > 1)])


def _groups(entry: dict[str, Any], run: dict[str, Any] | None) -> set[str]:
    status = str(entry.get("status") or "")
    stopped = run is not None and run.get("state") == "stopped"
    groups = {"active"} if status != "complete" else {"complete"}
    if status.endswith("_running") and not stopped:
        groups.add("running")
    if stopped:
        groups.add("stopped")
    if status == "complete":
        groups.add("promoted" if entry.get("promoted_to_knowledge") else "unpromoted")
    return groups


def _words_match(entry: dict[str, Any], words: list[str]) -> bool:
    if not words:
        return True
    text = f"{entry.get('id')} {entry.get('topic')} {entry.get('status')}".casefold()
    return all(word in text for word in words)


def debate_list(
    entries: list[dict[str, Any]],
    run_of: RunOf,
    *,
    query: str = "",
    status: str = "",
    page: int = 1,
    size: int = PAGE_SIZE,
    tone_of: Callable[[str], str],
    eval_debates: Collection[str] = (),
    evals: bool = False,
    verdict_of: VerdictOf | None = None,
    now: datetime | None = None,
) -> DebateList:
    """The page `page` of the debates whose id, topic or status hold every word of `query`
    and that belong to the `status` group (see STATUS_FILTERS); newest first as indexed.
    The debates an eval made (`eval_debates`) are left out unless `evals`.

    `run_of` reads a debate's run state; it is called for the rows shown, and for every
    debate still open only when the filter is `running` or `stopped`. `verdict_of` reads
    the decision of a complete debate shown; `now` is what a running line counts from."""
    status = status if status in STATUS_FILTERS else ""
    words = query.casefold().split()
    needs_run = status in _RUN_FILTERS
    runs: dict[str, dict[str, Any] | None] = {}

    def run(entry: dict[str, Any]) -> dict[str, Any] | None:
        key = str(entry.get("id"))
        if key not in runs:
            runs[key] = run_of(entry)
        return runs[key]

    kept = []
    for entry in entries:
        if not evals and str(entry.get("id")) in eval_debates:
            continue
        if not _words_match(entry, words):
            continue
        if status:
            if needs_run and entry.get("status") == "complete":
                continue
            if status not in _groups(entry, run(entry) if needs_run else None):
                continue
        kept.append(entry)
    pages = max(1, -(-len(kept) // size))
    page = min(max(page, 1), pages)
    shown = kept[(page - 1) * size : page * size]
    return DebateList(
        [_row(entry, run(entry), tone_of, verdict_of, now or datetime.now(UTC)) for entry in shown],
        len(entries),
        len(kept),
        page,
        pages,
        query,
        status,
        evals,
        sum(1 for entry in entries if str(entry.get("id")) in eval_debates),
    )


def _row(
    entry: dict[str, Any],
    run: dict[str, Any] | None,
    tone_of: Callable[[str], str],
    verdict_of: VerdictOf | None,
    now: datetime,
) -> ListRow:
    status = str(entry.get("status") or "")
    stopped = isinstance(run, dict) and run.get("state") == "stopped"
    waiting = run.get("waiting_for") if isinstance(run, dict) and not stopped else None
    people = [str(slug) for slug in waiting] if isinstance(waiting, list) else []
    conflict = str(entry.get("conflicted") or "")
    label = "stopped" if stopped else f"waiting for {', '.join(people)}" if people else status
    tone = "stopped" if stopped else "waiting" if people else tone_of(status)
    running = isinstance(run, dict) and run.get("state") == "running"
    since = str(run.get("started_at") or "") if isinstance(run, dict) and running else ""
    if running:
        line = running_line(since, now)
        line += f", waiting for {', '.join(people)}" if people else ""
    else:
        line = str(run.get("line") or "") if isinstance(run, dict) else ""
    return ListRow(
        id=str(entry.get("id")),
        topic=str(entry.get("topic") or ""),
        status=status,
        tone="conflicted" if conflict else tone,
        run=line,
        since=since,
        verdict=verdict_of(entry) if verdict_of and status == "complete" else "",
        label="conflicted" if conflict else label,
        round=f"{entry.get('current_round') or 0}/{entry.get('rounds_planned') or '?'}",
        promoted=bool(entry.get("promoted_to_knowledge")),
        updated=str(entry.get("updated_at") or ""),
        created=str(entry.get("created_at") or ""),
        conflict=conflict,
    )


def running_line(started_at: str, now: datetime) -> str:
    """`running for 3 min` from a run's ISO start time (`running` when it does not parse);
    the page's script counts on with the same rule (dashboard.js, `runningFor`)."""
    try:
        started = datetime.fromisoformat(started_at)
    except ValueError:
        return "running"
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return "running for " + duration(max(0.0, (now - started).total_seconds()))


def duration(seconds: float) -> str:
    """`less than a minute`, `3 min`, `2 h 5 min`, `3 days`."""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "less than a minute"
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} days"
