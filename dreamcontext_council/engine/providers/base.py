"""The one async interface every model provider implements, and what a call returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from dreamcontext_council.engine.providers.tools import ToolBox, ToolCall
from dreamcontext_council.errors import ProviderError


@dataclass(frozen=True)
class RetryNotice:
    """An attempt that failed and will be tried again: why, which retry, and the wait.

    `reason` is the failure's short reason ("429 rate limited"); `retry` counts from 1 up
    to `retries`, the most the policy allows; `wait_s` is the pause before it.
    """

    reason: str
    retry: int
    retries: int
    wait_s: float
    status: int | None = None

    def text(self, wait_s: float | None = None) -> str:
        """`429 rate limited, retry 2/4 in 8 s` (with `wait_s` for the time still left)."""
        left = self.wait_s if wait_s is None else max(0.0, wait_s)
        seconds = f"{left:.0f}" if left >= 1 or left == 0 else f"{left:.1f}"
        return f"{self.reason}, retry {self.retry}/{self.retries} in {seconds} s"


RetryListener = Callable[[RetryNotice], None]
# Hears each new piece of an answer's text as it arrives (see `Prompt.on_text`).
TextListener = Callable[[str], None]


@dataclass(frozen=True)
class Prompt:
    """What to ask a model: a system prompt, a user message and an output budget.

    `task` describes the call (phase, persona, round...) for the run's own records; no
    provider reads it and it is never sent: the prompt's text says what a model needs,
    and the scripted stand-in reads that text too.
    `tools`, when set, are the MCP tools the model may call during this turn; a
    provider that cannot call tools refuses such a prompt before any call.
    `on_retry`, when set, hears of every failed attempt a provider will retry, before
    its wait (the run's progress shows it); it is not part of what is asked.
    `on_text`, when set, hears each new piece of the answer's text as it arrives (in a
    turn with tools, the text of every request in order; never tool-call arguments).
    A provider that cannot stream hands it the whole text once. After `on_retry`
    the text starts over: a failed attempt's pieces never reach it again.
    `system_marks` and `user_marks` are where a stable prefix ends, as character offsets
    into `system` and `user`: text other calls (another persona's, the next round's) start
    with byte for byte. A provider with a prompt cache asks it to keep those prefixes
    (`anthropic_provider.message_request`); the text sent is the same either way.
    `user_breaks` are where the user message's parts end (a persona's: each round it took
    part in): a provider that sends text blocks splits there too, so a later call that
    starts with these parts sends them as the same blocks and its prefix matches.
    """

    system: str
    user: str
    max_tokens: int = 4096
    task: Mapping[str, Any] = field(default_factory=dict)
    tools: ToolBox | None = None
    system_marks: tuple[int, ...] = ()
    user_marks: tuple[int, ...] = ()
    user_breaks: tuple[int, ...] = ()
    on_retry: RetryListener | None = field(default=None, compare=False, repr=False)
    on_text: TextListener | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Usage:
    """Token counts and latency of one call.

    `input_tokens` are the input tokens billed at the input price; `cache_write_tokens`
    (Anthropic's `cache_creation_input_tokens`) and `cache_read_tokens` (Anthropic's
    `cache_read_input_tokens`, OpenAI's `prompt_tokens_details.cached_tokens`) are the
    other input tokens, billed at their own prices and never folded into `input_tokens`.
    `latency_s` runs from the start of the first attempt (after any wait for a
    concurrency slot) to the answer, so it includes retries and their waits.
    """

    input_tokens: int
    output_tokens: int
    latency_s: float
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    """A model's answer with its accounting.

    `model` is the model the server says it used (the requested one when it does not
    say); `attempts` is 1 plus the number of retries it took. A turn with tools is
    one completion over several requests: `usage` sums their tokens, `latency_s`
    spans the whole turn, `attempts` sums every request's attempts and `tool_calls`
    counts the calls handed to the toolbox. `cut` is True when reading stopped at the
    answer's size budget (`answer_read.read_limit`): `text` is what was read, not the end.
    """

    text: str
    usage: Usage
    provider: str
    model: str
    attempts: int
    tool_calls: int = 0
    cut: bool = False


@dataclass(frozen=True)
class Reply:
    """One successful attempt as a provider read it off the wire, before accounting.

    `tool_calls` are the calls the model asked for, in its order; `assistant_turn` is
    the model's message as it goes back into the conversation when those calls are
    answered; `argument_errors` maps the id of a call whose arguments could not be
    read (not JSON, not an object) to what is wrong with them. `cut` is True when reading
    stopped at the answer's size budget: `text` is what came until then, with no tool calls.
    The input tokens are split as in `Usage`: uncached, written to the cache, read from it.
    """

    text: str
    input_tokens: int
    output_tokens: int
    model: str
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    tool_calls: tuple[ToolCall, ...] = ()
    assistant_turn: Mapping[str, Any] = field(default_factory=dict)
    argument_errors: Mapping[str, str] = field(default_factory=dict)
    cut: bool = False


@runtime_checkable
class Provider(Protocol):
    """A model provider: `complete` returns the answer or raises `ProviderError`.

    `supports_tools` says whether `complete` accepts a prompt with `tools`; a
    provider that does not refuses such a prompt with `tools_refused`.
    """

    name: str
    supports_tools: bool

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


def tools_refused(provider: str) -> ProviderError:
    """The one-line error of a provider that cannot call tools, raised before any call."""
    label = "command:" if provider == "command" else provider  # as model strings spell it
    return ProviderError(
        f"the {label} provider cannot call MCP tools; run without --tools, "
        "or give this persona an anthropic: or openai: model"
    )
