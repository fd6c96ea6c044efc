"""One debate's files: read, parse, render and write them atomically under its lock."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from dreamcontext_council.errors import FormatError, NotFoundError, UsageError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import DebatePaths, PersonaPaths, Root
from dreamcontext_council.folder.safe_read import inside, inside_with_info
from dreamcontext_council.folder.storage import (
    append_text,
    atomic_write_json,
    atomic_write_text,
    hold_memo,
    locked,
    racy_window_ns,
    read_text,
)
from dreamcontext_council.rules.conflict_markers import ConflictMarkers, holds_conflict
from dreamcontext_council.rules.debate import Debate, parse_debate, render_debate
from dreamcontext_council.rules.persona import PersonaContext, parse_context, render_context
from dreamcontext_council.rules.report import RoundEntry, parse_report, render_report
from dreamcontext_council.rules.verdicts import Verdicts, parse_verdicts, render_verdicts

T = TypeVar("T")


def today() -> str:
    """The date in the format's YYYY-MM-DD form (UTC, as the Node tool writes it)."""
    return dt.datetime.now(dt.UTC).date().isoformat()


class DebateFiles:
    """Typed access to a debate folder; every write is atomic."""

    def __init__(self, root: Root, debate_id: str, *, must_exist: bool = True) -> None:
        self.root = root
        self.paths: DebatePaths = (
            root.existing_debate(debate_id) if must_exist else root.debate(debate_id)
        )
        # A debate folder (or council/) that is a link out is refused before anything is read.
        inside(root.council, root.path)
        inside(self.paths.folder, root.council)

    @property
    def id(self) -> str:
        return self.paths.id

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the debate's lock for a read-modify-write."""
        from dreamcontext_council.folder.machine_local import keep_out_of_git  # writes only

        keep_out_of_git(self.root)  # the lock file is the first machine-local file a write makes
        with locked(self.paths.folder, within=self.root.path):
            yield

    def read(self, path: Path) -> str:
        """The text of a file of this debate; a link out of the debate folder is refused."""
        return read_text(path, within=self.paths.folder)

    def _parsed(self, path: Path, parse: Callable[[str], T]) -> T:
        return _parsed(path, self.paths.folder, parse)

    def _parsed_or(self, path: Path, parse: Callable[[str], T], missing: Callable[[], T]) -> T:
        """`_parsed`, or `missing()` when there is no such file (one look, not two)."""
        try:
            return self._parsed(path, parse)
        except (FileNotFoundError, NotADirectoryError):
            return missing()

    def relative(self, path: Path) -> str:
        """The path as the messages name it: from the folder holding `_dream_context/`."""
        return self._rel(path)

    def _rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root.path.parent))
        except ValueError:
            return str(path)

    # debate.md
    def debate(self) -> Debate:
        path = self.paths.debate_md
        try:
            debate = self._parsed(path, _debate_refusing_conflicts(self._rel(path)))
        except UnicodeDecodeError as exc:
            raise FormatError(f"{self._rel(path)} is not UTF-8 text; restore it.") from exc
        if debate.id != self.id:
            raise FormatError(
                f"{self._rel(path)} says id '{debate.id}' but its folder is {self.id}; "
                "make them match."
            )
        return debate

    def save_debate(self, debate: Debate, *, over: str | None = None) -> None:
        """Write debate.md; with `over` (the text it held), keeping that text's comments."""
        debate.meta["updated_at"] = today()
        text = (
            render_debate(debate)
            if over is None
            else frontmatter_io.render_over(over, debate.meta, debate.body)
        )
        atomic_write_text(self.paths.debate_md, text, within=self.root.path)
        from dreamcontext_council.actions.index import update_index  # a read needs no index

        update_index(self.root, debate.meta)

    # verdicts.json
    def verdicts(self) -> Verdicts:
        path = self.paths.verdicts
        return self._parsed_or(path, _refusing_conflicts(parse_verdicts, self._rel(path)), Verdicts)

    def save_verdicts(self, verdicts: Verdicts) -> None:
        atomic_write_text(self.paths.verdicts, render_verdicts(verdicts), within=self.root.path)

    # round-log.md
    def log(self) -> str:
        # Read once per hold of the lock, and kept while unchanged.
        return self._parsed_or(self.paths.round_log, str, self._new_log)

    def _new_log(self) -> str:
        from dreamcontext_council.rules import roundlog  # only writing the log needs its rules

        return roundlog.new_log(self.id)

    def append_log(self, heading: str, bullets: list[str], *, once: bool = False) -> None:
        from dreamcontext_council.rules import roundlog

        with self.lock():
            log = self.log()
            if once and roundlog.has_heading(log, heading):
                return
            updated = roundlog.append_entry(log, heading, bullets)
            # The usual case: the file holds exactly `log` (no CR, BOM or trailing blanks
            # to tidy), so the entry is appended; otherwise the whole log is rewritten.
            if updated.startswith(log) and append_text(
                self.paths.round_log,
                updated[len(log) :],
                within=self.root.path,
                size=len(log.encode("utf-8")),
            ):
                return
            atomic_write_text(self.paths.round_log, updated, within=self.root.path)

    # personas
    def persona_paths(self, slug: str) -> PersonaPaths:
        return self.paths.persona(slug)

    def require_persona(self, debate: Debate, slug: str) -> PersonaPaths:
        paths = self.persona_paths(slug)
        if slug not in debate.personas or not paths.context.exists():
            roster = ", ".join(debate.personas) or "none yet"
            raise NotFoundError(
                f"No persona '{slug}' in {self.id} (roster: {roster}); add it with "
                f"`dreamcontext council agent create {self.id} {slug}`."
            )
        return paths

    def context(self, slug: str) -> PersonaContext:
        path = self.persona_paths(slug).context
        return self._parsed(path, _refusing_conflicts(parse_context, self._rel(path)))

    def save_context(self, slug: str, context: PersonaContext) -> None:
        atomic_write_text(
            self.persona_paths(slug).context, render_context(context), within=self.root.path
        )

    def entries(self, slug: str) -> list[RoundEntry]:
        path = self.persona_paths(slug).report
        return self._parsed_or(path, _refusing_conflicts(parse_report, self._rel(path)), list)

    def save_entries(self, slug: str, entries: list[RoundEntry]) -> None:
        atomic_write_text(
            self.persona_paths(slug).report, render_report(slug, entries), within=self.root.path
        )

    def start_report(self, slug: str) -> None:
        """report.md with no entry, for a persona seated now (the Node tool seats one so too):
        either tool can then append its first entry. One already there is kept."""
        path = self.persona_paths(slug).report
        if not path.exists() and not path.is_symlink():
            self.save_entries(slug, [])

    def research_index(self, slug: str) -> list[dict[str, Any]]:
        path = self.persona_paths(slug).research_index
        if not path.exists():
            return []
        try:
            data = json.loads(self.read(path))
        except ValueError as exc:
            raise FormatError(f"{self._rel(path)} is not valid JSON; fix or restore it.") from exc
        entries = data if isinstance(data, list) else []
        for entry in entries:
            if not isinstance(entry, dict) or not all(
                isinstance(entry.get(key), str) for key in ("slug", "topic", "added_at")
            ):
                raise FormatError(
                    f"{self._rel(path)} has an entry without a text slug, topic and added_at; "
                    "fix or restore it."
                )
        return entries

    def save_research_index(self, slug: str, entries: list[dict[str, Any]]) -> None:
        atomic_write_json(self.persona_paths(slug).research_index, entries, within=self.root.path)


