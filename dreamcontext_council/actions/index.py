"""index.json: newest-first list of debates, kept in step with debate.md (which wins)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dreamcontext_council.errors import FormatError, LinkOut
from dreamcontext_council.folder.machine_local import keep_out_of_git
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import atomic_write_json, locked, read_text
from dreamcontext_council.rules.conflict_markers import conflict_line, holds_conflict, one_side

INDEX_KEYS = (
    "id",
    "topic",
    "status",
    "rounds_planned",
    "current_round",
    "promoted_to_knowledge",
    "created_at",
    "updated_at",
)


def index_entry(meta: dict[str, Any]) -> dict[str, Any]:
    """The index entry for a debate's frontmatter."""
    return {key: meta.get(key) for key in INDEX_KEYS}


def _read(root: Root) -> list[dict[str, Any]]:
    try:
        data = json.loads(read_text(root.index, within=root.council))
    except (OSError, ValueError, FormatError):
        return []  # a missing, corrupt or linked-out index is rebuilt from the folders
    return (
        [e for e in data if isinstance(e, dict) and isinstance(e.get("id"), str)]
        if isinstance(data, list)
        else []
    )


def update_index(root: Root, meta: dict[str, Any]) -> None:
    """Put one debate's entry in the index (new debates go first).

    The rest of the index is checked against the folders first, as a read does: an index
    a merge left with conflict markers, or without the debates another branch added, is
    rebuilt whole by the next write instead of being replaced by this one entry.
    """
    if str(root.council) in _deferred:
        return
    keep_out_of_git(root)
    with locked(root.council, within=root.path):
        conflicted: dict[str, dict[str, Any]] = {}
        entries, current = _checked_index(root, conflicted=conflicted)
        entry = index_entry(meta)
        for i, existing in enumerate(entries):
            if existing.get("id") == entry["id"]:
                if existing == entry and current:
                    # Same entry: only mark the index as newer than the debate.md just written.
                    os.utime(root.index)
                    _read_again(root, conflicted)
                    return
                entries[i] = entry
                break
        else:
            entries.insert(0, entry)
        atomic_write_json(root.index, entries, within=root.path)
        _read_again(root, conflicted)


# council/ folders whose index this process brings up to date once, at the end of a batch.
_deferred: dict[str, int] = {}


@contextmanager
def deferred_index(root: Root) -> Iterator[None]:
    """While one process writes many debates (an eval), index.json catches up once, at the end.

    Each `update_index` scans every debate folder and rewrites the whole index, so a debate
    saved N times among D debates costs N x D; here it costs nothing until the block ends.
    Readers stay right meanwhile: `load_index` reads again every debate.md newer than
    index.json and lists the folders it lacks, as after a merge.
    """
    key = str(root.council)
    _deferred[key] = _deferred.get(key, 0) + 1
    try:
        yield
    finally:
        _deferred[key] -= 1
        if not _deferred[key]:
            del _deferred[key]
            load_index(root)  # rewrites index.json when it is behind the folders


def load_index(root: Root) -> list[dict[str, Any]]:
    """The index, checked against the folders: missing, stale or extra entries are rebuilt.

    Only debates whose debate.md changed after index.json was written are re-read, so a
    large root costs a directory scan and a stat per debate, and no lock while the index
    is current.

    A debate whose debate.md frontmatter holds git conflict markers is listed all the same,
    with a `conflicted` key (the line naming the file): its fields are read from our side
    of the conflict, else theirs, else its last entry. index.json keeps what it held for it.
    """
    if not root.council.is_dir():
        return []
    conflicted: dict[str, dict[str, Any]] = {}
    entries, current = _checked_index(root, conflicted=conflicted)
    if current:
        return _listed(entries, conflicted)
    try:
        keep_out_of_git(root)  # a rebuild makes the lock file, on a read too
        # Check again and rewrite under the lock: a debate.md saved between a read and a
        # write would otherwise leave an entry older than debate.md that looks current.
        with locked(root.council, within=root.path):
            again: dict[str, dict[str, Any]] = {}
            entries, current = _checked_index(root, conflicted=again)
            conflicted = again
            if not current:
                atomic_write_json(root.index, entries, within=root.path)
                _read_again(root, conflicted)
    except (OSError, LinkOut):
        pass  # a read-only root, or one with a link in the way, still lists
    return _listed(entries, conflicted)


