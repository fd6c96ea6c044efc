"""Rounds: start (with cross-context injection), end (every report present), extend."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from dreamcontext_council import resources
from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.live_state import refresh_live
from dreamcontext_council.errors import CouncilError, StateError, UsageError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules import roundlog
from dreamcontext_council.rules.debate import MAX_ROUNDS, Debate


@dataclass(frozen=True)
class RoundChange:
    """What a round command did; `changed` is False when it had already taken effect."""

    debate_id: str
    round: int
    changed: bool
    message: str


def start_round(
    root: Root,
    debate_id: str,
    number: int,
    *,
    directives: Mapping[str, str] | None = None,
    seed: int | None = None,
    pairs: Mapping[str, str] | None = None,
) -> RoundChange:
    """Start round N; for N >= 2 inject the round N-1 cross-context panel into every persona once.

    `directives` (persona → text) are queued for round N in the same write of each context
    file as its panel, as `queue_directive` would queue them (once; empty text refused).
    `seed`, the cross-examination seed, is recorded in the same write of debate.md when the
    debate has none yet, and so are `pairs` (critic → peer, round 2's cross-examination)
    under `cross_examination`."""
    queued = {slug: " ".join(text.split()) for slug, text in (directives or {}).items()}
    for slug, text in queued.items():
        if not text or "\x00" in text:
            raise UsageError(f"The directive for {slug} is empty; pass its text.")
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        status = str(debate.status)
        if status == f"round_{number}_running":
            return RoundChange(
                debate_id, number, False, f"Round {number} of {debate_id} is already running."
            )
        needed = "created" if number == 1 else f"round_{number - 1}_complete"
        if number < 1 or status != needed:
            raise StateError(_start_hint(debate, number))
        if number > debate.rounds_planned:
            raise StateError(
                f"Cannot start round {number}: {debate_id} plans {debate.rounds_planned} rounds; "
                f"run `dreamcontext council round extend {debate_id}` first."
            )
        if len(debate.personas) < 1:
            raise StateError(
                f"Cannot start round {number}: {debate_id} has no personas; add them with "
                f"`dreamcontext council agent create {debate_id} <slug>`."
            )
        unknown = [slug for slug in queued if slug not in debate.personas]
        if unknown:
            raise UsageError(f"No persona {', '.join(unknown)} in {debate_id} to direct.")
        if number >= 2:
            _inject_panels(files, debate, number, queued)
        debate.meta["status"] = f"round_{number}_running"
        debate.meta["current_round"] = number
        if seed is not None:
            debate.meta.setdefault("seed", seed)
        if pairs:
            debate.meta["cross_examination"] = dict(pairs)
        files.save_debate(debate)
        files.append_log(
            f"Round {number} started — {today()}", [f"Personas: {', '.join(debate.personas)}"]
        )
    refresh_live(root, debate_id, phase="debate")
    return RoundChange(debate_id, number, True, f"Round {number} of {debate_id} started.")


def _start_hint(debate: Debate, number: int) -> str:
    status = debate.status
    if status.phase == "running":
        return (
            f"Cannot start round {number}: round {status.round} of {debate.id} is still running; "
            f"end it with `dreamcontext council round end {debate.id} {status.round}`."
        )
    if status.phase == "round_complete":
        return (
            f"Cannot start round {number}: {debate.id} finished round {status.round}; the next "
            f"is `dreamcontext council round start {debate.id} {status.round + 1}`."
        )
    if status.phase == "created":
        return f"Cannot start round {number}: {debate.id} has not started; start round 1 first."
    return f"Cannot start round {number}: {debate.id} is {status}."


def _inject_panels(
    files: DebateFiles, debate: Debate, number: int, directives: Mapping[str, str]
) -> None:
    summaries = round_summaries(files, debate.personas, number - 1)
    # Every context is read before any is written: one that does not parse changes nobody's.
    contexts = {slug: files.context(slug) for slug in debate.personas}
    for slug, context in contexts.items():
        # The directive first, then the panel: the order queue_directive then start_round gave.
        changed = slug in directives and context.add_directive(number, directives[slug])
        if number not in context.panel_rounds():
            panel = panel_text(summaries, slug, number)
            context.append_section(panel_heading(number), panel)
            changed = True
        if changed:
            files.save_context(slug, context)


def round_summaries(files: DebateFiles, personas: list[str], number: int) -> dict[str, str]:
    """Each persona's round-`number` executive summary ("" for none): what a panel shows."""
    summaries = {}
    for slug in personas:
        entry = next((e for e in files.entries(slug) if e.round == number), None)
        summaries[slug] = (entry.executive_summary or "").strip() if entry else ""
    return summaries


def panel_heading(number: int) -> str:
    return f"Round {number} — Cross-context loaded"


def panel_text(summaries: Mapping[str, str], slug: str, number: int) -> str:
    """The round-`number` cross-context panel `slug` reads: its peers' previous summaries."""
    peers = [{"slug": p, "summary": text} for p, text in summaries.items() if p != slug]
    return resources.render(
        "files/cross-context-panel.md.j2", peers=peers, previous_round=number - 1
    )


def participants(files: DebateFiles, debate: Debate, number: int) -> list[str]:
    """Personas that took part in round N: those seated when it started."""
    logged = roundlog.round_participants(files.log(), number)
    if logged is None:
        return debate.personas
    return [p for p in debate.personas if p in logged]


def missing_reports(files: DebateFiles, debate: Debate, number: int) -> list[str]:
    """Participants of round N with no report entry for it."""
    return _unreported(files, participants(files, debate, number), number)


def _unreported(files: DebateFiles, seated: list[str], number: int) -> list[str]:
    return [s for s in seated if not any(e.round == number for e in files.entries(s))]


def absences(files: DebateFiles, debate: Debate) -> dict[str, list[int]]:
    """Persona → the closed rounds it took part in without a report (failed or excused)."""
    status = debate.status
    last = debate.current_round - (1 if status.phase in ("running", "created") else 0)
    found: dict[str, list[int]] = {}
    for number in range(1, last + 1):
        for slug in missing_reports(files, debate, number):
            found.setdefault(slug, []).append(number)
    return found


def end_round(
    root: Root, debate_id: str, number: int, *, excused: Collection[str] = ()
) -> RoundChange:
    """Close round N; fails naming every participant whose report is missing (unless excused)."""
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        status = str(debate.status)
        if status == f"round_{number}_complete":
            return RoundChange(
                debate_id, number, False, f"Round {number} of {debate_id} is already complete."
            )
        if status != f"round_{number}_running":
            current = debate.status
            hint = (
                f"round {current.round} is the one running."
                if current.phase == "running"
                else f"it is {status}; only a running round can end."
            )
            raise StateError(f"Cannot end round {number} of {debate_id}: {hint}")
        seated = participants(files, debate, number)  # read once: the lock is held
        unreported = _unreported(files, seated, number)
        missing = [m for m in unreported if m not in excused]
        if missing:
            raise CouncilError(
                f"Round {number} of {debate_id} is missing reports from: {', '.join(missing)}. "
                f"Each must run `dreamcontext council report append {debate_id} <slug> --round {number}`."
            )
        skipped = [m for m in unreported if m in excused]
        debate.meta["status"] = f"round_{number}_complete"
        debate.meta["current_round"] = number
        files.save_debate(debate)
        reported = len(seated) - len(skipped)
        bullets = [f"All {reported} personas submitted reports."]
        if skipped:
            bullets = [f"{reported} personas submitted reports.", f"Missing: {', '.join(skipped)}"]
        files.append_log(f"Round {number} complete — {today()}", bullets)
    refresh_live(root, debate_id)
    return RoundChange(debate_id, number, True, f"Round {number} of {debate_id} complete.")


def extend_rounds(root: Root, debate_id: str, by: int = 1) -> RoundChange:
    """Raise rounds_planned by `by` (escalation: one more round)."""
    if by < 1:
        raise UsageError(f"--by must be at least 1, not {by}.")
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        if debate.status.phase in ("synthesizing", "complete"):
            raise StateError(
                f"Cannot extend {debate_id}: it is {debate.status}; start a new debate to go on."
            )
        planned = debate.rounds_planned + by
        if planned > MAX_ROUNDS:
            raise UsageError(
                f"{debate_id} plans {debate.rounds_planned} rounds; {MAX_ROUNDS} is the most a debate takes."
            )
        debate.meta["rounds_planned"] = planned
        files.save_debate(debate)
        files.append_log(f"Rounds extended — {today()}", [f"Rounds planned: {planned}"])
    refresh_live(root, debate_id)
    return RoundChange(debate_id, planned, True, f"{debate_id} now plans {planned} rounds.")
