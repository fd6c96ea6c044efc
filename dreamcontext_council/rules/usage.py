"""Totals over usage.jsonl records (one per model call)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple


class UsageTotals(NamedTuple):
    calls: int
    failed: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    providers: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The `usage` object of `show --json`, the board and the dashboard."""
        return {**self._asdict(), "providers": list(self.providers)}

    def line(self) -> str:
        """One line for boards and `show`."""
        if not self.calls:
            return "no model calls"
        failed = f" ({self.failed} failed)" if self.failed else ""
        return (
            f"{self.calls} calls{failed} · {self.input_tokens:,} in / {self.output_tokens:,} out tokens"
            f" · ${self.cost_usd:.4f} · {', '.join(self.providers)}"
        )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def usage_totals(records: Iterable[dict[str, Any]]) -> UsageTotals:
    """Sum calls, tokens and cost; count failed calls."""
    calls = failed = tokens_in = tokens_out = 0
    cost = 0.0
    providers: list[str] = []
    for record in records:
        calls += 1
        failed += record.get("outcome", "ok") != "ok"
        tokens_in += _int(record.get("input_tokens"))
        tokens_out += _int(record.get("output_tokens"))
        value = record.get("cost_usd")
        cost += float(value) if isinstance(value, int | float) else 0.0
        provider = str(record.get("provider", ""))
        if provider and provider not in providers:
            providers.append(provider)
    return UsageTotals(calls, failed, tokens_in, tokens_out, round(cost, 6), tuple(providers))
