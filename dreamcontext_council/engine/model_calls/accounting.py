"""usage.jsonl, prices and the budget that stops a run cleanly before it is crossed."""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from dreamcontext_council.engine.providers.base import Completion
from dreamcontext_council.engine.providers.models import ModelSpec
from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder.live import now_iso
from dreamcontext_council.folder.storage import append_line

PRICES_ENV = "DREAMCONTEXT_PRICES"

# The `persona` of calls no debater makes. Parentheses keep them apart from every persona
# slug (the cognitive preset seats a debater called `synthesizer`).
SYNTHESIS_CALLER = "(synthesis)"
ORCHESTRATOR_CALLER = "(orchestrator)"
BASELINE_CALLER = "(baseline)"

# US dollars per million tokens: input, output, cache write, cache read; override with
# --prices or DREAMCONTEXT_PRICES. Sources and the date they were read: docs/providers.md.
# Anthropic: a cache write costs 1.25x the input price, a cache read 0.1x. OpenAI: caching is
# automatic and writing costs nothing extra; cached input is billed at each model's discount.
DEFAULT_PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-opus-5-5": (5.0, 25.0, 6.25, 0.5),
    "claude-sonnet-5-5": (3.0, 15.0, 3.75, 0.3),
    "claude-haiku-5-5": (1.0, 5.0, 1.25, 0.1),
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.5),
    "claude-opus-4-1": (15.0, 75.0, 18.75, 1.5),
    "claude-opus-4": (15.0, 75.0, 18.75, 1.5),
    "claude-sonnet-4-5": (3.0, 15.0, 3.75, 0.3),
    "claude-sonnet-4": (3.0, 15.0, 3.75, 0.3),
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.1),
    "gpt-5": (1.25, 10.0, 1.25, 0.125),
    "gpt-5-mini": (0.25, 2.0, 0.25, 0.025),
    "gpt-4o": (2.5, 10.0, 2.5, 1.25),
    "gpt-4o-mini": (0.15, 0.6, 0.15, 0.075),
    "gpt-4.1": (2.0, 8.0, 2.0, 0.5),
    "gpt-4.1-mini": (0.4, 1.6, 0.4, 0.1),
    "o3": (2.0, 8.0, 2.0, 0.5),
    "o4-mini": (1.1, 4.4, 1.1, 0.275),
}
# A price file's `[input, output]` pair, for a model of this provider, gets these cache
# prices as multiples of its input price; any other provider's pair gets the input price.
CACHE_RATIOS = {"anthropic": (1.25, 0.1)}


