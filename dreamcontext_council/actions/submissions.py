"""What a persona submits: its verdict, its round entry and its research notes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dreamcontext_council import resources
from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.live_state import refresh_live
from dreamcontext_council.errors import StateError, UsageError
from dreamcontext_council.folder.live import now_iso, utc_second
from dreamcontext_council.folder.names import slugify
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text
from dreamcontext_council.rules import limits, roundlog
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.entry_markup import seal_entry_body
from dreamcontext_council.rules.limits import check_length
from dreamcontext_council.rules.persona import PersonaContext
from dreamcontext_council.rules.report import (
    RoundEntry,
    check_entry_body,
    clean_entry_body,
    with_entry,
)
from dreamcontext_council.rules.verdicts import Verdict, parse_conviction, resolve_stance

RESEARCH_SLUG_LIMIT = 60


def _check_round(debate: Debate, number: int, what: str) -> None:
    if number < 1 or number > max(debate.current_round, 0):
        hint = (
            f"round {debate.current_round} is the latest started"
            if debate.current_round
            else "no round has started yet"
        )
        raise UsageError(f"Cannot {what} for round {number} of {debate.id}: {hint}.")
    if debate.status.phase == "complete":
        raise StateError(f"Cannot {what}: {debate.id} is complete.")


def record_verdict(
    root: Root,
    debate_id: str,
    slug: str,
    number: int,
    *,
    stance: str,
    conviction: str | int,
    headline: str,
    concession: str | None = None,
) -> Verdict:
    """Record the persona's verdict for round N (one per round and persona; last write wins)."""
    given = GivenVerdict(stance, conviction, headline, concession)
    check_verdict_text(given)
    return _record_verdict(DebateFiles(root, debate_id), slug, number, given)


@dataclass(frozen=True)
class GivenVerdict:
    """A verdict as a persona (or its model) gives it, before it is checked."""

    stance: str
    conviction: str | int
    headline: str
    concession: str | None


def check_verdict_text(given: GivenVerdict) -> None:
    """The stance, headline and concession within their limits, or one line saying which is not."""
    check_length(given.stance, limits.MAX_STANCE_CHARS, "The stance", "Give an option key.")
    check_length(
        given.headline, limits.MAX_HEADLINE_CHARS, "The headline", "Sum it up in one line."
    )
    check_length(
        given.concession or "", limits.MAX_CONCESSION_CHARS, "The concession", "Say it in brief."
    )


def _record_verdict(files: DebateFiles, slug: str, number: int, given: GivenVerdict) -> Verdict:
    stance, concession = given.stance, given.concession
    level = parse_conviction(given.conviction)
    headline = " ".join(given.headline.split())
    if not headline:
        raise UsageError(
            "The headline is empty; pass --headline with one line that sums up the stance."
        )
    with files.lock():
        debate = files.debate()
        files.require_persona(debate, slug)
        _check_round(debate, number, "record a verdict")
        verdicts = files.verdicts()
        key, new_option = resolve_stance(stance, debate.options, verdicts.options)
        if new_option:
            verdicts.options.append(new_option)
        elif debate.options and not verdicts.options:
            verdicts.options = debate.options
        verdict = Verdict(
            key, level, headline, " ".join((concession or "").split()) or None, now_iso()
        )
        previous = verdicts.round(number).get(slug)
        if previous is not None and previous == verdict._replace(at=previous.at):
            return previous  # the same verdict again: keep the record and its time
        verdicts.rounds.setdefault(number, {})[slug] = verdict
        files.save_verdicts(verdicts)
    refresh_live(files.root, files.id, transition=False)
    return verdict


@dataclass(frozen=True)
class ReportResult:
    round: int
    replaced: bool
    warnings: list[str]
    verdict: dict[str, object] | None = None
    """The verdict recorded with the entry (its ```verdict block), as verdicts.json holds it."""


def append_report(
    root: Root,
    debate_id: str,
    slug: str,
    body: str,
    *,
    number: int | None = None,
    vet: Callable[[RoundEntry], None] | None = None,
    verdict: GivenVerdict | None = None,
) -> ReportResult:
    """Add the persona's round entry (newest on top); a later entry for the round replaces it.

    An entry left inside an open code fence is closed before it is stored, so it cannot hide
    the older entries below it; the warnings and the round log say so. `vet`, a rule of the
    protocol above this layer, sees the entry once the round and every file it reads are
    checked, under the lock, and refuses it by raising: then nothing is written. `verdict`
    (the block the answer ended with) is recorded for the round under the same hold of the
    lock, after `vet` and before the entry, as `verdict` records it."""
    check_length(
        body,
        limits.MAX_ENTRY_CHARS,
        "The round entry",
        "Keep the entry to its sections and put long material in a research note.",
    )
    return _append_report(DebateFiles(root, debate_id), slug, body, number, vet, verdict)


