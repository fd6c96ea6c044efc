"""Reads under the debate's lock: a file read twice in one hold is looked at once, a write
in the hold is seen by the next read, and a hold's view ends with the hold."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.folder import machine_local
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.markdown import sections


def _lstats_of(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[str]:
    seen: list[str] = []
    real = os.lstat

    def lstat(name: str | os.PathLike[str], *args: object, **kwargs: object) -> os.stat_result:
        if os.fspath(name) == str(path):
            seen.append(str(name))
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", lstat)
    return seen


def test_a_file_read_twice_in_one_hold_is_looked_at_once(
    root: Root, running: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = DebateFiles(root, running)
    looked = _lstats_of(monkeypatch, files.paths.verdicts)

    with files.lock():
        first = files.verdicts()
        after_first = len(looked)
        second = files.verdicts()
    assert after_first > 0 and len(looked) == after_first
    assert first == second and first is not second  # each caller gets its own copy

    files.verdicts()  # outside the hold: the file is looked at again
    assert len(looked) > after_first


def test_a_write_in_the_hold_is_seen_by_the_next_read(root: Root, running: str) -> None:
    files = DebateFiles(root, running)
    with files.lock():
        verdicts = files.verdicts()
        verdicts.options.append({"key": "Z", "label": "Zed"})
        files.save_verdicts(verdicts)
        assert {"key": "Z", "label": "Zed"} in files.verdicts().options


def test_a_change_after_the_hold_is_seen(root: Root, running: str) -> None:
    files = DebateFiles(root, running)
    with files.lock():
        assert len(files.verdicts().options) == 2
    data = json.loads(files.paths.verdicts.read_text(encoding="utf-8"))
    data["options"].append({"key": "Y", "label": "Wait"})
    files.paths.verdicts.write_text(json.dumps(data), encoding="utf-8")  # by hand
    with files.lock():
        assert {"key": "Y", "label": "Wait"} in files.verdicts().options


def test_a_deleted_gitignore_comes_back_once_a_second_has_passed(
    root: Root, running: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(machine_local.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(machine_local, "_checked", {})
    files = DebateFiles(root, running)
    ignore = root.council / ".gitignore"
    with files.lock():
        pass
    assert ignore.is_file()

    ignore.unlink()
    clock[0] += 0.5
    with files.lock():
        pass
    assert not ignore.exists()  # looked at no more than once a second

    clock[0] += 1.0
    with files.lock():
        pass
    assert ignore.read_text(encoding="utf-8") == machine_local.COUNCIL_IGNORE


def test_the_sections_of_a_text_are_the_callers_own() -> None:
    text = "## One\nfirst\n\n## Two\nsecond\n"
    found = sections(text, 2)
    found.clear()
    assert [s.title for s in sections(text, 2)] == ["One", "Two"]
