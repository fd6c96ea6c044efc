"""What an MCP client may name: programs only with the user's allowance, files only in the project.

The agent on the other side of the protocol is not the user. A `command:` model it names
(as a model, or in a roster file it points at) is a program chosen by whatever the agent
read, so it runs only when the user allowed that command line for this server (`council
mcp --allow-command`, in the server's configuration) or, for a debate folder, before
with `council run --allow-command`. Files it names (attachments, a roster) must lie inside
the project, so a prompt-injected agent cannot send `~/.ssh` to a model provider.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path

from dreamcontext_council.engine.providers import consent
from dreamcontext_council.errors import ConsentRequired, UsageError
from dreamcontext_council.folder.paths import find_root
from dreamcontext_council.rules.roster import PRESETS, load_roster


def workspace(explicit_root: str | None) -> Path:
    """The project the server works in: the folder that holds `_dream_context/`, else the
    server's working directory."""
    root = find_root(explicit_root)
    return (root.path.parent if root else Path.cwd()).resolve()


def project_file(raw: str, project: Path, what: str) -> str:
    """`raw` as an absolute path, which must resolve inside `project`; UsageError otherwise."""
    path = Path(raw).expanduser()
    resolved = (path if path.is_absolute() else project / path).resolve()
    if resolved != project and project not in resolved.parents:
        raise UsageError(
            f"{what} {raw} is outside the project {project}; through MCP only files inside "
            "the project can be named."
        )
    return str(resolved)


def roster_commands(personas: str) -> set[str]:
    """The command lines a roster file names for its personas (none for a preset or auto)."""
    if personas in PRESETS or personas == "auto":
        return set()
    return consent.named_commands(p.model for p in load_roster(personas))


def require_allowed(models: Iterable[str | None], roster: set[str], allowed: set[str]) -> None:
    """ConsentRequired unless every program named through MCP is one the user allowed."""
    named = consent.named_commands(models) | roster
    refused = sorted(named - allowed)
    if not refused:
        return
    shown = ", ".join(f"`{consent.visible(c)}`" for c in refused)
    flags = " ".join(f"--allow-command {shlex.quote(consent.visible(c))}" for c in refused)
    raise ConsentRequired(
        f"The MCP client asked to run {shown}, which the user has not allowed for this "
        f"server; a model named through MCP is not the user's consent. If you trust it, "
        f"add `{flags}` to the server's command in the MCP configuration (docs/mcp.md)."
    )
