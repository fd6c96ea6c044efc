"""A person at a terminal answers their seat in `$EDITOR`: `run`, on a real pseudo-terminal,
offers the editor on a prepared entry, records what is saved through the functions `verdict`
and `report append` use, and opens it again with the error on top when the entry is refused."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from debate_story import council_argv

from dreamcontext_council.engine.protocol.entry_form import Drafts, EntryForm, edit_entry
from dreamcontext_council.folder.paths import Root

from .support import OPTIONS, TOPIC, Council, entry, roster_file, wait_for

PERSON = "alice"

# The person's editor: it records what it was opened on, then writes an answer over the
# form, with a cross-examination when the form asks for one. With REFUSE_FIRST it leaves
# the score out the first time, so the entry is refused and comes back, the error on top.
EDITOR = r"""
import json, os, re, sys
path = sys.argv[1]
form = open(path, encoding="utf-8").read()
number = int(re.search(r"-round-(\d+)\.md$", path).group(1))
critic = "### Cross-examination" in form
refused = "NOT RECORDED:" in form
with open(os.environ["EDITOR_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"round": number, "critic": critic, "refused": refused,
                          "context": "## Your persona" in form,
                          "draft": f"Stay on Redis in round {number}:" in form}) + "\n")
score = "" if os.environ.get("REFUSE_FIRST") and critic and not refused else "Score: 4/10"
sections = [
    "### Executive Summary", f"Stay on Redis in round {number}: nobody rehearsed the cutover.",
    "### Position", "Option B, until a cutover is rehearsed.",
    "### Reasoning", "A failed cutover costs more than a year of Redis.",
    "### Reactions to peers", "**risk-auditor**: right about the rollback.",
]
if critic:
    sections += ["### Cross-examination", "> The migration is cheap.", "It skips dual writes.", score]
sections += ["### Open questions", "Who owns the rehearsal?"]
verdict = ["```verdict", "stance: B", "conviction: 70", "headline: Rehearse first", "concession: none", "```"]
open(path, "w", encoding="utf-8").write("\n".join(sections + [""] + verdict) + "\n")
"""


class Terminal:
    """`council ARGS` on a pseudo-terminal (stdin, stdout and stderr), its screen kept."""

    def __init__(self, council: Council, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.screen = b""
        self.process = subprocess.Popen(
            council_argv(*args),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=council.workdir,
            env=council.environment(env),
            start_new_session=True,
        )
        os.close(slave)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.screen += data

    def shows(self, text: str) -> bool:
        return text.encode() in self.screen

    def press_enter(self) -> None:
        os.write(self.master, b"\r")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self.reader.join(timeout=10)
        os.close(self.master)


def test_a_person_answers_in_the_editor_the_run_offers_on_a_terminal(
    council: Council, tmp_path: Path
) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR, encoding="utf-8")
    log = tmp_path / "editor.log"
    roster = roster_file(
        tmp_path / "roster.json", {"risk-auditor": "scripted", "growth-cfo": "scripted"}
    )
    env = {
        "EDITOR": f"{sys.executable} {editor}",
        "EDITOR_LOG": str(log),
        "REFUSE_FIRST": "1",
        "TERM": "xterm",
        "COLUMNS": "160",
    }
    args = ["run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster]
    terminal = Terminal(council, [*args, "--rounds", "2", "--human", PERSON], env)
    try:
        for number in (1, 2):
            offer = f"{PERSON}: press Enter to write your round {number} entry in "
            wait_for(
                lambda offer=offer: terminal.shows(offer) or terminal.process.poll() is not None
            )
            assert terminal.process.poll() is None, terminal.screen.decode(errors="replace")
            terminal.press_enter()
        assert terminal.process.wait(timeout=120) == 0, terminal.screen.decode(errors="replace")
    finally:
        terminal.close()
    screen = terminal.screen.decode(errors="replace")

    debate_id = council.only_id()
    assert council.status(debate_id) == "complete"
    assert "waiting for you" in screen
    opened = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    critic = PERSON in council.meta(debate_id)["cross_examination"]
    assert critic  # a person with a round-1 answer is paired in round 2
    # Round 1 once; round 2 refused without its score, then opened again with the error
    # above what the person saved (the form's context, which they wrote over, is theirs).
    assert opened == [
        {"round": 1, "critic": False, "refused": False, "context": True, "draft": False},
        {"round": 2, "critic": True, "refused": False, "context": True, "draft": False},
        {"round": 2, "critic": True, "refused": True, "context": False, "draft": True},
    ]
    assert "entry was not recorded" in screen
    report = council.text(debate_id, f"{PERSON}/report.md")
    assert "Stay on Redis in round 1" in report and "Stay on Redis in round 2" in report
    assert "<!--" not in report  # the form's comments are left out
    verdicts = council.json_file(debate_id, "verdicts.json")["rounds"]
    assert verdicts["2"][PERSON]["stance"] == "B"
    assert verdicts["2"][PERSON]["conviction"] == 70
    reviews = council.json_file(debate_id, "reviews.json")["rounds"]["2"]
    assert reviews[PERSON]["score"] == 4
    assert not [u for u in council.usage(debate_id) if u["persona"] == PERSON]
    context = council.text(debate_id, f"{PERSON}/context-and-persona.md")
    assert "model: human" in context
    assert "A person holds this seat" in context


# -- a refused entry comes back as the person wrote it ------------------------------------

# The person's editor, run as a real process by `run_editor`: each time it is opened it logs
# what it was opened on; the first time it writes a draft whose verdict lacks a conviction,
# then (FIX) adds the conviction to what it finds, or (LEAVE) closes it as it was.
DRAFTING_EDITOR = r"""
import json, os, sys
path = sys.argv[1]
with open(path, "rb") as opened:
    form = opened.read()