def _append_report(
    files: DebateFiles,
    slug: str,
    body: str,
    number: int | None,
    vet: Callable[[RoundEntry], None] | None = None,
    verdict: GivenVerdict | None = None,
) -> ReportResult:
    debate_id = files.id
    cleaned, named = clean_entry_body(body)
    check_entry_body(cleaned)
    cleaned, repairs = seal_entry_body(cleaned)
    with files.lock():
        debate = files.debate()
        files.require_persona(debate, slug)
        number = number or named or debate.current_round
        if named and named != number:
            raise UsageError(
                f"The entry is headed Round {named} but --round says {number}; make them agree."
            )
        _check_round(debate, number, "append a report")
        # Read everything before writing anything, so a file that does not parse fails the
        # command with nothing changed.
        has_verdict = slug in files.verdicts().round(number)
        context = files.context(slug)
        entries = files.entries(slug)
        previous = next((e for e in entries if e.round == number), None)
        replaced = previous is not None
        entry = RoundEntry(number, today(), cleaned)
        if vet is not None:
            vet(entry)
        recorded = None
        if verdict is not None:
            check_verdict_text(verdict)
            recorded = _record_verdict(files, slug, number, verdict).to_json()
            has_verdict = True
        entries = with_entry(entries, entry)
        files.save_entries(slug, entries)
        _count_entries(files, slug, context, entries)
        if previous is None or previous.render() != entry.render():  # the same entry again: no news
            files.append_log(
                *roundlog.submission_entry(
                    slug, number, entry.executive_summary or "", utc_second(), replaced=replaced
                )
            )
        warnings = [f"The round {number} entry of {slug} was repaired: {note}." for note in repairs]
        if repairs:
            files.append_log(
                f"Entry repaired — {today()}",
                [f"Persona: {slug}", f"Round: {number}", *(f"Repair: {note}" for note in repairs)],
            )
        if not has_verdict:
            warnings.append(
                f"No verdict recorded for {slug} in round {number}; run `dreamcontext council "
                f"verdict {debate_id} {slug} {number} --stance ... --conviction ... --headline ...`."
            )
    refresh_live(files.root, debate_id, transition=False)
    return ReportResult(number, replaced, warnings, recorded)


def record_answer(
    root: Root,
    debate_id: str,
    slug: str,
    number: int,
    *,
    stance: str,
    conviction: str | int,
    headline: str,
    concession: str | None,
    body: str,
    verdict_before: Verdict | None = None,
) -> bool:
    """Record a model's verdict and round entry in one step, unless a person wrote either
    while the model was answering.

    `verdict_before` is the persona's verdict for the round when the model was asked (one
    a killed run left without its entry is replaced); any other verdict, or any entry for
    the round, was written meanwhile and is kept. The check and both writes happen under
    one hold of the debate's lock. Returns False, with nothing written, when one was kept.
    """
    check_entry_body(clean_entry_body(body)[0])  # before the verdict: all or nothing
    files = DebateFiles(root, debate_id)
    with files.lock():
        if files.verdicts().round(number).get(slug) != verdict_before or any(
            e.round == number for e in files.entries(slug)
        ):
            return False
        given = GivenVerdict(stance, conviction, headline, concession)
        _record_verdict(files, slug, number, given)
        _append_report(files, slug, body, number)
    return True


def recount_entries(root: Root, debate_id: str, slug: str) -> bool:
    """Make the persona's `round_entries` match its report again; True when it was off.

    The report and the context are two files, so a process killed between the two writes
    leaves the count one short. A run that finds the answer on disk calls this."""
    files = DebateFiles(root, debate_id)
    with files.lock():
        return _count_entries(files, slug, files.context(slug), files.entries(slug))


def _count_entries(
    files: DebateFiles, slug: str, context: PersonaContext, entries: list[RoundEntry]
) -> bool:
    count = len({e.round for e in entries})
    if context.round_entries == count:
        return False
    context.round_entries = count
    files.save_context(slug, context)
    return True


@dataclass(frozen=True)
class ResearchNote:
    slug: str
    topic: str
    added_at: str
    path: str


def add_research(
    root: Root, debate_id: str, persona: str, topic: str, body: str, *, unique: bool = False
) -> ResearchNote:
    """Write a research note and index it; validates everything before touching disk.

    A note on a topic the persona already has replaces it, unless `unique`: then the new
    note gets the first free slug (`topic-2`, `topic-3`, ...) and both are kept."""
    topic = " ".join(topic.split())
    if "\x00" in topic:
        raise UsageError("The research topic contains a NUL character; remove it and try again.")
    note_slug = slugify(topic, RESEARCH_SLUG_LIMIT)
    if not note_slug:
        raise UsageError(
            f"The research topic '{topic}' has no letters or digits to name a file; use a few words."
        )
    if not body.strip():
        raise UsageError("The research note is empty; pass --body TEXT or pipe it on stdin.")
    files = DebateFiles(root, debate_id)
    with files.lock():
        debate = files.debate()
        paths = files.require_persona(debate, persona)
        index = files.research_index(persona)
        if unique:
            note_slug = _free_slug(note_slug, {str(e.get("slug")) for e in index}, paths.researches)
        date = today()
        text = resources.render(
            "files/research-note.md.j2", topic=topic, date=date, persona=persona, body=body.strip()
        )
        atomic_write_text(paths.researches / f"{note_slug}.md", text, within=root.path)
        entry = {"slug": note_slug, "topic": topic, "added_at": date}
        files.save_research_index(
            persona, [entry, *(e for e in index if e.get("slug") != note_slug)]
        )
    return ResearchNote(note_slug, topic, date, str(paths.researches / f"{note_slug}.md"))


def _free_slug(slug: str, indexed: set[str], folder: Path) -> str:
    """`slug`, or `slug-N` with the smallest N that neither the index nor a file holds."""
    candidate, number = slug, 1
    while candidate in indexed or (folder / f"{candidate}.md").exists():
        number += 1
        suffix = f"-{number}"
        candidate = slug[: RESEARCH_SLUG_LIMIT - len(suffix)].rstrip("-") + suffix
    return candidate


def list_research(root: Root, debate_id: str, persona: str) -> list[dict[str, str]]:
    """The persona's research notes, newest first."""
    files = DebateFiles(root, debate_id)
    files.require_persona(files.debate(), persona)
    return [{k: str(v) for k, v in e.items()} for e in files.research_index(persona)]