def _refusing_conflicts(parse: Callable[[str, str], T], where: str) -> Callable[[str], T]:
    """`parse(text, where)`, or ConflictMarkers when git left a conflict in the text."""

    def checked(text: str) -> T:
        if holds_conflict(text):
            raise ConflictMarkers(where)
        return parse(text, where)

    return checked


def _debate_refusing_conflicts(where: str) -> Callable[[str], Debate]:
    """parse_debate, or ConflictMarkers for markers in the frontmatter, which every command
    needs; markers in the body leave the state readable (the read commands show a banner)."""

    def checked(text: str) -> Debate:
        if not holds_conflict(text):
            return parse_debate(text, where)
        try:
            debate = parse_debate(text, where)
        except FormatError:
            raise ConflictMarkers(where, needed_by_all=True) from None
        if not holds_conflict(debate.body):  # markers the frontmatter's YAML took in
            raise ConflictMarkers(where, needed_by_all=True)
        return debate

    return checked


# path → (file signature, the parse pickled, and the text of a file changed within its racy
# window (storage.racy_window_ns) of its parse, compared as well until the file settles).
# Loading a pickle is several times cheaper than a deepcopy of the parse, and every caller
# still gets its own copy. Outside a hold of the lock a file's first parse is only noted
# (no pickle): a one-shot command reads most files once, and pickle is loaded only for a
# file read again.
_parse_cache: dict[str, tuple[tuple[int, int, int, int], bytes | None, str | None]] = {}
# About ten files a debate: an eval with a hundred debates in flight must not thrash it.
_PARSE_CACHE_LIMIT = 4096


