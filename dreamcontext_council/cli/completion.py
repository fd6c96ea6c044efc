"""Shell completion of debate ids and persona slugs (click's `shell_complete`).

Read-only and quick: a completion lists the folder names under the root (the index, when it
reads, adds each debate's topic as help) and never fails: anything it cannot read gives no
candidates instead of an error in the middle of the user's command line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from dreamcontext_council.folder.paths import Root, find_root
from dreamcontext_council.folder.storage import read_text

MAX_CANDIDATES = 200
PERSONA_FILE = "context-and-persona.md"


def _root(ctx: click.Context) -> Root | None:
    root = find_root(ctx.meta.get("council.root"))
    return root if root is not None and root.path.is_dir() else None


def _topics(root: Root) -> dict[str, str]:
    """Each indexed debate's topic, or nothing when index.json cannot be read."""
    try:
        data = json.loads(read_text(root.index, within=root.council))
        return {
            str(e["id"]): " ".join(str(e.get("topic") or "").split())[:80]
            for e in (data if isinstance(data, list) else [])
            if isinstance(e, dict) and "id" in e
        }
    except Exception:
        return {}


def _folders(path: Path, prefix: str) -> list[str]:
    try:
        with os.scandir(path) as found:
            names = [
                e.name
                for e in found
                if e.name.startswith(prefix)
                and not e.name.startswith(".")
                and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []
    return sorted(names)[:MAX_CANDIDATES]


def complete_debate_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """The debates under the root whose id starts with what was typed, newest first;
    `@last` (the newest debate) once an `@` is typed."""
    from click.shell_completion import CompletionItem  # only when completing (it loads shlex)

    try:
        root = _root(ctx)
        if root is None:
            return []
        if incomplete.startswith("@"):
            from dreamcontext_council.actions.newest import LAST

            wanted = LAST.startswith(incomplete)
            return [CompletionItem(LAST, help="the newest debate")] if wanted else []
        names = _folders(root.council, incomplete)
        topics = _topics(root)
        order = {debate_id: n for n, debate_id in enumerate(topics)}
        names.sort(key=lambda name: order.get(name, len(order)))
        return [CompletionItem(name, help=topics.get(name) or None) for name in names]
    except Exception:
        return []


def complete_persona(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """The personas of the debate named earlier on the line (its `<slug>/` folders)."""
    from click.shell_completion import CompletionItem

    try:
        root = _root(ctx)
        debate_id = ctx.params.get("debate_id")
        if root is None or not isinstance(debate_id, str) or "/" in debate_id:
            return []
        folder = root.council / debate_id
        if folder.name != debate_id or not folder.is_dir():
            return []
        return [
            CompletionItem(slug)
            for slug in _folders(folder, incomplete)
            if (folder / slug / PERSONA_FILE).is_file()
        ]
    except Exception:
        return []
