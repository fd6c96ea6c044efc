"""A run's research tools: the tools file, the consent it needs, and one toolbox per persona turn.

`run --tools FILE` names the MCP servers personas may call (rules/tool_config.py). The
file's path is recorded in the debate's `run:` settings, so a resume uses it again;
but a tools file starts programs, so a debate folder that names one is treated like a
`command:` model found in a folder (engine/providers/consent.py): its servers start only when
the user named the file on this command line, or allowed that very file (its
fingerprint) for this folder before. Every persona model must be able to call tools
(Anthropic or OpenAI); the check runs before anything is written.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.progress import Progress
from dreamcontext_council.engine.providers import consent
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet
from dreamcontext_council.errors import ConsentRequired, NotFoundError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.tool_config import ToolsConfig, load_tools_config

if TYPE_CHECKING:  # the MCP client is loaded only when a run starts its tool servers
    from dreamcontext_council.engine.research.servers import ToolServers
    from dreamcontext_council.engine.research.toolbox import PersonaToolBox, ToolRecord

TOOLS_ALLOWANCE = "mcp-tools:"
RESEARCHING = "researching"


@dataclass(frozen=True)
class ResearchPlan:
    """The tools file a run uses and whether the user named it on this command line."""

    config: ToolsConfig
    path: Path
    named: bool


def plan(
    given: str | None, recorded: str | None, debate_id: str | None = None
) -> ResearchPlan | None:
    """The tools file to use: the one given now, else the one the debate recorded; None: no tools."""
    chosen = given or recorded
    if not chosen:
        return None
    path = Path(chosen).expanduser().resolve()
    if given is None and not path.exists():
        raise NotFoundError(
            f"{debate_id} ran with the tools file {consent.visible(str(path))}, which is not "
            "here; pass --tools FILE to name one, or --no-tools to go on without research tools."
        )
    return ResearchPlan(load_tools_config(path), path, named=given is not None)


def allowance(config: ToolsConfig) -> str:
    """The trust file's entry that allows this tools file for a folder."""
    return TOOLS_ALLOWANCE + config.fingerprint()


def require_consent(
    files: DebateFiles | None,
    research: ResearchPlan,
    env: Mapping[str, str],
    trust: consent.FolderTrust | None = None,
) -> None:
    """Raise `ConsentRequired` unless the user named the tools file now or allowed it before
    (`trust`: the folder's allowances, when the caller holds them already)."""
    if research.named or files is None:
        return
    if allowance(research.config) in (trust or consent.FolderTrust(files, env)).commands:
        return
    servers = "; ".join(f"`{consent.visible(line)}`" for line in research.config.command_lines())
    raise ConsentRequired(
        f"{files.id} asks to start MCP tool servers you have not allowed for this folder "
        f"(from {consent.visible(str(research.path))}): {servers}; if you trust them, run "
        f"`dreamcontext council run {files.id} --tools {shlex.quote(str(research.path))}`."
    )


def allow(files: DebateFiles, research: ResearchPlan, env: Mapping[str, str]) -> None:
    """Remember that the user named this tools file for this debate folder."""
    if research.named:
        consent.allow_commands(files, [allowance(research.config)], env)


def refuse_tool_less(providers: ProviderSet, persona_models: Iterable[str]) -> None:
    """Raise the provider's one-line error for the first persona model that cannot call tools."""
    for model in persona_models:
        providers.refuse_tools(parse_model(model))


async def start_session(
    stack: AsyncExitStack,
    research: ResearchPlan,
    root: Root,
    debate_id: str,
    progress: Progress,
    *,
    max_calls: int,
    timeout_s: float,
    env: Mapping[str, str],
) -> ResearchSession:
    """Start the tool servers on `stack` (they stop when it closes); the session for the rounds.

    A server that cannot start stops the run here, before any persona is asked."""
    from dreamcontext_council.engine.research.servers import ToolServers

    servers = await stack.enter_async_context(ToolServers(research.config, environ=env))
    return ResearchSession(
        servers, root, debate_id, max_calls=max_calls, timeout_s=timeout_s, progress=progress
    )


class ResearchSession:
    """The started tool servers of one run, handing each persona turn its own toolbox."""

    def __init__(
        self,
        servers: ToolServers,
        root: Root,
        debate_id: str,
        *,
        max_calls: int,
        timeout_s: float,
        progress: Progress,
    ) -> None:
        self.servers = servers
        self.root = root
        self.debate_id = debate_id
        self.max_calls = max_calls
        self.timeout_s = timeout_s
        self.progress = progress

    def toolbox(self, persona: str, round_number: int) -> PersonaToolBox | None:
        """The tools `persona` may call in this round; None when no call is allowed."""
        if self.max_calls <= 0 or not self.servers.specs:
            return None
        from dreamcontext_council.engine.research.toolbox import PersonaToolBox

        return PersonaToolBox(
            self.servers,
            self.root,
            self.debate_id,
            persona,
            round_number,
            max_calls=self.max_calls,
            timeout_s=self.timeout_s,
            on_record=self._show,
        )

    def _show(self, record: ToolRecord) -> None:
        """A tool call in the live table: the persona is researching, with the call's outcome."""
        self.progress.persona(
            record.persona, RESEARCHING, detail=f"{record.tool} {record.outcome} → {record.note}"
        )
