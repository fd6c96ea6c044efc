"""A person's seat in a round of `council run`: tell the person, wait for their entry.

A seat whose model is `human` (`run --human SLUG`, a roster's `model: human`) never calls
a model. Each round, while the model personas answer, the seat takes its entry from the
folder if it is there already (written by any process, before this run started, or pulled
by git); else it leaves a waiting file (folder/in_flight.py) that `show`, the dashboard and
the MCP server read, tells the person how to answer, and waits for the entry to land
(engine/protocol/seat_watch.py: no CPU, no model call held open).

Without a terminal the run prints the commands, once a round. On a terminal the live table
shows `<slug>: waiting for you` and the run offers the person's editor on a prepared entry
(engine/protocol/entry_form.py); the live display stops while the editor owns the terminal.
With `--human-timeout` the seat is recorded missing for the round when the time runs out,
as a persona that failed is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TextIO

from dreamcontext_council import resources
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.sealed import round_one_sealed_in
from dreamcontext_council.engine.model_calls.progress import WAITING_FOR_YOU, Progress
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.protocol import entry_form
from dreamcontext_council.engine.protocol.seat_watch import entry_landed, until_landed
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.in_flight import WAITING, InFlightCall, remove_leftover_in_flight
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.report import REQUIRED_SECTIONS
from dreamcontext_council.rules.sealing import SEALED, SEALED_ROUND
from dreamcontext_council.views.terminal import printable


class NoAnswerInTime(CouncilError):
    """A person's seat gave no entry within `--human-timeout`: missing for the round."""


