"""A read-only snapshot of a whole debate, for the views (board, show, dashboard, export)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import DebatePaths, Root
from dreamcontext_council.folder.storage import read_text
from dreamcontext_council.rules.conflict_markers import (
    ConflictMarkers,
    conflict_line,
    holds_conflict,
)
from dreamcontext_council.rules.conformity import DebateMeasures, measure
from dreamcontext_council.rules.debate import Debate
from dreamcontext_council.rules.persona import PersonaContext
from dreamcontext_council.rules.report import RoundEntry
from dreamcontext_council.rules.sealing import (
    SEALED_ENTRY,
    SEALED_ROUND,
    pending_people,
    round_one_sealed,
    sealed_log,
)
from dreamcontext_council.rules.seats import HUMAN_MODEL, is_person
from dreamcontext_council.rules.usage import calls_of
from dreamcontext_council.rules.verdicts import Verdicts

if TYPE_CHECKING:
    from dreamcontext_council.actions.run_state import RunState
    from dreamcontext_council.folder.in_flight import InFlight
    from dreamcontext_council.rules.solo import SoloAnswer, SoloComparison

T = TypeVar("T")

PERSONA_PHASES = ("opening", "cross-exam", "rebuttal", "repair")


@dataclass
class PersonaSnapshot:
    """One persona as it stands on disk."""

    slug: str
    context: PersonaContext | None
    entries: list[RoundEntry]
    research: list[dict[str, Any]] = field(default_factory=list)

    def entry(self, number: int) -> RoundEntry | None:
        return next((e for e in self.entries if e.round == number), None)

    @property
    def person(self) -> bool:
        """Whether a person answers this seat (`model: human`), not a model."""
        return self.context is not None and is_person(self.context.model)


@dataclass
class DebateSnapshot:
    """Everything a view needs about one debate."""

    paths: DebatePaths
    debate: Debate
    verdicts: Verdicts
    personas: list[PersonaSnapshot]
    log: str
    # One line per file left out for git conflict markers (read with `around_conflicts`).
    conflicts: list[str] = field(default_factory=list)
    # The seats whose round-1 answer is on disk but sealed (rules/sealing.py): round 1 runs
    # and a person's seat has yet to answer it. Empty once round 1 is complete.
    sealed: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.debate.id

    def persona(self, slug: str) -> PersonaSnapshot | None:
        return next((p for p in self.personas if p.slug == slug), None)

    def run_state(self) -> RunState | None:
        """Whether a `council run` is driving the debate (and whom it waits on) or stopped
        short (None: neither); read once per snapshot."""
        return self._run_state

    @cached_property
    def _run_state(self) -> RunState | None:
        status = str(self.debate.status)
        if status == "complete":
            return None  # no run state, as debate_run_state says: actions.run_state not loaded
        from dreamcontext_council.actions.run_state import debate_run_state

        return debate_run_state(self.paths.folder, self.id, status)

    def in_flight(self) -> list[InFlight]:
        """The calls a live `council run` is making right now, with their text so far (none
        of the text of a round-1 call while round 1 is sealed)."""
        # Imported here: the views of a debate no run drives never look for its calls.
        from dreamcontext_council.actions.sealed import sealed_calls
        from dreamcontext_council.folder.in_flight import read_in_flight

        calls = read_in_flight(self.paths.folder)
        return sealed_calls(calls) if self.sealed_round_one else calls

    @property
    def sealed_round_one(self) -> bool:
        """Whether round 1's answers are sealed for a person's seat (rules/sealing.py)."""
        return round_one_sealed(self.debate.status, self.pending_people())

    def pending_people(self) -> list[str]:
        """The person's seats with no round-1 answer recorded (entry and verdict)."""
        reported = [p.slug for p in self.personas if p.entry(SEALED_ROUND)]
        return pending_people(self.people(), self.verdicts.round(SEALED_ROUND), reported)

    def final_report(self) -> str | None:
        path = self.paths.final_report
        return read_text(path, within=self.paths.folder) if path.exists() else None

    def usage_records(self) -> list[dict[str, Any]]:
        """usage.jsonl, one record per call (its lines folded); a torn or foreign line is
        skipped, never fatal."""
        path = self.paths.usage
        if not path.exists():
            return []
        records = []
        for line in read_text(path, within=self.paths.folder).split("\n"):
            if line.strip():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    records.append(record)
        return calls_of(records)

    def persona_models(self) -> dict[str, str]:
        """The model each persona answered with (from usage.jsonl), else the one it names;
        `human` for a seat a person answers."""
        used: dict[str, str] = {}
        for record in self.usage_records():
            if record.get("phase") in PERSONA_PHASES and record.get("outcome", "ok") == "ok":
                used[str(record.get("persona"))] = f"{record.get('provider')}:{record.get('model')}"
        return {
            p.slug: HUMAN_MODEL
            if p.person
            else used.get(p.slug) or (p.context.model if p.context else "") or "unspecified"
            for p in self.personas
        }

    def people(self) -> list[str]:
        """The slugs of the seats a person answers, in the debate's order."""
        return [p.slug for p in self.personas if p.person]

    def measures(self) -> DebateMeasures:
        """Flips, new-content share and anchoring, from the folder alone."""
        ledger = self.ledger
        claims = None
        if ledger is not None:
            claims = [
                c
                for key in ("claims", "dropped")
                for c in ledger.get(key) or []
                if isinstance(c, dict)
            ]
        return measure(
            self.verdicts,
            {p.slug: {e.round: e.body for e in p.entries} for p in self.personas},
            {
                p.slug: [str(n.get(k, "")) for n in p.research for k in ("slug", "topic")]
                for p in self.personas
            },
            claims,
            decided=self.decided,
        )

    @property
    def decided(self) -> bool:
        """Whether the debate has its verdict: every planned round done, or past the rounds."""
        status = self.debate.status
        return status.phase in ("synthesizing", "complete") or (
            status.phase == "round_complete" and status.round >= self.debate.rounds_planned
        )

    def solo_answer(self) -> SoloAnswer | None:
        """baseline.md (`run --baseline`), read within the folder; None when there is none."""
        path = self.paths.baseline
        if not path.exists():
            return None
        from dreamcontext_council.rules.solo import parse_solo  # only a debate with a baseline

        return parse_solo(read_text(path, within=self.paths.folder), "baseline.md")

    def solo_comparison(self) -> SoloComparison | None:
        """Solo answer vs council verdict, by the engine; None without a solo answer."""
        solo = self.solo_answer()
        if solo is None:
            return None
        from dreamcontext_council.rules.solo import compare

        ledger = self.ledger
        claims = None
        if ledger is not None:
            claims = [c for c in ledger.get("claims") or [] if isinstance(c, dict)]
        return compare(solo, self.measures().final_stance, claims)

    @cached_property
    def _ledger(self) -> tuple[dict[str, Any] | None, str | None]:
        path = self.paths.claims
        if not path.exists():
            return None, None
        from dreamcontext_council.rules.claims_file import parse_claims_file  # claims.json only

        try:
            return parse_claims_file(read_text(path, within=self.paths.folder)), None
        except (CouncilError, UnicodeDecodeError) as exc:
            if isinstance(exc, UnicodeDecodeError):
                return None, f"{path.name} is not UTF-8 text; fix or remove {path.name}."
            return None, str(exc)

    @property
    def ledger(self) -> dict[str, Any] | None:
        """claims.json checked field by field; None when it is absent or refused."""
        return self._ledger[0]

    @property
    def ledger_problem(self) -> str | None:
        """The one line saying why claims.json was refused; None when it reads or is absent."""
        return self._ledger[1]

    def json_file(self, name: str) -> Any:
        path = self.paths.folder / name
        if not path.exists():
            return None
        try:
            return json.loads(read_text(path, within=self.paths.folder))
        except ValueError:
            return None


