"""What a persona may use during its turn: tools served by MCP servers the user named.

A provider that can call tools (Anthropic tool use, OpenAI tool calls) receives a
`ToolBox` with its prompt. It offers the model `ToolBox.specs`, hands every call the
model makes to `ToolBox.call`, and stops offering tools once `ToolBox.max_calls`
calls were made in this turn. The toolbox does the rest: the allowlist, the timeout,
starting nothing the user's file does not name, and recording each call as a
research note. A tool that fails, hangs or is denied comes back as an error
`ToolOutcome`, never as an exception, so the model can go on and answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is offered it.

    `name` is the name the model calls (``<server>__<tool>``, unique across servers,
    within the 64-character ``^[a-zA-Z0-9_-]+$`` both APIs accept); `input_schema` is
    the JSON Schema of its arguments as the MCP server declared it.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for: the provider's call id, the tool name and arguments."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class ToolOutcome:
    """What goes back to the model for one call.

    `text` is the tool's result (or the error), already cut to the size the toolbox
    allows; `note` is the slug of the research note that records the call, which the
    text also names so the persona can cite it.
    """

    text: str
    is_error: bool = False
    note: str | None = None


@runtime_checkable
class ToolBox(Protocol):
    """The tools one persona may call in one turn."""

    specs: tuple[ToolSpec, ...]
    max_calls: int

    async def call(self, call: ToolCall) -> ToolOutcome:
        """Run one call (allowlist, timeout, research note); never raises for a tool failure."""
        ...
