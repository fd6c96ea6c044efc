"""A debate's own files as the sides of a git merge hold them, for `doctor` to restore what
a hand resolution dropped.

A debate folder may come from a clone of someone else's repository, so git is read with
care: a fixed argv (no shell), no terminal prompt, no pager and no fsmonitor hook, stdin
closed, a timeout, and output read up to a cap; only the debate's own files are asked for,
by a path from the repository's top that git computed, at revisions git itself named (full
object ids). Anything unusual (no git, not a repository, a revision missing, a file too
big) reads as nothing held, never as an error.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

# A side's verdicts.json or report.md is read up to this size (ten rounds of long answers
# fit many times over); a bigger blob is not read at all.
MAX_BLOB_BYTES = 16 * 1024 * 1024
# The merges looked at: the one in progress, else the last few that reach HEAD.
MAX_MERGES = 4
_TIMEOUT_S = 20.0
_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_GIT = (
    "git",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "core.hooksPath=/dev/null",
    "--no-pager",
)
_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",  # a read takes no lock in someone's repository
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
}


class Side(NamedTuple):
    """A revision that may hold what a merge dropped, and how a person names it."""

    revision: str  # a full object id
    named: str  # "MERGE_HEAD (the merge in progress)", "commit 1a2b3c4 (...)"


@dataclass
class DebateHistory:
    """The debate folder's files at the other sides of its repository's recent merges."""

    folder: Path
    _prefix: str | None = None
    _looked: bool = False
    _sides: list[Side] | None = None
    _read: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def sides(self) -> list[Side]:
        """The sides of the merge in progress (MERGE_HEAD, then HEAD); with none open, the
        parents of the last merges that reach HEAD, newest merge first. Empty outside a
        git repository."""
        if self._sides is None:
            self._sides = self._merge_sides() if self.prefix() is not None else []
        return self._sides

    def _merge_sides(self) -> list[Side]:
        theirs = self._object("MERGE_HEAD")
        if theirs is not None:
            ours = self._object("HEAD")
            found = [Side(theirs, "MERGE_HEAD (their side of the merge in progress)")]
            return found + (
                [Side(ours, "HEAD (our side of the merge in progress)")] if ours else []
            )
        listed = _git(
            self.folder, "rev-list", "--merges", "--parents", f"--max-count={MAX_MERGES}", "HEAD"
        )
        found = []
        for line in (listed or "").split("\n"):
            ids = line.split()
            if len(ids) < 3 or not all(_OBJECT_ID.fullmatch(i) for i in ids):
                continue
            found += [
                Side(parent, f"commit {parent[:7]} (parent {n} of merge {ids[0][:7]})")
                for n, parent in enumerate(ids[1:], 1)
            ]
        return found

    def text(self, side: Side, name: str) -> str | None:
        """The debate's file `name` (a path inside the folder) as `side` holds it; None when
        it holds none, or none that can be read."""
        prefix = self.prefix()
        if prefix is None or not _OBJECT_ID.fullmatch(side.revision) or not _inside(name):
            return None
        key = (side.revision, name)
        if key not in self._read:
            self._read[key] = _blob(self.folder, f"{side.revision}:{prefix}{name}")
        return self._read[key]

    def prefix(self) -> str | None:
        """The folder's path from the repository's top (`a/b/`); None outside a repository."""
        if not self._looked:
            self._looked = True
            shown = _git(self.folder, "rev-parse", "--show-prefix")
            if shown is not None and _inside(shown.rstrip("/") or "x"):
                self._prefix = shown
        return self._prefix

    def _object(self, name: str) -> str | None:
        found = _git(self.folder, "rev-parse", "-q", "--verify", f"{name}^{{commit}}")
        return found if found is not None and _OBJECT_ID.fullmatch(found) else None


def _inside(name: str) -> bool:
    """A relative path that stays inside the folder it is read from."""
    parts = name.split("/")
    return bool(name) and not name.startswith(("/", "-")) and ".." not in parts and "" not in parts


def _blob(folder: Path, spec: str) -> str | None:
    size = _git(folder, "cat-file", "-s", spec)
    if size is None or not size.isdigit() or int(size) > MAX_BLOB_BYTES:
        return None
    data = _run(folder, ["cat-file", "blob", spec], MAX_BLOB_BYTES)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


def _git(folder: Path, *args: str) -> str | None:
    """A short answer of git (a revision, a size, a list of merges); None when it fails."""
    data = _run(folder, list(args), 64 * 1024)
    return data.decode("utf-8", "replace").strip() if data is not None else None


def _run(folder: Path, args: list[str], cap: int) -> bytes | None:
    """git's stdout, read up to `cap` bytes (None past it, on failure or on timeout)."""
    env = {**os.environ, **_ENV}
    try:
        process = subprocess.Popen(
            [*_GIT, *args],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None
    assert process.stdout is not None
    # A git that neither writes nor ends is stopped: the read below then sees the end.
    timer = threading.Timer(_TIMEOUT_S, process.kill)
    timer.start()
    try:
        data = process.stdout.read(cap + 1)
        if len(data) > cap:
            return None
        code = process.wait(timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
    return data if code == 0 else None
