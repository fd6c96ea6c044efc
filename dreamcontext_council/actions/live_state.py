"""Keeping tmp/.council-live.json in step with a debate after each command."""

from __future__ import annotations

import collections
import contextlib
import logging
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.sealed import round_one_sealed_in
from dreamcontext_council.folder.live import write_live
from dreamcontext_council.folder.machine_local import keep_out_of_git
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.sealing import SEALED_ROUND

log = logging.getLogger(__name__)


def _phase(status_phase: str, interrupt: bool) -> str:
    if status_phase == "created":
        return "setup"
    if status_phase == "round_complete":
        return "interlude" if interrupt else "debate"
    if status_phase == "synthesizing":
        return "synthesis"
    if status_phase == "complete":
        return "done"
    return "debate"


def live_state(
    files: DebateFiles, *, phase: str | None = None, thinking: Collection[str] = ()
) -> dict[str, Any]:
    """The live-file content for a debate as it stands on disk."""
    debate = files.debate()
    verdicts = files.verdicts()
    number = debate.current_round
    current = verdicts.round(number)
    previous = verdicts.round(number - 1)
    if number == SEALED_ROUND and round_one_sealed_in(files):
        current = {}  # a person's seat has yet to answer round 1: its stances are sealed
    personas = []
    for slug in debate.personas:
        entry: dict[str, Any] = {"slug": slug}
        reported = any(e.round == number for e in files.entries(slug)) if number else False
        entry["state"] = "done" if reported else "think" if slug in thinking else "wait"
        with contextlib.suppress(Exception):
            entry["model"] = files.context(slug).model
        if slug in current:
            v = current[slug]
            entry.update(stance=v.stance, conviction=v.conviction, headline=v.headline)
        if slug in previous:
            entry.update(prevStance=previous[slug].stance, prevConviction=previous[slug].conviction)
        personas.append(entry)
    state: dict[str, Any] = {
        "debate": debate.id,
        "topic": debate.topic,
        "phase": phase or _phase(debate.status.phase, debate.interrupt),
        "round": number,
        "rounds": debate.rounds_planned,
        "options": verdicts.options or debate.options,
        "personas": personas,
    }
    if current:
        state["convergence"] = metrics.convergence(current)
        state["leading"] = metrics.leading(current)
    return state


_last_refresh: dict[str, float] = {}
# The throttles held now, one per `throttled_submissions` still open: (interval, whole root).
# Runs in one process overlap (an eval, the MCP server's background runs), so each hold
# removes itself on exit instead of restoring what it found. Counted by kind: an eval holds
# the same one for each of its hundred debates in flight.
_holds: collections.Counter[tuple[float, bool]] = collections.Counter()


def _throttle() -> tuple[float, bool]:
    """The interval in force (the longest held) and whether the whole root shares it."""
    if not _holds:
        return 0.0, False
    return max(h[0] for h in _holds), any(h[1] for h in _holds)  # a kind or two, not a hundred


@contextmanager
def throttled_submissions(interval_s: float, *, every_refresh: bool = False) -> Iterator[None]:
    """While a run records many answers in one process, refresh for them at most this often.

    Every transition (round start and end, synthesis, done) still refreshes at once, unless
    `every_refresh` (many debates at once, as in an eval: one live file per root, showing
    whichever debate moved last): then the root's live file is rewritten at most once an
    interval. Holds may overlap and end in any order; the longest interval held applies.
    """
    hold = (interval_s, every_refresh)
    _holds[hold] += 1
    try:
        yield
    finally:
        _holds[hold] -= 1
        if not _holds[hold]:
            del _holds[hold]


def refresh_live(
    root: Root,
    debate_id: str,
    *,
    phase: str | None = None,
    thinking: Collection[str] = (),
    transition: bool = True,
) -> None:
    """Rewrite the live file; any failure is logged and swallowed."""
    now = time.monotonic()
    interval, whole_root = _throttle()
    key = str(root.path) if whole_root else debate_id
    throttled = not transition or whole_root
    if throttled and interval and now - _last_refresh.get(key, -interval) < interval:
        return
    _last_refresh[key] = now
    try:
        keep_out_of_git(root)
        write_live(
            root.live_file,
            live_state(DebateFiles(root, debate_id), phase=phase, thinking=thinking),
            within=root.path,
        )
    except Exception as exc:  # the live file is telemetry; it never fails a command
        log.debug("live file not updated: %s", exc)
