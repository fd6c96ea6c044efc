"""Reading a debate for MCP clients: its files as `council://` resources, its final report."""

from __future__ import annotations

import os
from pathlib import Path

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.errors import CouncilError, NotFoundError
from dreamcontext_council.folder.paths import Root

SCHEME = "council"
# resources/list: the main files of the newest debates, so a client that browses resources
# has something to show; every other file is read through the template.
RECENT_DEBATES = 20
MAIN_FILES = ("debate.md", "final-report.md")
# Enough for any debate (a persona has a handful of files); a folder stuffed with more is cut.
MAX_LISTED_FILES = 1000


def resource_uri(debate_id: str, relative: str = "") -> str:
    """`council://<id>/<path>`: a file of a debate as an MCP resource."""
    return f"{SCHEME}://{debate_id}/{relative}"


def read_debate_file(root: Root, debate_id: str, relative: str) -> str:
    """The text of one file of a debate; anything that leaves the debate folder is refused.

    The id is validated, the folder must exist, and the file is read through the safe-read
    layer with the debate folder as the boundary: `..`, an absolute path and a link out
    all give FormatError; a FIFO, a folder or a huge file too.
    """
    files = DebateFiles(root, debate_id)
    if not relative or Path(relative).is_absolute():
        raise NotFoundError(
            f"council://{debate_id}/{relative} names no file of the debate; read "
            f"council://{debate_id}/debate.md or call council_status for the list."
        )
    try:
        return files.read(files.paths.folder / relative)
    except FileNotFoundError:
        raise NotFoundError(
            f"{debate_id} has no file {relative}; call council_status for the list of its files."
        ) from None


def debate_file_uris(root: Root, debate_id: str) -> list[str]:
    """Every regular file of the debate as a resource URI, sorted (links are not followed)."""
    files = DebateFiles(root, debate_id)
    folder = files.paths.folder
    found: list[str] = []
    for current, folders, names in os.walk(folder, followlinks=False):
        folders.sort()
        for name in sorted(names):
            path = Path(current) / name
            if path.is_symlink() or not path.is_file() or name.startswith("."):
                continue
            found.append(resource_uri(debate_id, path.relative_to(folder).as_posix()))
            if len(found) >= MAX_LISTED_FILES:
                return found
    return found


def recent_debate_files(root: Root, limit: int = RECENT_DEBATES) -> list[tuple[str, str, str]]:
    """(uri, name, description) of the main files of the `limit` newest debates, newest
    first, from the index: debate.md, and final-report.md once it is written."""
    from dreamcontext_council.actions.index import load_index

    found = []
    for entry in load_index(root)[:limit]:
        debate_id = str(entry.get("id") or "")
        topic = " ".join(str(entry.get("topic") or "").split())[:200]
        try:
            folder = DebateFiles(root, debate_id).paths.folder
        except CouncilError:
            continue
        for name in MAIN_FILES:
            if (folder / name).is_file():
                found.append((resource_uri(debate_id, name), f"{debate_id}/{name}", topic))
    return found


def mime_type(uri: str) -> str:
    return "application/json" if uri.endswith(".json") else "text/markdown"


def missing_report(debate_id: str) -> NotFoundError:
    """The error for a debate without final-report.md."""
    return NotFoundError(
        f"{debate_id} has no final report yet; call council_wait until the run completes, "
        "or council_status to see where it stands."
    )
