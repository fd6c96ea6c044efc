"""Convening a council: a new debate folder and the personas that sit on it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamcontext_council import resources
from dreamcontext_council.actions.files import DebateFiles, today
from dreamcontext_council.actions.index import rebuild_index, update_index
from dreamcontext_council.actions.live_state import refresh_live
from dreamcontext_council.errors import CouncilError, Interrupted, StateError, UsageError
from dreamcontext_council.folder.leftovers import remove_leftover_staging, staging_folder
from dreamcontext_council.folder.live import clear_live
from dreamcontext_council.folder.machine_local import keep_out_of_git
from dreamcontext_council.folder.names import check_slug, new_debate_id
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_text, read_text
from dreamcontext_council.rules import limits, roundlog
from dreamcontext_council.rules.conflict_markers import ConflictMarkers
from dreamcontext_council.rules.debate import MAX_ROUNDS, Debate, render_debate
from dreamcontext_council.rules.limits import check_length
from dreamcontext_council.rules.markdown import find_section
from dreamcontext_council.rules.persona import PersonaContext
from dreamcontext_council.rules.roster import MAX_PERSONAS, PersonaSpec
from dreamcontext_council.rules.seats import is_person
from dreamcontext_council.rules.verdicts import Verdicts

DEFAULT_ROUNDS = 3
# A debate grounded in attachments runs compact: two rounds, no convergence check
# (NiraNexus Council). An explicit --rounds overrides it.
GROUNDED_ROUNDS = 2


def parse_options(spec: str | None) -> list[dict[str, str]]:
    """`"A=Migrate now,B=Stay on Redis"` → [{key, label}, ...]; keys must be distinct.

    The raw text's length is checked first, then the count, so a huge spec is refused
    before it is split."""
    if not spec or not spec.strip():
        return []
    check_length(
        spec,
        limits.MAX_OPTIONS_CHARS,
        "--options",
        f"Register at most {limits.MAX_OPTIONS} options with short keys and labels.",
    )
    parts = spec.split(",")
    if len(parts) > limits.MAX_OPTIONS:
        raise UsageError(
            f"--options names {len(parts)} options; a council weighs at most "
            f"{limits.MAX_OPTIONS}. Keep the ones that are really on the table."
        )
    options: list[dict[str, str]] = []
    seen: set[str] = set()
    for part in parts:
        key, sep, label = part.partition("=")
        key, label = key.strip(), label.strip()
        if not sep or not key or not label:
            raise UsageError(
                f"Option '{part.strip()}' needs the form KEY=label, as in --options "
                '"A=Migrate now,B=Stay on Redis".'
            )
        check_length(
            key, limits.MAX_OPTION_KEY_CHARS, "An option key", "Use a short key, such as A or B."
        )
        check_length(
            label, limits.MAX_OPTION_LABEL_CHARS, f"The label of option {key}", "Shorten it."
        )
        if key.casefold() in seen:
            raise UsageError(f"Option key '{key}' appears twice in --options.")
        seen.add(key.casefold())
        options.append({"key": key, "label": label})
    return options


def planned_rounds(rounds: int | None, *, grounded: bool) -> int:
    """The rounds a new debate plans: those asked for, else 2 when grounded, else 3."""
    if rounds is not None:
        return check_rounds(rounds)
    return GROUNDED_ROUNDS if grounded else DEFAULT_ROUNDS


def check_rounds(rounds: int) -> int:
    if not 1 <= rounds <= MAX_ROUNDS:
        raise UsageError(f"--rounds must be from 1 to {MAX_ROUNDS}, not {rounds}.")
    return rounds


def check_topic(topic: str) -> str:
    check_length(
        topic,
        limits.MAX_TOPIC_CHARS,
        "The topic",
        "Ask the question in a paragraph or two and attach the background (--attach).",
    )
    cleaned = " ".join(topic.split()) if "\n" not in topic.strip() else topic.strip()
    if not cleaned or "\x00" in cleaned:
        raise UsageError(
            'The topic is empty; pass the question, as in council new "Should we ...?".'
        )
    return cleaned


def new_debate(
    root: Root,
    topic: str,
    *,
    rounds: int | None = None,
    options: list[dict[str, str]] | None = None,
    interrupt: bool = False,
    personas: list[PersonaSpec] | None = None,
    attachments: list[Path] | None = None,
    extra: dict[str, Any] | None = None,
    research: bool = False,
) -> Debate:
    """Create a debate folder (with its personas and attachments) and register it in the index.

    Attachments must already be checked (rules.grounding.check_attachments). Without
    `rounds`, a debate with attachments or research tools (`research`) plans 2 rounds
    (compact) and any other 3.
    """
    topic = check_topic(topic)
    rounds = planned_rounds(rounds, grounded=bool(attachments) or research)
    for spec in personas or []:
        check_slug(spec.slug)
    debate_id = new_debate_id()
    while root.debate(debate_id).folder.exists():
        debate_id = new_debate_id()
    date = today()
    meta: dict[str, Any] = {
        "id": debate_id,
        "topic": topic,
        "status": "created",
        "rounds_planned": rounds,
        "current_round": 0,
        "interrupt_between_rounds": interrupt,
        "personas": [],
        "promoted_to_knowledge": None,
        "created_at": date,
        "updated_at": date,
        "options": options or [],
        **(extra or {}),
    }
    # Read once: the record and the copy describe the same bytes.
    copies = {path.name: path.read_bytes() for path in attachments or []}
    if copies:
        meta["attachments"] = [
            {"name": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in copies.items()
        ]
    seated: list[PersonaContext] = []
    for spec in personas or []:
        if any(context.name == spec.slug for context in seated):
            raise _already_seated(spec.slug, debate_id)
        if len(seated) >= MAX_PERSONAS:
            raise _council_full(debate_id)
        seated.append(_new_context(spec))
    meta["personas"] = [context.name for context in seated]
    # The folder is built under a hidden name and renamed into place whole, so a crash
    # while seating personas leaves no half-made debate that `run` could not finish. No
    # other writer knows the hidden folder (its name holds this process's pid): it is
    # written without the lock, and without the index and live file of a root.
    keep_out_of_git(root)  # before the hidden folder exists; a `council` link out stops here
    remove_leftover_staging(root.council)  # folders a killed `new` was building
    staging = Root(staging_folder(root.council, debate_id))
    files = DebateFiles(staging, debate_id, must_exist=False)
    body = resources.render("files/debate-body.md.j2", topic=topic, facts=[])
    try:
        for name, data in copies.items():
            # Decoded without newline translation, so the copy is byte for byte the file.
            atomic_write_text(
                files.paths.attachments / name, data.decode("utf-8"), within=root.path
            )
        atomic_write_text(files.paths.round_log, roundlog.new_log(debate_id), within=root.path)
        files.save_verdicts(Verdicts(options=list(options or [])))
        for context in seated:
            files.save_context(context.name, context)
            files.start_report(context.name)
        atomic_write_text(
            files.paths.debate_md, render_debate(Debate(meta, body)), within=root.path
        )
        os.rename(files.paths.folder, root.debate(debate_id).folder)
    except OSError as exc:
        named = _named_in_place(exc, staging, files.paths.folder, root.debate(debate_id).folder)
        if named is exc:
            raise
        raise named from exc
    finally:
        shutil.rmtree(staging.path, ignore_errors=True)
    debate = DebateFiles(root, debate_id).debate()
    update_index(root, debate.meta)
    refresh_live(root, debate_id, phase="setup")
    return debate


@contextmanager
def taken_back_if_refused(root: Root, debate_id: str | None) -> Iterator[None]:
    """Around the steps between making a debate and its first round (`debate_id`: the one
    this run made; None when it resumes one): a refusal there removes the debate, so no
    empty debate is left for `list` or the next run to find. Ctrl-C keeps it to resume."""
    try:
        yield
    except Interrupted:
        raise
    except Exception:
        if debate_id is not None:
            discard_new_debate(root, debate_id)
        raise


def discard_new_debate(root: Root, debate_id: str) -> bool:
    """Remove a debate that no round has started (what a refused run made), and its entry in
    the index and the live file; False, leaving everything, when it is not that."""
    folder = root.debate(debate_id).folder
    try:
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode) or folder.resolve().parent != root.council.resolve():
            return False  # a link, or not a folder of this council: never removed through
        files = DebateFiles(root, debate_id)
        with files.lock():
            debate = files.debate()
            if debate.status.phase != "created" or debate.current_round:
                return False
            shutil.rmtree(folder)
    except (OSError, CouncilError):
        return False
    rebuild_index(root)
    if _live_debate(root) == debate_id:
        with suppress(CouncilError):  # a `tmp` link out: nothing is deleted there
            clear_live(root.live_file, within=root.path)
    return True


def _live_debate(root: Root) -> str | None:
    try:
        data = json.loads(read_text(root.live_file, within=root.live_file.parent))
    except (OSError, ValueError, CouncilError):
        return None
    return data.get("debate") if isinstance(data, dict) else None


def _named_in_place(exc: OSError, staging: Root, built: Path, final: Path) -> OSError:
    """The error names the file where the debate goes, not the hidden folder it is built in."""
    if exc.filename is None:
        return exc
    path = Path(os.fsdecode(exc.filename))
    if path.is_relative_to(built):
        return OSError(exc.errno, exc.strerror, str(final / path.relative_to(built)))
    if path.is_relative_to(staging.path):  # the hidden folder itself, or its council/
        return OSError(exc.errno, exc.strerror, str(final))
    return exc


@dataclass(frozen=True)
class AgentResult:
    slug: str
    created: bool  # False: the persona existed and its text was replaced (--force)


def create_agent(
    root: Root, debate_id: str, spec: PersonaSpec, *, force: bool = False
) -> AgentResult:
    """Seat a persona; `force` replaces its text and model, never its reports."""
    files = DebateFiles(root, debate_id)
    slug = check_slug(spec.slug)
    persona_body = _persona_body(spec)
    with files.lock():
        debate = files.debate()
        if debate.status.phase in ("synthesizing", "complete"):
            raise StateError(
                f"Cannot add a persona: {debate_id} is {debate.status}; start a new debate instead."
            )
        paths = files.persona_paths(slug)
        exists = paths.context.exists()
        if exists and not force:
            raise _already_seated(slug, debate_id)
        if not exists and len(debate.personas) >= MAX_PERSONAS:
            raise _council_full(debate_id)
        if exists:
            context = files.context(slug)
            rest = context.body.split("\n")
            # Keep every injected panel and directive; replace only the ## Persona section.
            found = find_section(context.body, 2, "Persona")
            if found:
                rest = (
                    rest[: found.start]
                    + persona_body.rstrip("\n").split("\n")
                    + [""]
                    + rest[found.end :]
                )
                context.body = "\n".join(rest)
            else:
                context.body = persona_body + "\n" + context.body
            context.model = spec.model or context.model
            context.aspects = spec.aspects or context.aspects
        else:
            context = _new_context(spec, persona_body)
        files.save_context(slug, context)
        files.start_report(slug)
        if slug not in debate.personas:
            debate.meta["personas"] = [*debate.personas, slug]
            files.save_debate(debate)
    refresh_live(root, debate_id)
    return AgentResult(slug, not exists)


def _persona_body(spec: PersonaSpec) -> str:
    """The `## Persona` section of a context file; UsageError for an empty persona text."""
    if not spec.body.strip():
        raise UsageError(
            f"The persona text for '{spec.slug}' is empty; pass --body TEXT or pipe it on stdin."
        )
    return resources.render("files/persona-body.md.j2", persona_text=spec.body.strip())


def _new_context(spec: PersonaSpec, persona_body: str | None = None) -> PersonaContext:
    """The context file of a persona seated now: its text, model and aspects, no entries."""
    body = persona_body if persona_body is not None else _persona_body(spec)
    return PersonaContext(spec.slug, spec.model, list(spec.aspects), 0, body)


def _already_seated(slug: str, debate_id: str) -> UsageError:
    return UsageError(
        f"Persona '{slug}' already sits on {debate_id}; pass --force to replace its text "
        "(its reports are kept)."
    )


def _council_full(debate_id: str) -> UsageError:
    return UsageError(f"{debate_id} already has {MAX_PERSONAS} personas, the most a council takes.")


@dataclass(frozen=True)
class AgentRow:
    slug: str
    model: str
    aspects: list[str]
    rounds_reported: list[int]
    person: bool = False  # a person answers this seat (`model: human`)
    # One line per file of the persona left out for git conflict markers.
    conflicts: list[str] = field(default_factory=list)


def list_agents(root: Root, debate_id: str) -> list[AgentRow]:
    """The roster in priority order with model, aspects and the rounds each reported.

    A persona file holding git conflict markers is read as empty (no model and aspects, or
    no rounds reported) and named in the row's `conflicts`, as the read commands show it."""
    files = DebateFiles(root, debate_id)
    debate = files.debate()
    rows = []
    for slug in debate.personas:
        paths = files.persona_paths(slug)
        conflicts: list[str] = []
        context = None
        if paths.context.exists():
            try:
                context = files.context(slug)
            except ConflictMarkers as exc:
                conflicts.append(str(exc))
        try:
            reported = sorted({e.round for e in files.entries(slug)})
        except ConflictMarkers as exc:
            reported = []
            conflicts.append(str(exc))
        rows.append(
            AgentRow(
                slug,
                context.model if context else "",
                context.aspects if context else [],
                reported,
                context is not None and is_person(context.model),
                conflicts,
            )
        )
    return rows
