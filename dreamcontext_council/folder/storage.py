"""Atomic writes and the per-debate lock: the only way files change on disk.

Every write names the root it writes in (`within`): no folder between the root and the
file, nor the file itself, may be a link (see `safe_write`). `within=None` is only for a
file the user named or the user's own configuration, said so where it is passed.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from dreamcontext_council.errors import CouncilError, EncodingError
from dreamcontext_council.folder.safe_read import read_bytes
from dreamcontext_council.folder.safe_write import folders_ready, leads_out, link_out

LOCK_NAME = ".council.lock"
LOCK_TIMEOUT_S = 60.0
LOCK_POLL_S = 0.005

# How long a file's times may not tell two versions apart: file systems stamp times at a
# coarse tick and hand a freed inode number to the next new file, so a rewrite within one
# tick can look unchanged. A reader that trusts times checks such a file by its content
# (git's "racily clean" files). Whole-second stamps (FAT's 2 s, HFS+, ext4 with small
# inodes) get RACY_NS; finer stamps (ext4, XFS, Btrfs, APFS, NTFS) move at least every
# kernel tick or Windows' 15.6 ms, well inside FINE_RACY_NS.
RACY_NS = 2_000_000_000
FINE_RACY_NS = 50_000_000


def racy_window_ns(info: os.stat_result) -> int:
    """How long after its last change the file `info` describes may be mistaken for an
    older version of itself with the same size and inode: RACY_NS when its file system
    stamps whole seconds, FINE_RACY_NS when it stamps finer."""
    return FINE_RACY_NS if info.st_mtime_ns % 1_000_000_000 else RACY_NS


_held = threading.local()
# O_BINARY: bytes as given on Windows too (no LF → CRLF).
_TEMP_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def atomic_write_text(path: Path, text: str, *, within: Path | None, durable: bool = True) -> None:
    """Write `text` (UTF-8, LF) so a crash leaves the old file or the new one, never half.

    `within`: the root the file belongs to; LinkOut (nothing written) when a folder on the
    way or the file itself is a link. `durable=False` skips the fsync: still atomic for a
    killed process, but a power cut may lose the new content (right for telemetry such as
    the live file).
    """
    _forget(path)
    data = text.encode("utf-8")  # written as given: LF stays LF on every platform
    if within is not None:
        folders_ready(path, within)  # the temp and the rename stay in this checked folder
        fd, tmp = _temp_beside(path, within)
    else:
        try:
            fd, tmp = _temp_beside(path, None)
        except FileNotFoundError:  # its folder is new: made here, once
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = _temp_beside(path, None)
    try:
        try:
            with _naming(path):
                _write_all(fd, data)
                if durable:
                    os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with _suppress_missing():
            os.unlink(tmp)
        raise
    _remember(path, text)


def _write_all(fd: int, data: bytes) -> None:
    written = 0
    while written < len(data):  # a nearly full disk takes part of a write
        written += os.write(fd, data[written:])


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """An OS error while writing names the file (os.write's and fsync's name none)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def _temp_beside(path: Path, within: Path | None = None) -> tuple[int, str]:
    # Not mkstemp: its 0600 would stick to the renamed file. The kernel applies the umask to
    # 0666 as for any file the user makes; an existing file keeps the mode it has.
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            # The rename replaces the link itself, never what it leads to; a link out of
            # the root is refused all the same, so the user learns of it.
            if within is not None and leads_out(path, within):
                raise link_out(path, path, within)
            info = path.stat()  # the mode of what it leads to
        mode: int | None = stat.S_IMODE(info.st_mode)
    except FileNotFoundError:
        mode = None
    while True:
        # The writer's pid tells a leftover of a killed writer from a write in progress.
        tmp = str(path.parent / f".{path.name}.{os.getpid()}-{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, _TEMP_FLAGS, 0o666)
        except FileExistsError:
            continue
        if mode is not None:
            os.fchmod(fd, mode)
        return fd, tmp


def atomic_write_json(path: Path, data: Any, *, within: Path | None, durable: bool = True) -> None:
    """Write JSON with stable layout (2-space indent, final newline); `within` as for
    `atomic_write_text`."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    atomic_write_text(path, text, within=within, durable=durable)


_appending = threading.Lock()


_APPEND_FLAGS = (
    os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
)


def append_line(path: Path, line: str, *, within: Path, durable: bool = True) -> None:
    """Append one line (for append-only logs such as usage.jsonl) to a file of the root
    `within`; LinkOut (nothing written) when the file or a folder on the way is a link.

    A failed append (a full disk) leaves no torn line and no new empty file behind.
    `durable=False` skips the fsync: a kill cannot lose the line, a power cut may.
    """
    _forget(path)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    folders_ready(path, within)
    with _appending:
        existed = True
        try:
            try:
                fd = os.open(path, _APPEND_FLAGS)
            except FileNotFoundError:
                existed = False
                fd = os.open(path, _APPEND_FLAGS | os.O_CREAT, 0o644)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise link_out(path, path, within) from None
        try:
            try:
                _append_whole(fd, path, data, os.fstat(fd).st_size, durable=durable)
            except BaseException:
                if not existed:
                    with suppress(OSError):
                        os.unlink(path)
                raise
        finally:
            os.close(fd)


def _append_whole(fd: int, path: Path, data: bytes, size: int, *, durable: bool = True) -> None:
    """Write all of `data` at the end of `fd` and fsync it (unless not `durable`); on any
    failure cut the file back to `size` bytes, so it is as it was."""
    try:
        with _naming(path):
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
    except BaseException:
        with suppress(OSError):
            os.ftruncate(fd, size)
        raise


def append_text(path: Path, text: str, *, within: Path, size: int) -> bool:
    """Append `text` to `path` if the file is exactly `size` bytes long; False (nothing
    written) if it is not, or is missing. `within`: the root, as for `atomic_write_text`.

    For a file its writer just read whole under the lock (the round log): the new bytes go
    at the end with one fsync, not into a new copy of the file. A failed write (a full
    disk) is cut back off, so the file is as it was.
    """
    _forget(path)
    data = text.encode("utf-8")
    folders_ready(path, within)
    flags = os.O_WRONLY | os.O_APPEND
    for name in ("O_CLOEXEC", "O_NOFOLLOW", "O_NONBLOCK"):  # a link or a FIFO is not appended to
        flags |= getattr(os, name, 0)
    try:
        fd = os.open(path, flags)
    except OSError:  # missing, a link, a FIFO without a reader: the caller rewrites the file
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != size:
            return False
        _append_whole(fd, path, data, size)
    finally:
        os.close(fd)
    return True


def read_text(path: Path, *, within: Path, checked: bool = False) -> str:
    """Read a UTF-8 file of the folder `within` (see `safe_read`), with newlines as LF.

    CRLF and a lone CR become LF, and a leading BOM (Windows editors write one;
    gray-matter ignores it) is dropped. EncodingError names a file that is not UTF-8;
    FormatError one that is a link out of `within`, not a regular file, or too large.
    """
    data = read_bytes(path, within=within, checked=checked)
    try:
        # What the utf-8-sig codec does, without loading its module on every read command.
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EncodingError(
            f"{path} is not UTF-8 text (byte {exc.start}); fix it or restore it from git."
        ) from None
    return _lf(text)


def _lf(text: str) -> str:
    """Text as `read_text` gives it: CRLF and a lone CR as LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


# folder as given → the folder resolved: one lstat per part of the path, paid once per
# folder and process instead of at every lock (a recorded answer takes the lock six times).
_lock_keys: dict[str, str] = {}
_LOCK_KEYS_KEPT = 4096


def _lock_key(folder: Path) -> str:
    """What tells one folder's lock from another's for re-entrancy: its resolved path."""
    given = str(folder)
    key = _lock_keys.get(given)
    if key is None:
        key = str(folder.resolve())
        if not folder.is_absolute():
            return key  # relative to a working directory that may change
        if len(_lock_keys) >= _LOCK_KEYS_KEPT:
            _lock_keys.clear()
        _lock_keys[given] = key
    return key


@contextmanager
def locked(folder: Path, *, within: Path | None) -> Iterator[None]:
    """Hold the folder's lock: an OS lock the kernel drops when its holder dies.

    Re-entrant within one thread, so an operation may call another that locks too.
    `within`: the root the folder is in; its lock file is made as any write of the root.
    """
    held: dict[str, int] = _held.__dict__.setdefault("counts", {})
    key = _lock_key(folder)
    if held.get(key):
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    memos: dict[str, dict[str, Any]] = _held.__dict__.setdefault("memos", {})
    if within is not None:
        folders_ready(folder / LOCK_NAME, within)
    with _os_lock(folder / LOCK_NAME, folder.name):
        held[key] = 1
        memos[key] = {}
        try:
            yield
        finally:
            held[key] = 0
            del memos[key]


def hold_memo(folder: Path) -> dict[str, Any] | None:
    """What this thread keeps for the length of its hold of `folder`'s lock, by file path;
    None when it does not hold that lock.

    While the lock is held no cooperating writer changes the folder, so a file read twice
    in one hold is the same file. A whole-file write through this module keeps the text it
    wrote there (a `str`, see `_remember`); an append forgets the file.
    """
    memos = _held.__dict__.get("memos")
    return memos.get(_lock_key(folder)) if memos else None


def _remember(path: Path, text: str) -> None:
    """Keep the text just written to `path` for the rest of this hold of its folder's lock:
    read again in the same hold, it is the same file (see `hold_memo`), so it is parsed
    from this text instead of being read back. Stored as `str`, parsed on first use."""
    memos = _held.__dict__.get("memos")
    if memos:
        name = str(path)
        kept = _lf(text.removeprefix("\ufeff"))  # as `read_text` would give it back
        for (
            memo
        ) in memos.values():  # as `_forget`: a path outside a memo's folder is never asked of it
            memo[name] = kept


def _forget(path: Path) -> None:
    memos = _held.__dict__.get("memos")
    if memos:
        name = str(path)
        for memo in memos.values():
            memo.pop(name, None)


def _lock_timeout(folder_name: str) -> CouncilError:
    return CouncilError(
        f"{folder_name} stayed locked for {LOCK_TIMEOUT_S:.0f}s by another command; "
        "wait for it to finish and run this command again."
    )


@contextmanager
def _os_lock(path: Path, folder_name: str) -> Iterator[None]:
    """`flock` on the lock file, polled until LOCK_TIMEOUT_S (the `filelock` package's
    lock, which other platforms use, is the same kernel lock with more bookkeeping)."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock
        from filelock import FileLock, Timeout

        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path), timeout=LOCK_TIMEOUT_S, poll_interval=LOCK_POLL_S)
        try:
            with lock:
                yield
        except Timeout as exc:
            raise _lock_timeout(folder_name) from exc
        return
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:  # its folder is new: made here, once
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise CouncilError(
            f"{path} is a link, not a lock file; delete it and run the command again."
        ) from None
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                # Writers hold the lock for milliseconds; a short poll keeps waiters from idling.
                if time.monotonic() >= deadline:
                    raise _lock_timeout(folder_name) from None
                time.sleep(LOCK_POLL_S)
        yield
    finally:
        os.close(fd)  # closing the only descriptor of the file releases its lock


@contextmanager
def _suppress_missing() -> Iterator[None]:
    with suppress(FileNotFoundError):
        yield
