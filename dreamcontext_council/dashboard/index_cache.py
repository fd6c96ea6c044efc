"""The checked index, kept between list requests while index.json and the council folder
stand still.

`load_index` checks every debate folder against index.json (a stat per debate): at 10,000
debates that costs more than the list page's whole budget. The server keeps its answer
while index.json (mtime, size) and the council folder (mtime: a debate added or removed)
are unchanged, and checks the folders again at most every `max_age` seconds, so a hand
edit of one debate.md that no command put in the index still shows within that time.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from dreamcontext_council.actions.index import load_index
from dreamcontext_council.folder.paths import Root

Stamp = tuple[int, int, int]


def _stamp(root: Root) -> Stamp | None:
    try:
        index = root.index.stat()
        council = root.council.stat()
    except OSError:
        return None
    return (index.st_mtime_ns, index.st_size, council.st_mtime_ns)


class IndexCache:
    """`load_index(root)`, reused while its stamp holds and it is younger than `max_age`."""

    def __init__(self, root: Root, *, max_age: float = 2.0) -> None:
        self.root = root
        self.max_age = max_age
        self._lock = threading.Lock()
        self._stamp: Stamp | None = None
        self._checked = 0.0
        self._entries: list[dict[str, Any]] = []

    def entries(self) -> list[dict[str, Any]]:
        """The checked index (callers must not change the list or its entries)."""
        with self._lock:
            stamp = _stamp(self.root)
            fresh = time.monotonic() - self._checked < self.max_age
            if stamp is not None and stamp == self._stamp and fresh:
                return self._entries
            entries = load_index(self.root)
            # load_index may rewrite index.json: stamp what it left.
            self._stamp, self._checked, self._entries = _stamp(self.root), time.monotonic(), entries
            return entries
