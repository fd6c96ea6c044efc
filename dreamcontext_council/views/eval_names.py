"""The evals under a root, by name: what the eval pages list and the dashboard watches; and
the one-line form an eval page gives any text it read from an eval folder.

Kept apart from the eval page, which reads results through the engine, so the dashboard's
change watcher can list the evals without importing it.
"""

from __future__ import annotations

import json
import re

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.storage import read_text
from dreamcontext_council.views.contained import is_inside

EVAL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def eval_ids(root: Root) -> list[str]:
    """The evals under the root, by name: plain-named folders inside `evals/`."""
    evals = root.evals
    if not evals.is_dir() or not is_inside(evals, root.path):
        return []
    found = []
    for entry in sorted(evals.iterdir()):
        if EVAL_ID.fullmatch(entry.name) and entry.is_dir() and is_inside(entry, evals):
            found.append(entry.name)
    return found


def eval_debates(root: Root) -> dict[str, str]:
    """The debates an eval made, by debate id: the eval's name for each.

    `council eval` records which debate answers which question in its folder's
    debates.json; a debates.json that is missing, refused or not a JSON object of names is
    passed over (its debates then show in the list like any other)."""
    found: dict[str, str] = {}
    for eval_id in eval_ids(root):
        folder = root.evals / eval_id
        try:
            data = json.loads(read_text(folder / "debates.json", within=folder))
        except (OSError, ValueError, CouncilError):
            continue
        if isinstance(data, dict):
            found.update({str(d): eval_id for d in data.values() if isinstance(d, str)})
    return found


def one_line(text: object, limit: int) -> str:
    """`text` on one line, its control and format characters removed, cut to `limit`."""
    import unicodedata  # a C extension: `list` names evals without it

    spaced = re.sub(r"\s+", " ", str(text))
    kept = "".join(c for c in spaced if unicodedata.category(c) not in ("Cc", "Cf")).strip()
    return kept if len(kept) <= limit else kept[: limit - 1].rstrip() + "…"