def _listed(
    entries: list[dict[str, Any]], conflicted: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The entries with each conflicted debate in its place (or first, newest first, when
    the index had none for it), marked."""
    if not conflicted:
        return entries
    placed = [conflicted.get(e["id"], e) for e in entries]
    listed = {e["id"] for e in entries}
    new = [e for i, e in conflicted.items() if i not in listed]
    new.sort(key=lambda e: (str(e.get("created_at") or ""), e["id"]), reverse=True)
    return [*new, *placed]


def _read_again(root: Root, conflicted: dict[str, dict[str, Any]]) -> None:
    """Keep index.json older than every conflicted debate.md just written over, so the next
    read looks at them again (a debate.md older than the index is taken as indexed)."""
    if not conflicted:
        return
    try:
        oldest = min(os.stat(root.council / i / "debate.md").st_mtime_ns for i in conflicted)
        if os.stat(root.index).st_mtime_ns >= oldest:
            os.utime(root.index, ns=(oldest - 1, oldest - 1))
    except OSError:
        return


def index_problem(root: Root) -> str | None:
    """What is wrong with index.json against every debate.md, read whatever the file times
    say (a hand-resolved merge can leave an index newer than the debates yet stale); None
    when it lists the folders exactly."""
    if not root.council.is_dir():
        return None
    try:
        text = read_text(root.index, within=root.council)
    except FileNotFoundError:
        return "index.json is missing" if _has_debates(root) else None
    except (OSError, FormatError):
        return "index.json cannot be read"
    if has_conflict_markers(text):
        return "index.json holds merge conflict markers"
    try:
        data = json.loads(text)
    except ValueError:
        return "index.json is not valid JSON"
    entries, current = _checked_index(root, trust_mtimes=False)
    if not current or data != entries:
        return "index.json does not match the debate folders"
    return None


def rebuild_index(root: Root) -> None:
    """Write index.json from every debate.md, whatever the file times say."""
    with locked(root.council, within=root.path):
        entries, _ = _checked_index(root, trust_mtimes=False)
        atomic_write_json(root.index, entries, within=root.path)


_CONFLICT_MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)


def has_conflict_markers(text: str) -> bool:
    """Whether the text holds the `<<<<<<<`, `=======`, `>>>>>>>` lines a conflicted merge leaves."""
    return _CONFLICT_MARKER.search(text) is not None


def _has_debates(root: Root) -> bool:
    with os.scandir(root.council) as scan:
        return any(item.name.startswith("council_") and item.is_dir() for item in scan)


def _checked_index(
    root: Root,
    *,
    trust_mtimes: bool = True,
    conflicted: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    """The index as it should be, and whether index.json already says exactly that.

    With `trust_mtimes`, only debates whose debate.md is newer than index.json are read.
    `conflicted` receives, by id, the listing of each debate read whose frontmatter holds
    git conflict markers (see `_conflicted_entry`)."""
    entries = _read(root)
    try:
        index_mtime = os.stat(root.index).st_mtime_ns if trust_mtimes else -1
    except OSError:
        index_mtime = -1
    by_id = {e["id"]: e for e in entries}
    folders: dict[str, str] = {}  # plain strings: a Path per debate costs ~10 µs x 10,000
    with os.scandir(root.council) as scan:
        for item in scan:
            if item.name.startswith("council_") and item.is_dir():
                folders[item.name] = os.path.join(item.path, "debate.md")
    listed: set[str] = set()  # debates the index should hold
    fresh: dict[str, dict[str, Any]] = {}
    changed = len(by_id) != len(entries)  # duplicate entries
    for debate_id, debate_md in folders.items():
        try:
            mtime = os.stat(debate_md).st_mtime_ns
        except OSError:
            continue  # a folder without debate.md is not a debate
        # Strictly older: saved in an earlier tick of the file system's clock than index.json.
        # The same stamp may be a save in the tick the index was written in: read it again.
        if debate_id in by_id and mtime < index_mtime:
            listed.add(debate_id)
            continue
        # Imported at the first debate.md to read: an index that is up to date needs no parse.
        from dreamcontext_council.rules.debate import parse_debate

        text = None
        try:
            text = read_text(Path(debate_md), within=root.council)
            debate = parse_debate(text, debate_md)
        except (FormatError, OSError, UnicodeDecodeError):
            # A broken debate.md is reported by the commands that open it; its last good
            # entry stays, and without one it is not listed (and not rewritten every time).
            if debate_id in by_id:
                listed.add(debate_id)
            if text is not None and conflicted is not None and holds_conflict(text):
                conflicted[debate_id] = _conflicted_entry(root, debate_id, text, by_id)
            continue
        listed.add(debate_id)
        fresh[debate_id] = index_entry(debate.meta)
        changed = changed or by_id.get(debate_id) != fresh[debate_id]
    if not changed and set(by_id) == listed:
        return entries, True
    seen: set[str] = set()
    kept = []
    for e in entries:
        if e["id"] in listed and e["id"] not in seen:
            seen.add(e["id"])
            kept.append(fresh.get(e["id"], e))
    added = [fresh[i] for i in fresh if i not in by_id]
    added.sort(key=lambda e: _made_at(root, folders[e["id"]], e), reverse=True)
    return [*added, *kept], False


def _conflicted_entry(
    root: Root, debate_id: str, text: str, by_id: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """How a debate whose debate.md holds conflict markers is listed: our side's fields,
    else theirs, else its last index entry, else its id alone; `conflicted` names the file."""
    from dreamcontext_council.rules.debate import parse_debate

    entry: dict[str, Any] | None = None
    for ours in (True, False):
        try:
            meta = parse_debate(one_side(text, ours=ours), "debate.md").meta
        except FormatError:
            continue
        if meta.get("id") == debate_id:
            entry = index_entry(meta)
            break
    if entry is None:
        entry = dict(by_id.get(debate_id) or index_entry({"id": debate_id}))
    where = f"{root.path.name}/council/{debate_id}/debate.md"
    return {**entry, "conflicted": conflict_line(where)}


def _made_at(root: Root, debate_md: str, entry: dict[str, Any]) -> tuple[str, str, str]:
    """When a debate the index does not list yet was made, to list it among the others
    newest first as `new` would have: its `created_at` day, the earliest time of that day
    its round-log.md or usage.jsonl records (debate.md keeps only the day), then its id."""
    from dreamcontext_council.rules.roundlog import logged_time

    day = str(entry.get("created_at") or "")
    folder = Path(debate_md).parent
    times = []
    for name in ("round-log.md", "usage.jsonl"):
        try:
            lines = read_text(folder / name, within=root.council).split("\n")
        except (OSError, FormatError):
            continue
        for line in lines:
            when = logged_time(line) if line.startswith("## ") else _usage_time(line)
            if when[0] == day and when[1]:
                # A time to the second (a report submission's) stands for all of that
                # second: it sorts after the times to the millisecond within it.
                times.append(when[1] if "." in when[1] else f"{when[1]}~")
                break  # both files are written in time order: the first is the earliest
    return day, min(times, default=""), entry["id"]


def _usage_time(line: str) -> tuple[str, str]:
    try:
        record = json.loads(line)
    except ValueError:
        return "", ""
    at = record.get("at") if isinstance(record, dict) else None
    day, _, time = at.partition("T") if isinstance(at, str) else ("", "", "")
    return day, time.removesuffix("Z")
