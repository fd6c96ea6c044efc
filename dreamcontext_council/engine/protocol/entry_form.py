"""A person's round entry written in their editor: the form `run` prepares, and its record.

The form holds the round's context (what `round-context` prints) as a comment, the five
sections of an entry (and round 2's cross-examination for a critic) and the verdict block a
model ends its answer with. Saved, it is read by the contract a model's answer is read by
(engine/protocol/contract.py: the sections, the verdict, a critic's `Score: N/10`) and
recorded by the functions `verdict` and `report append` call, so the same checks apply. A
form that breaks the contract comes back as the person saved it, the error on top; one left
as it was, or emptied, records nothing: the person answers with the commands instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dreamcontext_council import resources
from dreamcontext_council.actions import submissions
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.rounds import participants
from dreamcontext_council.engine.protocol.contract import ContractError, parse_persona_answer
from dreamcontext_council.engine.protocol.cross_exam import append_entry
from dreamcontext_council.engine.protocol.round_page import round_context
from dreamcontext_council.engine.protocol.rounds import cross_exam_pairs
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root

_COMMENT = re.compile(r"<!--.*?-->", re.S)
# Saved forms are read up to this size; a bigger file is refused as the entry limit would be.
MAX_FORM_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class EntryForm:
    """What the editor opens for a person's round: the debate, the seat, its round, the
    peer it cross-examines (round 2), and the options its stance may name."""

    root: Root
    debate_id: str
    slug: str
    round: int
    peer: str | None
    options: tuple[str, ...]

    @classmethod
    def of(cls, root: Root, debate_id: str, slug: str, number: int) -> EntryForm:
        files = DebateFiles(root, debate_id)
        debate = files.debate()
        peer = None
        if number == 2:
            peer = cross_exam_pairs(files, debate, participants(files, debate, 2)).get(slug)
        options = debate.options or files.verdicts().options
        return cls(root, debate_id, slug, number, peer, tuple(o["key"] for o in options))

    def text(self, error: str | None = None) -> str:
        """The form to fill in; with `error`, the reason the last one was not recorded on top."""
        context = round_context(self.root, self.debate_id, self.slug, this_round=True)
        return resources.render(
            "views/person-entry.md.j2",
            error=_inside_comment(error) if error else None,
            debate_id=self.debate_id,
            slug=self.slug,
            round=self.round,
            peer=self.peer,
            options=self.options,
            context=_inside_comment(context.rstrip("\n")),
        )

    def refusal(self, error: str) -> str:
        """The lines put above a person's refused entry: why it was not recorded."""
        return resources.render("views/person-entry-refused.md.j2", error=_inside_comment(error))

    def record(self, saved: str) -> bool:
        """Record the saved form as the seat's verdict and round entry; False when it was
        left to the commands (unchanged or empty). Raises ContractError or CouncilError
        saying what is wrong, with nothing recorded."""
        answer_text = _COMMENT.sub("", saved).strip()
        blank = _COMMENT.sub("", self.text()).strip()
        if not answer_text or answer_text == blank:
            return False
        files = DebateFiles(self.root, self.debate_id)
        debate = files.debate()
        answer = parse_persona_answer(
            answer_text, debate.options, files.verdicts().options, cross_examines=self.peer
        )
        verdict = answer.verdict
        submissions.record_verdict(
            self.root,
            self.debate_id,
            self.slug,
            self.round,
            stance=verdict.stance_text or verdict.stance,
            conviction=verdict.conviction,
            headline=verdict.headline,
            concession=verdict.concession,
        )
        append_entry(self.root, self.debate_id, self.slug, answer.body, number=self.round)
        return True


def _inside_comment(text: str) -> str:
    """Text that cannot end the comment it stands in (a peer's answer may hold `-->`)."""
    return text.replace("-->", "--\u200b>").replace("--!>", "--\u200b!>")


def editor_command(env: Mapping[str, str]) -> list[str] | None:
    """The person's editor: `$VISUAL`, else `$EDITOR`, as a command line; None when unset."""
    for name in ("VISUAL", "EDITOR"):
        line = (env.get(name) or "").strip()
        if line:
            with contextlib.suppress(ValueError):
                words = shlex.split(line)
                if words:
                    return words
    return None


