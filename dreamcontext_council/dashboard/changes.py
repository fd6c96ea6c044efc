"""Which debate (or eval) a changed path belongs to, and which watchdog events are writes."""

from __future__ import annotations

from pathlib import Path, PurePath

from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
)

from dreamcontext_council.folder.in_flight import IN_FLIGHT_DIR
from dreamcontext_council.folder.paths import EVAL_ANSWERS_FOLDER, EVALS_FOLDER
from dreamcontext_council.folder.storage import LOCK_NAME

LIST = ""  # the key list subscribers see for changes that are not inside one debate
EVAL_PREFIX = "eval:"  # an eval's key: never a debate id, which starts with council_
EVALS_LIST = "evals"  # the evals list's key: an eval folder made or removed
IN_FLIGHT_PREFIX = "in-flight:"  # a debate's in-flight files: the text of calls in progress


def in_flight_topic(debate_id: str) -> str:
    """The change key of a debate's in-flight files, apart from its record: they change a
    few times a second per call while a round runs, and only the streamed text follows."""
    return IN_FLIGHT_PREFIX + debate_id


def in_flight_of(key: str) -> str | None:
    """The debate id an in-flight key names; None for any other key."""
    return key[len(IN_FLIGHT_PREFIX) :] if key.startswith(IN_FLIGHT_PREFIX) else None


def eval_topic(eval_id: str) -> str:
    """The change key of an eval folder's own files (results.json, debates.json, …)."""
    return EVAL_PREFIX + eval_id


def eval_of(topic: str | None) -> str | None:
    """The eval id an eval's key names; None for a debate id or the list."""
    return topic[len(EVAL_PREFIX) :] if topic and topic.startswith(EVAL_PREFIX) else None


def wakes(topic: str | None, keys: list[str]) -> bool:
    """Whether changes to `keys` concern a subscriber of `topic`: the list hears every
    change but the text of calls in progress, the evals list any eval's, a debate or an
    eval its own (a debate its in-flight files too)."""
    if topic is None:
        return any(in_flight_of(key) is None for key in keys)
    if topic == EVALS_LIST:
        return any(key == EVALS_LIST or eval_of(key) is not None for key in keys)
    return topic in keys or in_flight_topic(topic) in keys


_WRITES = {EVENT_TYPE_CREATED, EVENT_TYPE_DELETED, EVENT_TYPE_MODIFIED, EVENT_TYPE_MOVED}


def is_noise(name: str) -> bool:
    """Lock files and the temp files of atomic writes; their rename shows up as a move."""
    return name == LOCK_NAME or (name.startswith(".") and name.endswith(".tmp"))


def change_key(root: Path, path: str) -> str | None:
    """Which debate a changed path belongs to: its id, LIST for the index, an in-flight key
    for a debate's in-flight files, an eval's key for a file of an eval folder, EVALS_LIST
    for an eval folder itself, None to ignore."""
    try:
        parts = PurePath(path).relative_to(root).parts
    except ValueError:
        return None
    if not parts or is_noise(parts[-1]):
        return None
    if parts[0] == "council":
        if len(parts) >= 3 and parts[1].startswith("council_") and parts[2] == IN_FLIGHT_DIR:
            return in_flight_topic(parts[1])
        if len(parts) >= 2 and parts[1].startswith("council_"):
            return parts[1]
        return LIST
    if parts[0] == "knowledge":
        return LIST
    if parts[0] == EVALS_FOLDER:
        if len(parts) == 2:
            return EVALS_LIST  # an eval folder made, removed or renamed
        if len(parts) == 3 or (len(parts) == 4 and parts[2] == EVAL_ANSWERS_FOLDER):
            # A file of the eval itself, or of its answers/: a question's timing is
            # written there when the question is done.
            return eval_topic(parts[1])
    return None  # tmp/.council-live.json and anything else: telemetry, not the record


def paths_of(event: FileSystemEvent) -> list[str]:
    """The paths a write event touched (a move touches both ends)."""
    if event.event_type not in _WRITES and not (
        event.event_type == EVENT_TYPE_CLOSED and not event.is_directory
    ):
        return []  # opened / closed-without-write come from readers, us included
    if event.is_directory and event.event_type == EVENT_TYPE_MODIFIED:
        return []  # the file event inside says more
    found = [event.src_path, getattr(event, "dest_path", "")]
    return [p.decode() if isinstance(p, bytes) else p for p in found if p]