def _parsed(path: Path, within: Path, parse: Callable[[str], T]) -> T:
    """Parse a file, reusing the last parse while the file on disk is the same one.

    The key is (inode, size, mtime, ctime): every atomic write makes a new inode, so a
    file rewritten by any process is parsed again; a file changed within the tick of its
    file system's clock (`racy_window_ns`) is also compared by its text. Under the lock, a
    file already read in this hold is not looked at again, and one written in it is parsed
    from the text written. Callers get a copy they may
    change.
    A link out of `within` is refused even when its target was parsed before.
    """
    key = str(path)
    memo = hold_memo(within)  # read or written before in this hold of the lock: the same file
    written: str | None = None
    if memo is not None and key in memo:
        kept = memo[key]
        if not isinstance(kept, str):
            import pickle

            value: T = pickle.loads(kept)
            return value
        # The text this hold wrote: it is the file, so it is not read back; its parse is
        # kept under the file's signature like any other, for the holds that follow.
        written = kept
    target, seen = inside_with_info(path, within)
    info = seen if seen is not None else os.stat(target)
    signature = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    racy = max(info.st_mtime_ns, info.st_ctime_ns) >= time.time_ns() - racy_window_ns(info)
    hit = None if written is not None else _parse_cache.get(key)
    text = written
    if hit is not None and hit[0] == signature and hit[1] is not None:
        import pickle

        if hit[2] is not None:  # racily new when it was parsed: the text tells
            text = read_text(target, within=within, checked=True)
        if hit[2] is None or text == hit[2]:
            if hit[2] is not None and not racy:
                _parse_cache[key] = (signature, hit[1], None)  # settled since
            if memo is not None:
                memo[key] = hit[1]
            value = pickle.loads(hit[1])
            return value
    if text is None:
        text = read_text(target, within=within, checked=True)
    value = parse(text)
    _parse_cache.pop(key, None)  # parsed again: it goes to the young end
    if len(_parse_cache) >= _PARSE_CACHE_LIMIT:
        for stale in list(_parse_cache)[: _PARSE_CACHE_LIMIT // 4]:  # the oldest parsed
            _parse_cache.pop(stale, None)  # another thread may have dropped it already
    if memo is None and hit is None:
        _parse_cache[key] = (signature, None, None)  # the first parse, noted (see above)
        return value
    import pickle

    pickled = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    _parse_cache[key] = (signature, pickled, text if racy else None)
    if memo is not None:
        memo[key] = pickled
    return value


def read_body(text: str | None, stdin: bytes | None, what: str) -> str:
    """A body from --body or from stdin bytes (strict UTF-8); empty is a UsageError."""
    if text is None and stdin is not None:
        try:
            text = stdin.decode("utf-8-sig")  # editors and shells on Windows may lead with a BOM
        except UnicodeDecodeError:
            raise UsageError(
                f"The {what} on stdin is not UTF-8 text; convert it (for example with iconv) "
                "and pipe it again."
            ) from None
    if text is None or not text.strip():
        raise UsageError(f"The {what} is empty; pass --body TEXT or pipe it on stdin.")
    if "\x00" in text:
        raise UsageError(f"The {what} contains a NUL character; remove it and try again.")
    return text.replace("\r\n", "\n")
