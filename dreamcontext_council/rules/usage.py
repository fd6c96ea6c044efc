"""Totals over usage.jsonl records (one per model call).

A call may have two lines: `pending` once it returned, then its outcome once its result
is saved or given up, both with the same `call` id. `calls_of` folds them to one record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple


class UsageTotals(NamedTuple):
    """Calls, tokens and cost. `input_tokens` are the uncached input tokens; the input
    written to and read from a provider's prompt cache are counted apart."""

    calls: int
    failed: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    providers: tuple[str, ...]
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    @property
    def all_input_tokens(self) -> int:
        """Every input token sent: uncached, written to the cache and read from it."""
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens

    @property
    def cached_share(self) -> float:
        """The share of input tokens served from a prompt cache (0 without input)."""
        total = self.all_input_tokens
        return self.cache_read_tokens / total if total else 0.0

    def to_json(self) -> dict[str, Any]:
        """The `usage` object of `show --json`, the board and the dashboard."""
        return {
            **self._asdict(),
            "providers": list(self.providers),
            "cached_share": round(self.cached_share, 4),
        }

    def line(self) -> str:
        """One line for boards and `show`."""
        if not self.calls:
            return "no model calls"
        failed = f" ({self.failed} failed)" if self.failed else ""
        cached = (
            f" ({self.cached_share:.0%} cached)"
            if self.cache_read_tokens or self.cache_write_tokens
            else ""
        )
        return (
            f"{self.calls} calls{failed} · {self.all_input_tokens:,} in{cached} / "
            f"{self.output_tokens:,} out tokens"
            f" · ${self.cost_usd:.4f} · {', '.join(self.providers)}"
        )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


# Outcomes that are no failure: saved, not saved yet (or lost to a kill), kept out by a person.
NOT_FAILED = ("ok", "pending", "discarded")


def calls_of(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per call, in the order the calls were made.

    A call's later line replaces its earlier one (`pending`, then `ok`); a line without
    a `call` id (written before calls had one) is a call of its own.
    """
    calls: dict[object, dict[str, Any]] = {}
    for number, record in enumerate(records):
        call = record.get("call")
        key = call if isinstance(call, str) and call else number
        calls[key] = record
    return list(calls.values())


def usage_totals(records: Iterable[dict[str, Any]]) -> UsageTotals:
    """Sum calls, tokens and cost (a pending call was paid for); count failed calls.

    `records` are usage.jsonl lines; a call's lines are folded first, so none counts twice.
    """
    calls = failed = tokens_in = tokens_out = written = read = 0
    cost = 0.0
    providers: list[str] = []
    for record in calls_of(records):
        calls += 1
        failed += record.get("outcome", "ok") not in NOT_FAILED
        tokens_in += _int(record.get("input_tokens"))
        tokens_out += _int(record.get("output_tokens"))
        written += _int(record.get("cache_write_tokens"))
        read += _int(record.get("cache_read_tokens"))
        value = record.get("cost_usd")
        cost += float(value) if isinstance(value, int | float) else 0.0
        provider = str(record.get("provider", ""))
        if provider and provider not in providers:
            providers.append(provider)
    return UsageTotals(
        calls, failed, tokens_in, tokens_out, round(cost, 6), tuple(providers), written, read
    )
