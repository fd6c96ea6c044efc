"""Writing a file of the root: only inside it, and never through a link.

A root may come from someone else's repository, and git carries symlinks: a `usage.jsonl`,
`knowledge/`, `tmp/`, a persona's `raw/` or `council/` itself committed as a link would
have a write land wherever it points. Every writer in `storage` names the root it writes
in (`within`). Before a file is made, replaced or appended to, each part of its path below
the root is looked at with `lstat`, from the root down: a link (out of the root, or inside
it) is refused with one line (`LinkOut`) and nothing is written; a missing folder is made
one part at a time, each made folder a real one. The file itself is never followed: it is
appended to with `O_NOFOLLOW` (a link is refused), or replaced by a rename inside the
checked folder (a link inside the root is replaced; a link out of it is refused).

The root itself is taken as it is, as the reads take it. Files the user names (`-o`, the
trust file in the user's config folder, the project's own `.mcp.json`) are trusted and
written with `within=None`.

Cost: one `lstat` per folder between the root and the file (two to four for a debate's
files), once per write, not per byte.

Not guaranteed, as for reads: a local process that swaps a checked folder for a link
between the check and the write.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dreamcontext_council.errors import LinkOut


def folders_ready(path: Path, within: Path) -> None:
    """Check every folder between `within` and the file `path`, making the missing ones.

    LinkOut when one of them is a link, or when `path` is not written as a path inside
    `within` (no `..`). `within` itself is made when missing (it is trusted).
    """
    _walk(path, within, _parts(path, within)[:-1])


def file_ready(path: Path, within: Path) -> None:
    """`folders_ready`, and LinkOut when the file `path` itself is a link: for a file that is
    appended to, checked before work whose record goes there (a run's usage.jsonl)."""
    folders_ready(path, within)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise link_out(path, path, within)


def make_folder(folder: Path, within: Path) -> None:
    """`folder` and the folders above it up to `within`, each checked as `folders_ready`
    checks them: made when missing, LinkOut when one is a link."""
    if folder == within:
        os.makedirs(within, exist_ok=True)
        return
    _walk(folder, within, _parts(folder, within))


def no_link_on_the_way(path: Path, within: Path) -> None:
    """LinkOut when a folder between `within` and `path` is a link; nothing is made (for a
    file about to be deleted: a missing folder holds nothing to delete)."""
    _walk(path, within, _parts(path, within)[:-1], make=False)


def no_link_at(folder: Path, within: Path) -> None:
    """LinkOut when `folder`, or a folder between `within` and it, is a link; nothing is
    made (for a folder whose files are about to be listed and deleted)."""
    _walk(folder, within, _parts(folder, within), make=False)


def _walk(path: Path, within: Path, parts: list[str], *, make: bool = True) -> None:
    current = os.fspath(within)
    made = False
    for number, part in enumerate(parts):
        current = os.path.join(current, part)
        if made:  # below a folder made here, nothing exists yet
            _make(current, path, within)
            continue
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not make:
                return
            if number == 0 and not os.path.isdir(within):
                os.makedirs(within, exist_ok=True)
            _make(current, path, within)
            made = True
            continue
        if stat.S_ISLNK(info.st_mode):
            raise link_out(Path(current), path, within)
        # A file where a folder should be: the write's own open says so.


def _make(folder: str, path: Path, within: Path) -> None:
    try:
        os.mkdir(folder)
    except FileExistsError:  # made meanwhile: it must still be a real folder
        if os.path.islink(folder):
            raise link_out(Path(folder), path, within) from None


def _parts(path: Path, within: Path) -> list[str]:
    text, boundary = os.fspath(path), os.fspath(within)
    if text.startswith(boundary.rstrip(os.sep) + os.sep):
        parts = text[len(boundary.rstrip(os.sep)) + 1 :].split(os.sep)
        if parts and all(part not in ("", ".", "..") for part in parts):
            return parts
    raise LinkOut(
        f"{path} is not a path inside {boundary}; nothing was written. Name a file inside the root."
    )


def leads_out(link: Path, within: Path) -> bool:
    """Whether the link `link` resolves to somewhere outside `within`."""
    target, root = os.path.realpath(link), os.path.realpath(within)
    return target != root and not target.startswith(root.rstrip(os.sep) + os.sep)


def link_out(link: Path, path: Path, within: Path) -> LinkOut:
    """The one line for a write refused because `link` (a part of `path`) is a link."""
    where = "out of" if leads_out(link, within) else "inside"
    what = "nothing was written" if link == path else f"{path.name} was not written"
    return LinkOut(
        f"{link} is a link {where} {within}; {what}. Files of the root are written only "
        "through real folders: remove the link and run the command again."
    )