def run_editor(command: list[str], path: Path) -> int:
    """Open the editor on `path` on this terminal and wait for it to close; its exit code."""
    try:
        return subprocess.run([*command, str(path)], check=False).returncode
    except OSError:
        return 127


Editor = Callable[[list[str], Path], int]


@dataclass
class Draft:
    """A person's refused entry between two openings of the editor: its file, the error
    put above it, and the file's digest as it was opened again."""

    path: Path
    header: bytes = b""
    error: str | None = None
    reopened: bytes = b""


class Drafts:
    """The refused entries a run keeps, by seat and round: the next opening of the editor
    for that round starts from the person's text, not from a blank form."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, int], Draft] = {}

    def take(self, form: EntryForm) -> Draft | None:
        draft = self._kept.pop((form.slug, form.round), None)
        return draft if draft is not None and draft.path.is_file() else None

    def keep(self, form: EntryForm, draft: Draft) -> None:
        self._kept[(form.slug, form.round)] = draft


def edit_entry(
    form: EntryForm,
    command: list[str],
    *,
    editor: Editor = run_editor,
    notify: Callable[[str], None] = lambda _line: None,
    drafts: Drafts | None = None,
) -> bool:
    """Open the editor on the form until it is recorded (True) or left (False).

    A form that breaks the contract is opened again on what the person saved, the error
    above it. What a person wrote is never thrown away: a refused entry closed unchanged
    and refused as before, or anything but the blank form left by an editor that failed,
    stays in its file, `notify` gives the path, and `drafts` opens it next time."""
    blank = form.text().encode("utf-8")
    draft = drafts.take(form) if drafts is not None else None
    if draft is None:
        folder = Path(tempfile.mkdtemp(prefix="council-entry-"))
        draft = Draft(folder / f"{form.slug}-round-{form.round}.md")
        draft.path.write_bytes(blank)
    path = draft.path
    kept = False
    try:
        while True:
            code = editor(command, path)
            if code != 0:
                notify(f"The editor ({command[0]}) exited with {code}; nothing was recorded.")
                kept = _digest(path) != _digest_of(blank)
                return False
            try:
                return form.record(_read_saved(path))
            except (ContractError, CouncilError) as problem:
                again = str(problem) == draft.error and _digest(path) == draft.reopened
                draft.error = str(problem)
                notify(f"{form.slug}'s entry was not recorded: {draft.error}")
                if again:
                    kept = True  # closed as it was opened again, and refused as before
                    return False
                draft.header = _reopen(path, form, draft.error, draft.header)
                draft.reopened = _digest(path)
    finally:
        if kept:
            notify(f"{form.slug}'s text is kept in {path}.")
            if drafts is not None:
                drafts.keep(form, draft)
        else:
            shutil.rmtree(path.parent, ignore_errors=True)


def _reopen(path: Path, form: EntryForm, error: str, previous: bytes) -> bytes:
    """Put the error above what the person saved, every byte of it kept (the last error put
    there is replaced); returns the error's lines as written."""
    header = form.refusal(error).encode("utf-8")
    spare = path.with_name(path.name + ".new")
    with open(path, "rb") as saved, open(spare, "wb") as reopened:
        start = saved.read(len(previous)) if previous else b""
        reopened.write(header)
        if start != previous:
            reopened.write(start)  # the person edited the last error: theirs now
        shutil.copyfileobj(saved, reopened)
    os.replace(spare, path)
    return header


def _digest(path: Path) -> bytes:
    hashed = hashlib.sha256()
    with contextlib.suppress(OSError), open(path, "rb") as saved:
        for block in iter(lambda: saved.read(1 << 16), b""):
            hashed.update(block)
    return hashed.digest()


def _digest_of(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _read_saved(path: Path) -> str:
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_FORM_BYTES + 1)
    except FileNotFoundError:
        return ""  # the editor removed it: as emptied, nothing to record
    if len(data) > MAX_FORM_BYTES:
        raise ContractError(f"the entry is over {MAX_FORM_BYTES // 1024 // 1024} MB; shorten it.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ContractError("the entry is not UTF-8 text; save it as UTF-8.") from None


def editor_name(command: list[str]) -> str:
    """The editor as the person knows it: the program's file name."""
    return os.path.basename(command[0])
