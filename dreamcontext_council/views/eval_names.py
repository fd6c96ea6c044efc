"""The evals under a root, by name: what the eval pages list and the dashboard watches.

Kept apart from the eval page, which reads results through the engine, so the dashboard's
change watcher can list the evals without importing it.
"""

from __future__ import annotations

import re

from dreamcontext_council.folder.paths import Root
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
