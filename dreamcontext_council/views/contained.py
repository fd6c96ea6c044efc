"""Paths read for a view must stay inside the root, symlinks and all."""

from __future__ import annotations

from pathlib import Path


def is_inside(path: Path, boundary: Path) -> bool:
    """True when `path` resolves (symlinks followed) to somewhere under `boundary`."""
    try:
        return path.resolve().is_relative_to(boundary.resolve())
    except (OSError, RuntimeError):
        return False
