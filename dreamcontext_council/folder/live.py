"""tmp/.council-live.json: telemetry for a live chamber view; writing it never fails a command."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from pathlib import Path
from typing import Any

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.safe_write import no_link_on_the_way
from dreamcontext_council.folder.storage import atomic_write_json, read_text


def now_iso() -> str:
    """UTC time in the Node tool's form, 2026-11-30T03:44:00.700Z."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_second() -> str:
    """UTC time to the second, 2026-11-30T03:44:00Z: when a report was submitted."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_live(path: Path, state: dict[str, Any], *, within: Path) -> None:
    """Write the live file of the root `within`, keeping `started` from the same debate's
    previous state."""
    try:
        previous: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError, CouncilError):
            previous = json.loads(read_text(path, within=path.parent))
        same = previous.get("debate") == state.get("debate")
        now = now_iso()
        data = {
            "debate": state["debate"],
            "topic": state["topic"],
            "session": state.get("session", previous.get("session", "") if same else ""),
            "started": previous.get("started", now) if same else now,
            "updated": now,
            **{k: v for k, v in state.items() if k not in ("debate", "topic", "session")},
        }
        atomic_write_json(path, data, within=within, durable=False)
    except Exception as exc:  # telemetry must never break the command that wrote it
        import logging  # loaded only on this rare path

        logging.getLogger(__name__).debug("could not write %s: %s", path, exc)


def clear_live(path: Path, *, within: Path) -> bool:
    """Delete the live file of the root `within`; True when there was one. LinkOut when
    `tmp/` is a link: a file of that name outside the root is not deleted."""
    no_link_on_the_way(path, within)
    try:
        path.unlink()
        return True
    except (FileNotFoundError, NotADirectoryError):  # tmp/ may be missing or a file
        return False
