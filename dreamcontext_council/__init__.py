"""dreamcontext-council: hold a council of personas that debate a hard decision in rounds.

The front door of the library. The CLI and the engine call these same functions, so a
debate driven by `council run` and one driven by hand leave identical folders.

The names load on first use, so `import dreamcontext_council` (which every CLI command
does) stays cheap; `from dreamcontext_council import new_debate` works as usual.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dreamcontext_council.actions.closing import begin_synthesis, complete_debate, promote
    from dreamcontext_council.actions.convene import create_agent, list_agents, new_debate
    from dreamcontext_council.actions.interlude import inject_fact, queue_directive
    from dreamcontext_council.actions.rounds import end_round, extend_rounds, start_round
    from dreamcontext_council.actions.snapshot import DebateSnapshot, load_snapshot
    from dreamcontext_council.actions.submissions import (
        add_research,
        append_report,
        record_verdict,
    )
    from dreamcontext_council.errors import (
        CouncilError,
        FormatError,
        NotFoundError,
        ProviderError,
        StateError,
        UsageError,
    )
    from dreamcontext_council.folder.paths import Root, find_root, require_root
    from dreamcontext_council.rules.roster import PersonaSpec

_HOMES = {
    "dreamcontext_council.actions.closing": ("begin_synthesis", "complete_debate", "promote"),
    "dreamcontext_council.actions.convene": ("create_agent", "list_agents", "new_debate"),
    "dreamcontext_council.actions.interlude": ("inject_fact", "queue_directive"),
    "dreamcontext_council.actions.rounds": ("end_round", "extend_rounds", "start_round"),
    "dreamcontext_council.actions.snapshot": ("DebateSnapshot", "load_snapshot"),
    "dreamcontext_council.actions.submissions": ("add_research", "append_report", "record_verdict"),
    "dreamcontext_council.errors": (
        "CouncilError",
        "FormatError",
        "NotFoundError",
        "ProviderError",
        "StateError",
        "UsageError",
    ),
    "dreamcontext_council.folder.paths": ("Root", "find_root", "require_root"),
    "dreamcontext_council.rules.roster": ("PersonaSpec",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CouncilError",
    "DebateSnapshot",
    "FormatError",
    "NotFoundError",
    "PersonaSpec",
    "ProviderError",
    "Root",
    "StateError",
    "UsageError",
    "add_research",
    "append_report",
    "begin_synthesis",
    "complete_debate",
    "create_agent",
    "end_round",
    "extend_rounds",
    "find_root",
    "inject_fact",
    "list_agents",
    "load_snapshot",
    "new_debate",
    "promote",
    "queue_directive",
    "record_verdict",
    "require_root",
    "start_round",
]
