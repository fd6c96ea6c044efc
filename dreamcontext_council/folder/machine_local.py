"""Files that belong to one machine, never to a debate: kept out of git by committed ignores.

Locks, atomic-write temps, folders being built, the run record (it names a pid and a host),
the in-flight calls and the live file stay where the Node tool looks for them. The ignore
files list this tool's and the Node tool's alike: `council/.gitignore`, `tmp/.gitignore`
and, once the folder is there, `knowledge/.gitignore`. None lists itself, so they are
committed with the debates and a fresh clone ignores those files before either tool has
written anything in it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.safe_write import folders_ready
from dreamcontext_council.folder.storage import atomic_write_text, read_text

MARKER = "# Written by dreamcontext council: files local to this machine, never committed."

# Locks: ours (`.council.lock`, `.run.lock`) and the Node tool's (`verdicts.json.lock`).
# Temps: ours `.<name>.<pid>-<hex>.tmp`, the Node tool's `<name>.tmp`, `<name>.<pid>.<hex>.tmp`.
LOCKS_AND_TEMPS = ["*.lock", "*.tmp"]

COUNCIL_IGNORE = "\n".join(
    [
        MARKER,
        *LOCKS_AND_TEMPS,
        ".new-*",  # a debate folder being built, `.new-<id>.<pid>`
        "/*/run.json",  # the run driving a debate: its pid, host and start
        "/*/.in-flight",  # the calls a run is making (`in_flight`), or a link in its place
        "",
    ]
)
# tmp/ is the Node tool's folder for telemetry: all of it is machine-local, as that tool
# writes it, but for this file.
TMP_IGNORE = "\n".join([MARKER, "*", "!.gitignore", ""])
# knowledge/ holds documents to commit; only the Node tool's and ours locks and temps are not.
KNOWLEDGE_IGNORE = "\n".join([MARKER, *LOCKS_AND_TEMPS, ""])
# What earlier versions wrote in tmp/ (ignoring itself too): ours to bring up to date.
_OLD_TMP_IGNORE = "*\n"

# Roots this process has checked, and when: a run takes the lock hundreds of times a
# second, so a root is looked at again (a deleted .gitignore comes back) once a second.
_checked: dict[Path, float] = {}
RECHECK_S = 1.0


def keep_out_of_git(root: Root, *, now: bool = False) -> None:
    """Write the root's ignore files where they are missing or ours and out of date.

    Never fails a command: a read-only root or a file in the way leaves things as they are.
    Except a link: `council/` or `tmp/` committed as a link gives LinkOut (see `safe_write`),
    before the command writes anything else. `now`: look again even within the second
    (after a command made `knowledge/`).
    """
    clock = time.monotonic()
    last = _checked.get(root.path)
    if not now and last is not None and clock - last < RECHECK_S:
        return
    for folder in (root.council, root.live_file.parent):
        with contextlib.suppress(OSError):
            folders_ready(folder / ".gitignore", root.path)
    _checked[root.path] = clock
    wanted = [
        (root.council / ".gitignore", COUNCIL_IGNORE),
        (root.live_file.parent / ".gitignore", TMP_IGNORE),
    ]
    if _is_folder(root.knowledge):  # made by `promote` or the Node tool, never for this
        wanted.append((root.knowledge / ".gitignore", KNOWLEDGE_IGNORE))
    if last is not None and all(os.path.lexists(path) for path, _ in wanted):
        return
    for path, text in wanted:
        with contextlib.suppress(OSError, CouncilError):
            _ensure(root, path, text)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _ensure(root: Root, path: Path, text: str) -> None:
    """Write `text` to `path` when it is missing, or ours (our first line, or what an earlier
    version wrote) and different; someone else's (the Node tool's, the user's) is kept."""
    if path.exists() or path.is_symlink():
        current = read_text(path, within=root.path)
        if current == text or not (current.startswith(MARKER) or current == _OLD_TMP_IGNORE):
            return
    atomic_write_text(path, text, within=root.path, durable=False)
