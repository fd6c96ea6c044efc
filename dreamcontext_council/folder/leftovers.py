"""Tidying what killed writers left behind: temps beside the files they were replacing and
folders that were being built.

The names are the writers' own (`storage._temp_beside`, `staging_folder`): each carries the
writer's pid, so a leftover of a dead writer is told from a write still in progress.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path

# A temp without a pid (written before pids were in the name) is a leftover past this age.
STALE_TEMP_S = 3600.0
# A temp whose pid is alive but this old belongs to a later process that got the same pid.
ABANDONED_TEMP_S = 86400.0
# `.<name>.<pid>-<12 hex>.tmp`, or `.<name>.<12 hex>.tmp` from before the pid.
_TEMP_NAME = re.compile(r"\..+\.(?:(?P<pid>[1-9][0-9]{0,8})-)?[0-9a-f]{12}\.tmp")
# `.new-<name>.<pid>`: a folder being built, renamed into place whole; `.new-<name>` before
# the pid was in the name.
_STAGING_NAME = re.compile(r"\.new-[^.]+(?:\.(?P<pid>[1-9][0-9]{0,8}))?")


def remove_leftover_temps(folder: Path, *, recursive: bool = True) -> list[Path]:
    """Delete the temps that killed writers left under `folder`; returns the paths removed.

    A temp is left behind when its writer died between creating it and the rename. One
    whose pid no longer runs is a leftover; one whose pid runs stays, unless it is a day
    old (the pid was reused). A temp named before pids were in the name goes once it is
    an hour old. Files that are not temps are never touched, and a temp that disappears
    meanwhile (its writer renamed it) is skipped. Call it under the lock of the folder.
    """
    removed: list[Path] = []
    now = time.time()
    for path in _temp_candidates(folder, recursive):
        match = _TEMP_NAME.fullmatch(path.name)
        if match is None or not _left_behind(path, stat.S_ISREG, match["pid"], now):
            continue
        try:
            path.unlink()
        except OSError:  # gone meanwhile, or not ours to delete: tidying never stops a command
            continue
        removed.append(path)
    return removed


def staging_folder(parent: Path, name: str) -> Path:
    """Where this process builds the folder `parent/name` before renaming it into place."""
    return parent / f".new-{name}.{os.getpid()}"


def remove_leftover_staging(parent: Path) -> list[Path]:
    """Delete the staging folders (see `staging_folder`) that killed writers left in `parent`.

    The same rule as for temps: the writer's pid no longer runs, or the folder is a day old
    (an hour, for a name without a pid). Tidying never stops a command.
    """
    removed: list[Path] = []
    now = time.time()
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        match = _STAGING_NAME.fullmatch(name)
        if match is None:  # the debates themselves: no system call for them
            continue
        path = parent / name
        if _left_behind(path, stat.S_ISDIR, match["pid"], now):
            import shutil  # here: every command imports this module, few remove a folder

            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _left_behind(path: Path, kind: Callable[[int], bool], pid: str | None, now: float) -> bool:
    """Whether `path` is still there, of `kind` (`stat.S_ISREG`, `stat.S_ISDIR`; a link is
    neither), and left by a dead writer."""
    try:
        info = path.lstat()
    except FileNotFoundError:  # its writer renamed it meanwhile
        return False
    return kind(info.st_mode) and _left_by_dead_writer(pid, now - info.st_mtime)


def _left_by_dead_writer(pid: str | None, age: float) -> bool:
    if pid is None:
        return age > STALE_TEMP_S
    return age > ABANDONED_TEMP_S or not _process_exists(int(pid))


def _temp_candidates(folder: Path, recursive: bool) -> list[Path]:
    if recursive:
        return [
            Path(parent) / name
            for parent, _dirs, names in os.walk(folder)  # skips folders that vanish
            for name in names
            if name.startswith(".") and name.endswith(".tmp")
        ]
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [folder / n for n in names if n.startswith(".") and n.endswith(".tmp")]


def _process_exists(pid: int) -> bool:
    if os.name == "nt":  # os.kill there sends CTRL_C_EVENT for 0; it cannot probe
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True