def load_snapshot(root: Root, debate_id: str, *, around_conflicts: bool = False) -> DebateSnapshot:
    """Read a debate folder whole; FormatError when a shared file does not parse.

    With `around_conflicts` (the read commands, the dashboard), a file holding git conflict
    markers is left out instead, as if empty, and named in `conflicts`; debate.md's
    frontmatter cannot be left out (ConflictMarkers says so).

    While round 1 is sealed for a person's seat the snapshot holds of round 1 only who has
    answered (`seal_round_one`): every view and the synthesis read it after round 1 closes,
    when it is whole."""
    files = DebateFiles(root, debate_id)
    debate = files.debate()
    conflicts: list[str] = []

    def kept(read: Callable[..., T], empty: T, *args: str) -> T:
        if not around_conflicts:
            return read(*args)
        try:
            return read(*args)
        except ConflictMarkers as exc:
            conflicts.append(str(exc))
            return empty

    personas = []
    for slug in debate.personas:
        paths = files.persona_paths(slug)
        context = kept(files.context, None, slug) if paths.context.exists() else None
        entries: list[RoundEntry] = kept(files.entries, [], slug)
        personas.append(PersonaSnapshot(slug, context, entries, files.research_index(slug)))
    verdicts = kept(files.verdicts, Verdicts())
    log = files.log()
    if around_conflicts:
        for path, text in ((files.paths.debate_md, debate.body), (files.paths.round_log, log)):
            if holds_conflict(text):
                conflicts.append(conflict_line(files.relative(path)))
        usage = files.paths.usage
        if usage.exists() and holds_conflict(files.read(usage)):
            conflicts.append(conflict_line(files.relative(usage)))
    return seal_round_one(DebateSnapshot(files.paths, debate, verdicts, personas, log, conflicts))


def seal_round_one(snapshot: DebateSnapshot) -> DebateSnapshot:
    """The snapshot as a person may see it: while round 1 is sealed (rules/sealing.py), its
    verdicts, the options its stances added, what its entries say and what the round log
    quotes of them are left out, and `sealed` names the seats that answered; else as it is."""
    if not snapshot.sealed_round_one:
        return snapshot
    verdicts = Verdicts(
        list(snapshot.debate.options),
        {n: votes for n, votes in snapshot.verdicts.rounds.items() if n != SEALED_ROUND},
    )
    answered = [
        p.slug
        for p in snapshot.personas
        if p.entry(SEALED_ROUND) or p.slug in snapshot.verdicts.round(SEALED_ROUND)
    ]
    personas = [
        replace(
            p,
            entries=[
                RoundEntry(e.round, e.date, SEALED_ENTRY) if e.round == SEALED_ROUND else e
                for e in p.entries
            ],
        )
        for p in snapshot.personas
    ]
    return replace(
        snapshot,
        verdicts=verdicts,
        personas=personas,
        log=sealed_log(snapshot.log),
        sealed=answered,
    )