@dataclass
class PersonDesk:
    """Where a run meets the persons of its council: one desk for the run's seats.

    `timeout` is `--human-timeout` (None: wait as long as it takes); `terminal` says the
    run has a person at a terminal (stdin and stdout both one) to offer the editor to;
    `env` is where `$VISUAL`/`$EDITOR` are read; `editor` opens it (a test gives its own).
    """

    root: Root
    files: DebateFiles
    progress: Progress
    timeout: float | None = None
    terminal: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    editor: entry_form.Editor = entry_form.run_editor
    stdin: TextIO | None = None
    # One seat at a time holds the keyboard: its offer, then its editor.
    _keyboard: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)
    _editing: asyncio.Future[bool] | None = field(default=None, init=False, repr=False)
    # A refused entry the person left: the editor opens on it again, never on a blank form.
    drafts: entry_form.Drafts = field(default_factory=entry_form.Drafts, init=False, repr=False)

    async def answer(self, slug: str, number: int, peer: str | None) -> bool:
        """The seat's round: True when its entry is in the folder (taken, or landed while
        waiting); raises NoAnswerInTime when `timeout` ran out first."""
        if entry_landed(self.files, slug, number):
            self._done(slug, number, "on disk")
            return True
        # A killed run's waiting file would tell of a wait nobody keeps: swept first.
        remove_leftover_in_flight(self.files.paths.folder, within=self.root.path)
        since = time.strftime("%H:%M", time.gmtime())
        waiting = InFlightCall(
            self.files.paths.folder,
            within=self.root.path,
            persona=slug,
            phase=prompts.phase_of(number),
            round=number,
            state=WAITING,
        )
        waiting.set_state(WAITING, f"waiting for {slug} since {since} UTC")
        self.progress.persona(slug, WAITING_FOR_YOU, detail=f"since {since} UTC")
        try:
            landed = await self._wait(slug, number, peer)
        finally:
            waiting.end()
        if not landed:
            reason = (
                f"the person in this seat did not answer within {self.timeout:g} s "
                "(--human-timeout)"
            )
            self.progress.persona(slug, "failed", detail="no answer in time")
            raise NoAnswerInTime(reason)
        self._done(slug, number, "")
        return True

    def _done(self, slug: str, number: int, how: str) -> None:
        verdict = self.files.verdicts().round(number).get(slug)
        shown = f"{verdict.stance} {verdict.conviction}" if verdict else ""
        if shown and number == SEALED_ROUND and round_one_sealed_in(self.files):
            shown = SEALED  # another person's seat has yet to answer round 1
        detail = " · ".join(part for part in (how, shown, "a person") if part)
        self.progress.persona(slug, "done", detail=detail)

    async def _wait(self, slug: str, number: int, peer: str | None) -> bool:
        """Wait for the entry, offering the editor on a terminal; an editor open when the
        time runs out is waited for, so a person's writing is never cut off."""
        command = entry_form.editor_command(self.env) if self.terminal else None
        if command is None:
            self.progress.note(self._commands(slug, number, peer))
            if self.terminal:
                self.progress.note(
                    f"{slug}: set $EDITOR (or $VISUAL) to write the entry in an editor from here."
                )
        landed = asyncio.ensure_future(until_landed(self.files, slug, number, timeout=self.timeout))
        offer = (
            asyncio.ensure_future(self._offer(slug, number, command, peer))
            if command is not None
            else None
        )
        try:
            result = await landed
        finally:
            landed.cancel()
            if offer is not None:
                offer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await offer
        if self._editing is not None and not self._editing.done():
            # The person is writing: the editor is never cut off, by the time running out
            # or by the entry landing another way; the live display comes back after it.
            await asyncio.shield(self._editing)
            self.progress.start()
            result = result or entry_landed(self.files, slug, number)
        return result

    def _commands(self, slug: str, number: int, peer: str | None) -> str:
        """The exact commands that answer the seat's round, and that the run waits."""
        waited = "as long as it takes"
        if self.timeout:
            waited = f"up to {self.timeout:g} s (--human-timeout)"
        debate = self.files.debate()
        options = debate.options or self.files.verdicts().options
        return resources.render(
            "views/person-turn.txt.j2",
            slug=slug,
            round=number,
            phase_title=prompts.PHASE_TITLES[prompts.phase_of(number)],
            debate_id=self.files.id,
            options=[o["key"] for o in options],
            sections=REQUIRED_SECTIONS,
            peer=peer,
            waited=waited,
            timeout=self.timeout,
        ).rstrip("\n")

    async def _offer(self, slug: str, number: int, command: list[str], peer: str | None) -> None:
        """On a terminal: offer the editor, open it on Enter; again while nothing is recorded."""
        name = entry_form.editor_name(command)
        async with self._keyboard:
            while True:
                self.progress.note(
                    f"{slug}: press Enter to write your round {number} entry in {name}, or "
                    f"answer with `dreamcontext council report append {self.files.id} "
                    f"{slug} --round {number}` (the sections, then the verdict block); the "
                    "run waits."
                )
                if not await self._enter_pressed():
                    # No keyboard after all (stdin ended): the commands remain.
                    self.progress.note(self._commands(slug, number, peer))
                    return
                loop = asyncio.get_running_loop()
                try:
                    form = entry_form.EntryForm.of(self.root, self.files.id, slug, number)
                except CouncilError as problem:  # a file of the debate cannot be read now
                    self.progress.note(f"{slug}: the entry cannot be prepared: {problem}")
                    self.progress.note(self._commands(slug, number, peer))
                    return
                self.progress.stop()  # the editor owns the terminal until it closes
                self._editing = loop.run_in_executor(None, self._edit, form, command)
                try:
                    recorded = await asyncio.shield(self._editing)
                finally:
                    if self._editing.done():
                        self.progress.start()
                if recorded:
                    return  # the watch sees the entry land
                self.progress.note(f"{slug}: nothing recorded from the editor.")

    def _edit(self, form: entry_form.EntryForm, command: list[str]) -> bool:
        """The editor session, on a worker thread: the terminal is the editor's meanwhile."""

        def say(line: str) -> None:
            print(printable(line), file=sys.stderr, flush=True)

        return entry_form.edit_entry(
            form, command, editor=self.editor, notify=say, drafts=self.drafts
        )

    async def _enter_pressed(self) -> bool:
        """Wait, without a thread or a poll, for a line on stdin; False at its end."""
        stream = self.stdin or sys.stdin
        try:
            fd = stream.fileno()
        except (OSError, ValueError):
            return False
        loop = asyncio.get_running_loop()
        pressed: asyncio.Future[bool] = loop.create_future()

        def readable() -> None:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not pressed.done() and (not data or b"\n" in data or b"\r" in data):
                pressed.set_result(bool(data))

        try:
            loop.add_reader(fd, readable)
        except (OSError, ValueError, NotImplementedError):
            return False
        try:
            return await pressed
        finally:
            loop.remove_reader(fd)


def person_desk_for(
    root: Root,
    files: DebateFiles,
    progress: Progress,
    *,
    timeout: float | None,
    tty: bool,
    env: Mapping[str, str],
) -> PersonDesk:
    """The run's desk: the editor is offered when stdin is a terminal as well as stdout."""
    keyboard = tty and _stdin_is_terminal()
    return PersonDesk(root, files, progress, timeout, keyboard, env)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):
        return False
