"""A persona's turn with tools: model requests and tool calls in turn until the model answers.

The loop is the same for every provider that can call tools; the provider supplies
one request (`ask`, already retried on its own, so a retry never repeats a tool
call) and the messages that carry the results back (`answer`). The rules:

- every call the model asks for gets a result, in the order it asked;
- at most `ToolBox.max_calls` calls reach the toolbox in a turn; any call past that
  is answered `BUDGET_SPENT` without reaching it, and so is one whose arguments
  could not be read (with what is wrong);
- once the budget is spent the next request still lists the tools (the history
  must stay valid) but forbids calling them;
- at most `max_calls + 2` requests are made: a server that ignores the ban ends
  the turn with whatever text its last reply had.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from dreamcontext_council.engine.providers.base import Completion, ProviderCallError, Reply, Usage
from dreamcontext_council.engine.providers.diagnosis import CallTarget, redact
from dreamcontext_council.engine.providers.retry import Answered
from dreamcontext_council.engine.providers.tools import ToolBox, ToolCall, ToolOutcome, ToolSpec

BUDGET_SPENT = "tool-call budget for this turn is spent; answer now"


@dataclass(frozen=True)
class ToolOffer:
    """The tools one request lists, and whether the model may call them in its reply."""

    specs: tuple[ToolSpec, ...]
    allowed: bool


@dataclass(frozen=True)
class ToolAnswer:
    """One call the model asked for and the result that goes back to it."""

    call: ToolCall
    outcome: ToolOutcome


Ask = Callable[[ToolOffer], Awaitable[Answered]]
Answer = Callable[[Reply, Sequence[ToolAnswer]], None]


async def run_tool_turn(
    toolbox: ToolBox, ask: Ask, answer: Answer, target: CallTarget
) -> Completion:
    """Run one turn with `toolbox` and return it as one completion.

    `ask(offer)` makes one request of the conversation so far; `answer(reply,
    answers)` adds the model's reply and the results of its calls to the
    conversation. Tokens and attempts are summed over every request; the latency
    runs from the first request to the last reply, tool calls included.
    """
    max_calls = max(0, toolbox.max_calls)
    request_cap = max_calls + 2
    calls_made = input_tokens = output_tokens = attempts = written = read = 0
    answered = await ask(ToolOffer(toolbox.specs, allowed=max_calls > 0))
    started = time.monotonic() - answered.latency_s
    requests = 1
    while True:
        reply = answered.reply
        input_tokens += reply.input_tokens
        output_tokens += reply.output_tokens
        written += reply.cache_write_tokens
        read += reply.cache_read_tokens
        attempts += answered.attempts
        if not reply.tool_calls or requests == request_cap:
            break
        answers: list[ToolAnswer] = []
        for call in reply.tool_calls:
            problem = reply.argument_errors.get(call.id)
            if problem is not None:
                outcome = ToolOutcome(f"error: {problem}", is_error=True)
            elif calls_made >= max_calls:
                outcome = ToolOutcome(BUDGET_SPENT, is_error=True)
            else:
                calls_made += 1
                outcome = await toolbox.call(call)
            answers.append(ToolAnswer(call, outcome))
        answer(reply, answers)
        answered = await ask(ToolOffer(toolbox.specs, allowed=calls_made < max_calls))
        requests += 1
    if not reply.text.strip():
        raise _no_answer(target, attempts, requests)
    return Completion(
        text=reply.text,
        usage=Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            latency_s=time.monotonic() - started,
            cache_write_tokens=written,
            cache_read_tokens=read,
        ),
        provider=target.provider,
        model=reply.model or target.model,
        attempts=attempts,
        tool_calls=calls_made,
        cut=reply.cut,
    )


def _no_answer(target: CallTarget, attempts: int, requests: int) -> ProviderCallError:
    message = (
        f"{target.provider} kept calling tools after its tool-call budget was spent and "
        f"gave no answer for model {target.model} in {requests} requests; choose a model "
        "or server that honours tool_choice none, or run without --tools."
    )
    return ProviderCallError(
        redact(message, target.secrets),
        provider=target.provider,
        model=target.model,
        attempts=attempts,
    )
