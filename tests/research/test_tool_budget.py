"""A persona turn with research tools is admitted under --max-cost at its worst case."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dreamcontext_council.engine.model_calls.accounting import BudgetReached, Ledger, PriceTable
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.model_calls.progress import QuietProgress
from dreamcontext_council.engine.providers.base import Prompt
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet
from dreamcontext_council.engine.providers.tools import ToolCall, ToolOutcome, ToolSpec
from dreamcontext_council.errors import ProviderError

SPEC = parse_model("openai:gpt-priced")
# $1 per million input tokens: a 40,000-character prompt (10,000 tokens) costs $0.01.
PRICES = PriceTable({"gpt-priced": (1.0, 0.0)})


class NoTools:
    """A toolbox that is never called: admission comes before any request."""

    specs = (ToolSpec("lookup__lookup", "Look a fact up."),)
    max_calls = 4

    async def call(self, call: ToolCall) -> ToolOutcome:
        raise AssertionError("no request may be made")


def ask(prompt: Prompt, tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "usage.jsonl", PRICES, max_cost=0.03)
    caller = Caller(ProviderSet(env={}), ledger, QuietProgress())
    asyncio.run(caller.ask(SPEC, prompt, persona="alpha", round=1, phase="opening"))


def test_a_turn_with_tools_is_admitted_as_one_request_per_allowed_call(tmp_path: Path) -> None:
    with_tools = Prompt("", "x" * 40_000, 1, {}, NoTools())
    with pytest.raises(BudgetReached, match="--max-cost"):
        ask(with_tools, tmp_path)  # 5 requests of $0.01 would cross $0.03
    assert not (tmp_path / "usage.jsonl").exists()


def test_the_same_turn_without_tools_is_admitted(tmp_path: Path) -> None:
    # Admitted, then the call fails for want of a key: not a budget stop.
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        ask(Prompt("", "x" * 40_000, 1, {}), tmp_path)
