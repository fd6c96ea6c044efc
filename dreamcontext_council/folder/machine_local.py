"""Files that belong to one machine, never to a debate: kept out of git by the root itself.

Locks, atomic-write temps, folders being built, the run record (it names a pid and a host)
the in-flight calls and the live file stay where the Node tool looks for them; two `.gitignore` files that
ignore themselves keep git from staging them. Each clone writes its own on first write, so
nothing of this is ever committed and nothing needs a commit to work.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.safe_write import folders_ready
from dreamcontext_council.folder.storage import LOCK_NAME, atomic_write_text, read_text

MARKER = "# Written by dreamcontext council: files local to this machine, never committed."
RUN_LOCK_NAME = ".run.lock"  # the engine's run takes it; the folder layer cannot import it

COUNCIL_IGNORE = "\n".join(
    [
        MARKER,
        ".gitignore",
        LOCK_NAME,  # the debate's and the index's lock
        RUN_LOCK_NAME,  # held by the `council run` driving a debate
        ".*.tmp",  # atomic-write temps, `.<name>.<pid>-<hex>.tmp`
        ".new-*",  # a debate folder being built, `.new-<id>.<pid>`
        "/*/run.json",  # the run driving a debate: its pid, host and start
        "/*/.in-flight",  # the calls a run is making (`in_flight`), or a link in its place
        "",
    ]
)
# tmp/ is the Node tool's folder for telemetry: all of it is machine-local, as that tool
# writes it.
TMP_IGNORE = "*\n"

# Roots this process has checked, and when: a run takes the lock hundreds of times a
# second, so a root is looked at again (a deleted .gitignore comes back) once a second.
_checked: dict[Path, float] = {}
RECHECK_S = 1.0


def keep_out_of_git(root: Root) -> None:
    """Write the root's ignore files where they are missing or ours and out of date.

    Never fails a command: a read-only root or a file in the way leaves things as they are.
    Except a link: `council/` or `tmp/` committed as a link gives LinkOut (see `safe_write`),
    before the command writes anything else.
    """
    now = time.monotonic()
    last = _checked.get(root.path)
    if last is not None and now - last < RECHECK_S:
        return
    for folder in (root.council, root.live_file.parent):
        with contextlib.suppress(OSError):
            folders_ready(folder / ".gitignore", root.path)
    _checked[root.path] = now
    if last is not None and (root.council / ".gitignore").exists():
        return
    with contextlib.suppress(OSError, CouncilError):
        _ensure(root, root.council / ".gitignore", COUNCIL_IGNORE, owned=True)
    with contextlib.suppress(OSError, CouncilError):
        _ensure(root, root.live_file.parent / ".gitignore", TMP_IGNORE, owned=False)


def _ensure(root: Root, path: Path, text: str, *, owned: bool) -> None:
    if path.exists() or path.is_symlink():
        if not owned:
            return  # someone else's (the Node tool's, the user's): theirs to keep
        current = read_text(path, within=root.path)
        if current == text or not current.startswith(MARKER):
            return
    atomic_write_text(path, text, within=root.path, durable=False)