with open(os.environ["EDITOR_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(form.decode("utf-8", "surrogateescape")) + "\n")
if b"NOT RECORDED:" not in form:
    draft = open(os.environ["DRAFT"], "rb").read()
    open(path, "wb").write(draft)
elif os.environ.get("AFTER_REFUSAL") == "fix":
    open(path, "wb").write(form.replace(b"stance: B\n", b"stance: B\nconviction: 70\n"))
"""


def drafting_person(
    council: Council, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after_refusal: str
) -> tuple[str, bytes]:
    """A debate in round 1 with a seat `alice`, and her draft with a blank verdict line."""
    debate_id = council.new_debate()
    council.add_persona(debate_id, PERSON)
    assert council("round", "start", debate_id, "1").code == 0
    draft = (
        entry("Stay on Redis: the cutover — never rehearsed — costs a weekend.", position="B.")
        + "My own words, three hours of them.\n\n"
        + "```verdict\nstance: B\nheadline: Rehearse first\nconcession: none\n```\n"
    ).encode()
    (tmp_path / "draft.md").write_bytes(draft)
    monkeypatch.setenv("EDITOR_LOG", str(tmp_path / "opened.log"))  # the editor inherits them
    monkeypatch.setenv("DRAFT", str(tmp_path / "draft.md"))
    monkeypatch.setenv("AFTER_REFUSAL", after_refusal)
    return debate_id, draft


def opened_forms(tmp_path: Path) -> list[str]:
    lines = (tmp_path / "opened.log").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_a_refused_entry_is_opened_again_with_the_persons_text_under_the_error(
    council: Council, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    debate_id, draft = drafting_person(council, tmp_path, monkeypatch, "fix")
    editor = tmp_path / "editor.py"
    editor.write_text(DRAFTING_EDITOR, encoding="utf-8")
    form = EntryForm.of(Root(council.root), debate_id, PERSON, 1)
    said: list[str] = []

    recorded = edit_entry(form, [sys.executable, str(editor)], notify=said.append)

    assert recorded
    first, again = opened_forms(tmp_path)
    assert "NOT RECORDED" not in first
    error = "the verdict block lacks conviction."
    assert said == [f"{PERSON}'s entry was not recorded: {error}"]
    # The error on top, then every byte the person saved, in place of the blank form.
    assert (
        again
        == f"<!-- NOT RECORDED: {error}\n"
        + (
            "Fix the entry below and save again; or empty the file to answer later with the "
            "commands. -->\n\n"
        )
        + draft.decode()
    )
    report = council.text(debate_id, f"{PERSON}/report.md")
    assert "My own words, three hours of them." in report
    assert "NOT RECORDED" not in report
    verdict = council.json_file(debate_id, "verdicts.json")["rounds"]["1"][PERSON]
    assert (verdict["stance"], verdict["conviction"]) == ("B", 70)


def test_a_refused_entry_closed_unchanged_is_kept_and_opened_next_time(
    council: Council, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    debate_id, draft = drafting_person(council, tmp_path, monkeypatch, "leave")
    editor = tmp_path / "editor.py"
    editor.write_text(DRAFTING_EDITOR, encoding="utf-8")
    form = EntryForm.of(Root(council.root), debate_id, PERSON, 1)
    drafts = Drafts()
    said: list[str] = []

    recorded = edit_entry(form, [sys.executable, str(editor)], notify=said.append, drafts=drafts)

    assert not recorded
    assert len(opened_forms(tmp_path)) == 2  # opened once again, not for ever
    kept = said[-1]
    assert kept.startswith(f"{PERSON}'s text is kept in ") and kept.endswith(".md.")
    path = Path(kept.removeprefix(f"{PERSON}'s text is kept in ").removesuffix("."))
    held = path.read_bytes()
    assert held.endswith(draft)  # under the error, every byte of it
    report = council.folder(debate_id) / PERSON / "report.md"  # seated: no entry in it
    assert "## Round" not in report.read_text(encoding="utf-8")

    # The run offers the editor again: it opens on the kept text, which the person fixes.
    monkeypatch.setenv("AFTER_REFUSAL", "fix")
    assert edit_entry(form, [sys.executable, str(editor)], drafts=drafts)
    assert opened_forms(tmp_path)[-1] == held.decode()
    assert not path.parent.exists()  # recorded: the kept file is gone
    assert "My own words" in council.text(debate_id, f"{PERSON}/report.md")
