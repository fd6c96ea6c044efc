"""Prompt caching through the real SDKs: the breakpoints a request carries, and the cached
tokens a reply reports, recorded apart from the input and priced at their own prices.

The stub bills each request by its provider's published caching rules
(tests/prompt_cache.py): a prefix is readable once the call that wrote it has answered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prompt_cache import PromptCache
from stub_server import StubServer

from dreamcontext_council.engine.model_calls.accounting import Ledger, PriceTable, load_prices
from dreamcontext_council.engine.providers.anthropic_provider import AnthropicProvider
from dreamcontext_council.engine.providers.base import Prompt
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider
from dreamcontext_council.rules.usage import usage_totals

from .conftest import TEST_KEY, completed

BRIEF = "## Question\n\nShould the session store move to Postgres?\n\n" + "A fact. " * 1200
PERSONA = "## Your persona\n\nYou judge risk.\n"
ROUND_ONE = "### Round 1: opening\n\n" + "An answer line. " * 400
ROUND_TWO = "### Round 2: cross-examination\n\n" + "A critique line. " * 400
TAIL = "# Round 3 of 3 — rebuttal\n\nAnswer.\n"


def persona_prompt(on_text: bool = False) -> Prompt:
    """A rebuttal-shaped prompt: the brief and the persona, then two rounds, then the tail."""
    system = BRIEF + PERSONA
    user = ROUND_ONE + ROUND_TWO + TAIL
    return Prompt(
        system,
        user,
        system_marks=(len(BRIEF), len(system)),
        user_marks=(len(ROUND_ONE), len(ROUND_ONE) + len(ROUND_TWO)),
        on_text=(lambda piece: None) if on_text else None,
    )


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_anthropic_requests_carry_the_breakpoints_and_the_cache_is_priced_apart(
    tmp_path: Path, streamed: bool
) -> None:
    with StubServer(cache=PromptCache("anthropic")) as stub:
        provider = AnthropicProvider(api_key=TEST_KEY, base_url=stub.url)
        first = completed(provider, persona_prompt(streamed), "claude-sonnet-5-5")
        provider = AnthropicProvider(api_key=TEST_KEY, base_url=stub.url)
        second = completed(provider, persona_prompt(streamed), "claude-sonnet-5-5")
        requests = [r.json for r in stub.requests]
        bills = list(stub.bills)

    for request in requests:
        system, [message] = request["system"], request["messages"]
        # The text sent is the prompt's, byte for byte, split at its marks.
        assert "".join(b["text"] for b in system) == BRIEF + PERSONA
        assert "".join(b["text"] for b in message["content"]) == ROUND_ONE + ROUND_TWO + TAIL
        marked = [b["text"] for b in [*system, *message["content"]] if "cache_control" in b]
        assert marked == [BRIEF, PERSONA, ROUND_ONE, ROUND_TWO]
        assert all(b["cache_control"] == {"type": "ephemeral"} for b in system)
        assert "cache_control" not in message["content"][-1]  # the round's own part
    # The first call wrote every prefix; the second read them all, up to the last mark.
    assert first.usage.cache_write_tokens == bills[0].cache_write_tokens > 0
    assert first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens == bills[1].cache_read_tokens > 0
    assert second.usage.cache_write_tokens == 0
    # Only the round's own part is paid at the input price.
    assert second.usage.input_tokens == bills[1].input_tokens <= len("user:" + TAIL) // 4 + 2
    assert first.usage.input_tokens == bills[0].input_tokens

    # usage.jsonl keeps the three apart and prices each at its own price.
    ledger = Ledger(tmp_path / "usage.jsonl", load_prices(None))
    spec = parse_model("anthropic:claude-sonnet-5-5")
    for completion in (first, second):
        line = ledger.record(
            spec=spec,
            persona="risk-auditor",
            round_number=3,
            phase="rebuttal",
            completion=completion,
        )
        ledger.append(line)
    records = [json.loads(line) for line in (tmp_path / "usage.jsonl").read_text().splitlines()]
    for record, bill in zip(records, bills, strict=True):
        assert record["input_tokens"] == bill.input_tokens
        assert record["cache_write_tokens"] == bill.cache_write_tokens
        assert record["cache_read_tokens"] == bill.cache_read_tokens
        expected = (
            bill.input_tokens * 3.0
            + bill.cache_write_tokens * 3.75
            + bill.cache_read_tokens * 0.3
            + record["output_tokens"] * 15.0
        ) / 1_000_000
        assert record["cost_usd"] == pytest.approx(expected, abs=1e-6)
    # A read costs a tenth of the input price: the second call is far cheaper than the first.
    assert records[1]["cost_usd"] < 0.2 * records[0]["cost_usd"]
    totals = usage_totals(records)
    assert totals.all_input_tokens == sum(b.total for b in bills)
    assert "% cached)" in totals.line()


def test_a_prompt_without_marks_is_sent_as_before() -> None:
    with StubServer(cache=PromptCache("anthropic")) as stub:
        provider = AnthropicProvider(api_key=TEST_KEY, base_url=stub.url)
        completion = completed(provider, Prompt(BRIEF, TAIL), "claude-sonnet-5-5")
        [request] = [r.json for r in stub.requests]
    assert request["system"] == BRIEF
    assert request["messages"][0]["content"] == TAIL
    assert completion.usage.cache_write_tokens == completion.usage.cache_read_tokens == 0


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_openai_cached_tokens_are_split_off_the_prompt_tokens_and_priced(
    tmp_path: Path, streamed: bool
) -> None:
    with StubServer(cache=PromptCache("openai")) as stub:
        provider = OpenAIProvider(api_key=TEST_KEY, base_url=stub.openai_url)
        first = completed(provider, persona_prompt(streamed), "gpt-4.1")
        provider = OpenAIProvider(api_key=TEST_KEY, base_url=stub.openai_url)
        second = completed(provider, persona_prompt(streamed), "gpt-4.1")
        bills = list(stub.bills)
        [request, _] = [r.json for r in stub.requests]

    # OpenAI caches on its own: the system prompt first, then the user message, as strings.
    assert request["messages"] == [
        {"role": "system", "content": BRIEF + PERSONA},
        {"role": "user", "content": ROUND_ONE + ROUND_TWO + TAIL},
    ]
    assert first.usage.cache_read_tokens == 0
    assert first.usage.input_tokens == bills[0].total
    cached = bills[1].cache_read_tokens
    assert cached >= 1024 and (cached - 1024) % 128 == 0
    assert second.usage.cache_read_tokens == cached
    assert second.usage.input_tokens == bills[1].total - cached
    prices = PriceTable({"gpt-4.1": (2.0, 8.0, 2.0, 0.5)})
    ledger = Ledger(tmp_path / "usage.jsonl", prices)
    line = json.loads(
        ledger.record(
            spec=parse_model("openai:gpt-4.1"),
            persona="risk-auditor",
            round_number=3,
            phase="rebuttal",
            completion=second,
        )
    )
    assert line["cache_read_tokens"] == cached and line["cache_write_tokens"] == 0
    expected = ((bills[1].total - cached) * 2.0 + cached * 0.5 + line["output_tokens"] * 8.0) / 1e6
    assert line["cost_usd"] == pytest.approx(expected, abs=1e-6)


def test_a_price_pair_gets_anthropic_cache_ratios_and_a_quad_its_own(tmp_path: Path) -> None:
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"claude-x": [4.0, 20.0], "gpt-x": [1.0, 4.0, 1.0, 0.1]}))
    prices = load_prices(str(table))
    claude = prices.price(parse_model("anthropic:claude-x"))
    assert (
        claude is not None and claude.cache_write == 5.0 and claude.cache_read == pytest.approx(0.4)
    )
    gpt = prices.price(parse_model("openai:gpt-x"))
    assert gpt is not None and (gpt.cache_write, gpt.cache_read) == (1.0, 0.1)
    # Admitted at its dearest: every input token as a cache write.
    assert prices.estimate(parse_model("anthropic:claude-x"), 1_000_000, 0) == 5.0
    table.write_text(json.dumps({"gpt-x": [1.0, 4.0, 1.0]}))
    with pytest.raises(Exception, match="2 or 4 prices"):
        load_prices(str(table))
