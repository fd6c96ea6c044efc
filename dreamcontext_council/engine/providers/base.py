"""The one async interface every model provider implements, and what a call returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from dreamcontext_council.engine.providers.tools import ToolBox
from dreamcontext_council.errors import ProviderError


@dataclass(frozen=True)
class Prompt:
    """What to ask a model: a system prompt, a user message and an output budget.

    `task` carries structured hints about the call (phase, persona, round...). Real
    providers ignore it; the built-in scripted provider reads it to stay in role.
    `tools`, when set, are the MCP tools the model may call during this turn; a
    provider that cannot call tools refuses such a prompt before any call.
    """

    system: str
    user: str
    max_tokens: int = 4096
    task: Mapping[str, Any] = field(default_factory=dict)
    tools: ToolBox | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts and latency of one call.

    `latency_s` runs from the start of the first attempt (after any wait for a
    concurrency slot) to the answer, so it includes retries and their waits.
    """

    input_tokens: int
    output_tokens: int
    latency_s: float


@dataclass(frozen=True)
class Completion:
    """A model's answer with its accounting.

    `model` is the model the server says it used (the requested one when it does not
    say); `attempts` is 1 plus the number of retries it took.
    """

    text: str
    usage: Usage
    provider: str
    model: str
    attempts: int


@dataclass(frozen=True)
class Reply:
    """One successful attempt as a provider read it off the wire, before accounting."""

    text: str
    input_tokens: int
    output_tokens: int
    model: str


@runtime_checkable
class Provider(Protocol):
    """A model provider: `complete` returns the answer or raises `ProviderError`."""

    name: str

    async def complete(self, prompt: Prompt, model: str) -> Completion:
        """Ask `model` for an answer to `prompt`."""
        ...


class ProviderCallError(ProviderError):
    """A call that failed for good; says who failed, how often it was tried, and why.

    `retryable` is True when the failure was transient (rate limits, overload,
    timeouts) and only the retry budget ran out, so running again later may work.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        model: str,
        attempts: int,
        status: int | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.model = model
        self.attempts = attempts
        self.status = status
        self.retryable = retryable