class Price(NamedTuple):
    """Dollars per million tokens of one model."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    @property
    def dearest_input(self) -> float:
        """The most one input token can cost: what an estimate before the call counts."""
        return max(self.input, self.cache_write)


FREE = Price(0.0, 0.0, 0.0, 0.0)


def _price(spec: ModelSpec, values: tuple[float, ...]) -> Price:
    """A table entry as a `Price`: a pair gets its cache prices from `CACHE_RATIOS`."""
    if len(values) >= 4:
        return Price(*values[:4])
    write, read = CACHE_RATIOS.get(spec.provider, (1.0, 1.0))
    return Price(values[0], values[1], values[0] * write, values[0] * read)


@dataclass(frozen=True)
class PriceTable:
    """Prices per million tokens by model name; unknown models cost 0 and are reported.

    An entry is (input, output) or (input, output, cache write, cache read)."""

    prices: Mapping[str, tuple[float, ...]] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    def price(self, spec: ModelSpec) -> Price | None:
        if spec.provider in ("scripted", "command"):
            found = self.prices.get(str(spec))
            return _price(spec, found) if found else FREE
        found = self.prices.get(str(spec)) or self.prices.get(spec.model)
        return _price(spec, found) if found else None

    def cost(
        self,
        spec: ModelSpec,
        input_tokens: int,
        output_tokens: int,
        cache_write_tokens: int = 0,
        cache_read_tokens: int = 0,
    ) -> float:
        """What a call costs: `input_tokens` are the uncached ones, each kind at its price."""
        price = self.price(spec) or FREE
        return (
            input_tokens * price.input
            + output_tokens * price.output
            + cache_write_tokens * price.cache_write
            + cache_read_tokens * price.cache_read
        ) / 1_000_000

    def estimate(self, spec: ModelSpec, input_tokens: int, output_tokens: int) -> float:
        """A call's cost before it is made, at its dearest: every input token at the
        higher of the input and cache-write prices (what `--max-cost` admits against)."""
        price = self.price(spec) or FREE
        return (input_tokens * price.dearest_input + output_tokens * price.output) / 1_000_000


def load_prices(path: str | None = None) -> PriceTable:
    """The default table, overridden by a JSON file {model: [input, output]} or
    {model: [input, output, cache write, cache read]} if given."""
    chosen = path or os.environ.get(PRICES_ENV)
    prices: dict[str, tuple[float, ...]] = dict(DEFAULT_PRICES)
    if chosen:
        try:
            data = json.loads(Path(chosen).read_text(encoding="utf-8"))
            for model, values in data.items():
                if not isinstance(values, list) or len(values) not in (2, 4):
                    raise ValueError(f"{model!r} has no list of 2 or 4 prices")
                numbers = tuple(float(v) for v in values)
                if not all(math.isfinite(v) and v >= 0 for v in numbers):
                    raise ValueError(f"{model!r} has a price that is not a number >= 0")
                prices[str(model)] = numbers
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            raise UsageError(
                f'The price table {chosen} must be JSON like {{"gpt-4o": [2.5, 10.0]}} '
                "(dollars per million input and output tokens, optionally then cache-write "
                f"and cache-read): {exc}"
            ) from None
    return PriceTable(prices)


# The outcome of a call whose answer broke the persona contract: it was paid for, but it is
# not on disk, so the persona is asked again (`ok` lines stand only for answers on disk).
BROKEN = "broken"
# A call that returned but whose result is not on disk yet: a line with the same `call` id
# follows once it is saved (`ok`) or given up; a kill in between leaves it pending, paid for.
PENDING = "pending"
# An answer not saved because a person wrote that persona's entry while the call was in flight.
DISCARDED = "discarded"


def with_outcome(line: str, outcome: str, error: str | None = None) -> str:
    """A usage line with its outcome replaced (and an error, when given)."""
    record = json.loads(line)
    record["outcome"] = outcome
    if error:
        record["error"] = error
    return json.dumps(record, ensure_ascii=False)


class BudgetReached(Exception):
    """The next call would cross --max-cost or --max-calls; the run stops, resumable."""


@dataclass
class Budget:
    """Calls and spend against --max-calls and --max-cost.

    A run has its own; an eval also gives every run one budget they share, so the runs
    together stop before crossing its limits, whichever run would cross them.
    """

    max_cost: float | None = None
    max_calls: int | None = None
    calls: int = 0
    cost: float = 0.0
    # Calls admitted but not counted yet: personas of a round are asked all at once.
    in_flight: int = 0
    reserved: float = 0.0

    def admit(self, estimate: float) -> None:
        """Reserve room for one call of about `estimate` dollars; BudgetReached past a limit."""
        if self.max_calls is not None and self.calls + self.in_flight + 1 > self.max_calls:
            # Calls still in flight count: they are made, and will be in usage.jsonl.
            made = self.calls + self.in_flight
            raise BudgetReached(f"--max-calls {self.max_calls} reached after {made} calls")
        if self.max_cost is not None and self.cost + self.reserved + estimate > self.max_cost:
            raise BudgetReached(
                f"--max-cost ${self.max_cost:.2f} would be crossed (spent ${self.cost:.4f}, "
                f"next call about ${estimate:.4f})"
            )
        self.in_flight += 1
        self.reserved += estimate

    def release(self, estimate: float) -> None:
        """Give back the room `admit` reserved, once the call is over."""
        self.in_flight -= 1
        self.reserved = max(0.0, self.reserved - estimate)

    def count(self, cost: float) -> None:
        self.calls += 1
        self.cost += cost


@dataclass
class Ledger:
    """Counts this run's calls and cost and appends one usage.jsonl line per call."""

    usage_path: Path
    prices: PriceTable
    max_cost: float | None = None
    max_calls: int | None = None
    shared: Budget | None = None
    """Limits this run shares with others in the process (an eval's), checked as well."""
    within: Path | None = None
    """The root usage.jsonl is written in (see `safe_write`); by default its own folder."""
    own: Budget = field(init=False)
    # Calls whose `pending` line this ledger wrote and that no later line has settled yet.
    _pending: set[str] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.own = Budget(self.max_cost, self.max_calls)

    @property
    def calls(self) -> int:
        return self.own.calls

    @property
    def cost(self) -> float:
        return self.own.cost

    def admit(
        self, spec: ModelSpec, estimated_input_tokens: int, expected_output_tokens: int
    ) -> float:
        """Reserve room for one call and return its estimated cost; BudgetReached when it would cross a limit."""
        estimate = self.prices.estimate(spec, estimated_input_tokens, expected_output_tokens)
        self.own.admit(estimate)
        if self.shared is not None:
            try:
                self.shared.admit(estimate)
            except BudgetReached:
                self.own.release(estimate)
                raise
        return estimate

    def release(self, estimate: float) -> None:
        """Give back the room `admit` reserved, once the call is over."""
        self.own.release(estimate)
        if self.shared is not None:
            self.shared.release(estimate)

    def record(
        self,
        *,
        spec: ModelSpec,
        persona: str,
        round_number: int,
        phase: str,
        completion: Completion | None,
        outcome: str = "ok",
        error: str | None = None,
        latency_s: float = 0.0,
    ) -> str:
        """Count one call and return its usage line (also for failed calls, with zero tokens).

        The line carries a new `call` id: later lines for the same call (its outcome once
        the result is saved) repeat it. The caller appends the line with `append`, which
        may block on the disk.
        """
        usage = completion.usage if completion else None
        tokens_in = usage.input_tokens if usage else 0
        tokens_out = usage.output_tokens if usage else 0
        written = usage.cache_write_tokens if usage else 0
        read = usage.cache_read_tokens if usage else 0
        cost = self.prices.cost(spec, tokens_in, tokens_out, written, read)
        self.own.count(cost)
        if self.shared is not None:
            self.shared.count(cost)
        record: dict[str, Any] = {
            "call": uuid.uuid4().hex[:12],
            "at": now_iso(),
            "persona": persona,
            "round": round_number,
            "phase": phase,
            "provider": completion.provider if completion else spec.provider,
            "model": completion.model if completion else (spec.model or spec.provider),
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            **(
                {"cache_write_tokens": written, "cache_read_tokens": read}
                if written or read
                else {}
            ),
            "latency_s": round_s(completion.usage.latency_s if completion else latency_s),
            "attempt": completion.attempts if completion else 1,
            "outcome": outcome,
            "cost_usd": round(cost, 6),
        }
        if completion is not None and completion.tool_calls:
            # A turn with research tools: its tokens are the sum over every request.
            record["tool_calls"] = completion.tool_calls
        if spec.provider == "scripted":
            record["note"] = "scripted stand-in, not a model"
        if error:
            record["error"] = error
        return json.dumps(record, ensure_ascii=False)

    def append(self, line: str) -> None:
        """Append one usage line to usage.jsonl.

        A `pending` line is fsynced: it is the record that the call was paid for. The line
        that later settles it (`ok`, `failed`, ...) is not: a power cut that loses it leaves
        the call `pending`, which counts it as paid and asks its result again, exactly as
        the missing result on disk would have it.
        """
        call = _call_and_outcome(line)
        settles = call is not None and call[0] in self._pending
        within = self.within or self.usage_path.parent
        append_line(self.usage_path, line, within=within, durable=not settles)
        if call is not None:
            if call[1] == PENDING:
                self._pending.add(call[0])
            else:
                self._pending.discard(call[0])


def _call_and_outcome(line: str) -> tuple[str, str] | None:
    """The `call` id and `outcome` of a usage line this ledger made (None without an id)."""
    record = json.loads(line)
    call = record.get("call")
    return (call, record.get("outcome", "")) if isinstance(call, str) else None


def round_s(value: float) -> float:
    return round(value, 3)
