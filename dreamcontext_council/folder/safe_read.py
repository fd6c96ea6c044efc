"""Opening a file of a debate: only a regular file that stays inside its folder, and not huge.

A debate folder may come from someone else's repository or be edited by hand, so its
files are untrusted. Every reader goes through `read_bytes` with the folder the file
belongs to: a symlink whose target leaves that folder is refused (its target is never
opened), so is anything that is not a regular file (a FIFO would block the reader), and
so is a file over `MAX_FILE_BYTES`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dreamcontext_council.errors import FormatError

# Far above any debate file (a 200-round report is a few MB); below what would exhaust memory.
MAX_FILE_BYTES = 64 * 1024 * 1024
# O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def inside(path: Path, within: Path) -> Path:
    """`path`, or where its symlinks lead; FormatError when that leaves `within`.

    `within` itself is taken as it is (callers check the debate folder against council/
    once). A path that does not exist passes, so opening it still gives FileNotFoundError.
    """
    return inside_with_info(path, within)[0]


def inside_with_info(path: Path, within: Path) -> tuple[Path, os.stat_result | None]:
    """`inside`, with the file's own `stat` when the check saw it (None: stat it yourself).

    The check looks at every part below `within`; the last look at a file that is not a
    link is that file's stat, so a caller that needs it (the parse cache) does not ask again.
    """
    text, boundary = os.fspath(path), os.fspath(within)
    # The usual case, without resolving the whole path: below `within`, no part is a link.
    if text.startswith(boundary + os.sep):
        parts = text[len(boundary) + 1 :].split(os.sep)
        if ".." not in parts:
            no_links, info = _no_links(boundary, parts)
            if no_links:
                return path, info
    resolved = os.path.realpath(text)
    real_boundary = os.path.realpath(boundary)
    if resolved != real_boundary and not resolved.startswith(real_boundary.rstrip(os.sep) + os.sep):
        raise FormatError(
            f"{path} is a link out of {real_boundary}; it is not read. Replace the link with "
            "the file itself or delete it."
        )
    return Path(resolved), None


def _no_links(boundary: str, parts: list[str]) -> tuple[bool, os.stat_result | None]:
    """Whether no part is a link; with the last part's lstat when every part was seen."""
    current = boundary
    info = None
    for part in parts:
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return True, None
        except OSError:  # a file where a folder should be, a name too long: let open say so
            return True, None
        if stat.S_ISLNK(info.st_mode):
            return False, None
    return True, info


def read_bytes(
    path: Path, *, within: Path, limit: int = MAX_FILE_BYTES, checked: bool = False
) -> bytes:
    """The bytes of the regular file `path`, which must resolve inside `within`.

    FormatError (one line, naming the file) for a link out of `within`, for a FIFO, device
    or folder, and for a file over `limit` bytes. FileNotFoundError when it is missing.
    `checked`: the caller has just passed `path` through `inside` itself.
    """
    resolved = path if checked else inside(path, within)
    # O_NOFOLLOW: the last part was just resolved; a link put there meanwhile is refused.
    fd = os.open(resolved, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FormatError(
                f"{path} is not a regular file (a FIFO, device or folder); it is not read. "
                "Replace it with the file itself or delete it."
            )
        if info.st_size > limit:
            raise FormatError(
                f"{path} is {info.st_size:,} bytes, over the {limit:,}-byte limit for a "
                "debate file; trim it or restore it from git."
            )
        # A regular file: O_NONBLOCK changes nothing for its reads.
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # a file that grows while it is read stops at the limit
            asked = min(limit + 1 - size, max(info.st_size + 1 - size, 1 << 16))
            chunk = os.read(fd, asked)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if len(chunk) < asked and size >= info.st_size:
                break  # a short read of a regular file is its end: no read to see nothing
    finally:
        os.close(fd)
    if size > limit:
        raise FormatError(
            f"{path} grew over the {limit:,}-byte limit for a debate file while it was read; "
            "trim it or restore it from git."
        )
    return b"".join(chunks)
