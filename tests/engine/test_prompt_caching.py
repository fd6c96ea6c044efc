"""A grounded debate on an Anthropic model through a stub that caches as Anthropic does.

Every persona request carries its `cache_control` breakpoints; a persona's prompt grows by
appending (the system prompt the same in every round, and round N's whole message first in
round N+1's, byte for byte, every answer in it once); every persona reads the same brief; and
usage.jsonl records the cached tokens the stub billed, priced at their prices.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prompt_cache import Bill, PromptCache
from stub_server import StubServer

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.folder.paths import Root

from .support import (
    OPTIONS,
    TEST_KEY,
    TOPIC,
    Council,
    request_task,
    roster_file,
    scripted_responder,
)

SLUGS = ("risk-auditor", "growth-cfo", "platform-lead")
MODEL = "anthropic:claude-sonnet-5-5"
PRICE = {"input": 3.0, "write": 3.75, "read": 0.3, "output": 15.0}


def design() -> str:
    """An attachment of some 24 KB: prose and code, so the brief is well over 1,024 tokens."""
    section = (
        "## Sessions\n\nSessions live in Redis with a TTL of 30 minutes; a cutover keeps both "
        "stores written for a week.\n\n```python\ndef expire(session):\n    return session.ttl\n```\n\n"
    )
    return "# Design\n\n" + section * 120


def texts(content: Any) -> list[tuple[str, bool]]:
    """The text blocks of a system prompt or a message, each with whether it is marked."""
    if isinstance(content, str):
        return [(content, False)]
    return [(b["text"], "cache_control" in b) for b in content]


def run_cached(
    council: Council,
    tmp_path: Path,
    rounds: int,
    *extra: str,
    responder: Callable[[dict[str, Any]], str] = scripted_responder,
    delay_s: float = 0.0,
) -> tuple[str, list[tuple[dict[str, Any], dict[str, Any], Bill]]]:
    attached = tmp_path / "design.md"
    attached.write_text(design(), encoding="utf-8")
    with StubServer(
        responder=responder, cache=PromptCache("anthropic"), default_delay_s=delay_s
    ) as stub:
        result = council(
            "run", "--topic", TOPIC, "--options", OPTIONS,
            "--personas", roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, MODEL)),
            "--check-model", "scripted", "--synth-model", "scripted",
            "--attach", str(attached), "--rounds", str(rounds), *extra,
            env={"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": stub.url},
        )  # fmt: skip
        billed = [(request_task(r.json), r.json, bill) for r, bill in stub.billed]
    assert result.code == 0, result.err
    return result.last_line, billed


def test_a_persona_prompt_grows_by_appending_and_carries_its_breakpoints(
    council: Council, tmp_path: Path
) -> None:
    debate_id, billed = run_cached(council, tmp_path, 4)
    assert len(billed) == len(SLUGS) * 4  # every persona call answered, none refused
    by_call = {(task["persona"], task["round"]): request for task, request, _ in billed}
    files = DebateFiles(Root(council.root), debate_id)
    answers = {(slug, e.round): e.body for slug in SLUGS for e in files.entries(slug)}
    assert len(answers) == len(SLUGS) * 4
    pairs = council.meta(debate_id)["cross_examination"]
    briefs = set()
    for slug in SLUGS:
        for number in (1, 2, 3, 4):
            request = by_call[slug, number]
            system = texts(request["system"])
            [message] = request["messages"]
            user = texts(message["content"])
            assert sum(marked for _, marked in system + user) <= 4
            # The brief every persona shares, then its own prompt: both marked.
            assert [marked for _, marked in system] == [True, True]
            briefs.add(system[0][0])
            # One block per round; marked where the previous round's message ended (that
            # round wrote it) and where this one's ends, unless no round follows to read it.
            expected = {
                1: [True],
                2: [True, True],
                3: [False, True, True],
                4: [False, False, True, False],
            }
            assert [marked for _, marked in user] == expected[number], (slug, number)
            sent = "".join(text for text, _ in user)
            # This round's title comes after every earlier round's, and is the last.
            titles = re.findall(r"^# Round (\d+) of 4 — ", sent, re.M)
            assert titles == [str(n) for n in range(1, number + 1)]
            # Every earlier answer is there exactly once, the persona's own and its peers'
            # (round 2 reads only its own and its assigned peer's round-1 answers whole).
            for (persona, answered), body in answers.items():
                read_whole = answered < number and (number > 2 or persona in (slug, pairs[slug]))
                assert sent.count(body) == read_whole, (slug, number, persona, answered)
        for number in (1, 2, 3):
            before, after = by_call[slug, number], by_call[slug, number + 1]
            # The whole system prompt is the same, byte for byte, in every round.
            assert before["system"] == after["system"]
            # The whole message of round N opens round N+1's, byte for byte and in the same
            # blocks, and the mark sits where it ends.
            read = [text for text, _ in texts(before["messages"][0]["content"])]
            sent = texts(after["messages"][0]["content"])
            assert [text for text, _ in sent[:number]] == read
            assert sent[number - 1][1] and len(sent) == number + 1
    [brief] = briefs  # every persona, every round: the same brief
    assert design() in brief


def test_the_cached_tokens_are_recorded_and_priced_as_the_stub_billed(
    council: Council, tmp_path: Path
) -> None:
    debate_id, billed = run_cached(council, tmp_path, 3)
    bills = {(task["persona"], task["round"]): bill for task, _, bill in billed}
    records = [r for r in council.usage(debate_id) if r["provider"] == "anthropic"]
    assert len(records) == len(bills)
    for record in records:
        bill = bills[record["persona"], record["round"]]
        assert record["input_tokens"] == bill.input_tokens
        assert record.get("cache_write_tokens", 0) == bill.cache_write_tokens
        assert record.get("cache_read_tokens", 0) == bill.cache_read_tokens
        expected = (
            bill.input_tokens * PRICE["input"]
            + bill.cache_write_tokens * PRICE["write"]
            + bill.cache_read_tokens * PRICE["read"]
            + record["output_tokens"] * PRICE["output"]
        ) / 1_000_000
        assert record["cost_usd"] == pytest.approx(expected, abs=1e-6)
    # Round 2 reads the whole system prompt each persona wrote in round 1.
    for slug in SLUGS:
        assert bills[slug, 2].cache_read_tokens > 0.9 * bills[slug, 1].cache_write_tokens
    board = council("board", debate_id)
    assert board.code == 0, board.err
    assert "% cached)" in board.out


def held_until(count: int) -> Callable[[dict[str, Any]], str]:
    """A responder that answers no request before `count` have arrived: calls started
    together, as a round's are, all arrive before any answer begins."""
    barrier = threading.Barrier(count)

    def respond(request_json: dict[str, Any]) -> str:
        barrier.wait(timeout=60)
        return scripted_responder(request_json)

    return respond


def test_round_one_is_warmed_so_all_but_one_persona_read_the_brief(
    council: Council, tmp_path: Path
) -> None:
    # Each answer begins a second after its request: calls started together would all
    # arrive before any answer began, and none could read another's brief.
    _, billed = run_cached(council, tmp_path, 1, delay_s=1.0)
    bills = [bill for task, _, bill in billed if task["round"] == 1]
    assert len(bills) == len(SLUGS)
    brief = len(design()) // 4
    # One call wrote the brief; the others started once its answer began, and read it.
    assert sum(bill.cache_read_tokens >= brief for bill in bills) == len(SLUGS) - 1
    assert sum(bill.cache_write_tokens >= brief for bill in bills) == 1


def test_without_warming_round_one_starts_together_and_every_call_writes_the_brief(
    council: Council, tmp_path: Path
) -> None:
    _, billed = run_cached(council, tmp_path, 1, "--no-warm", responder=held_until(len(SLUGS)))
    bills = [bill for task, _, bill in billed if task["round"] == 1]
    assert len(bills) == len(SLUGS)
    brief = len(design()) // 4
    assert all(bill.cache_read_tokens == 0 for bill in bills)
    assert all(bill.cache_write_tokens >= brief for bill in bills)


def test_the_dry_run_estimates_the_cost_with_caching_beside_the_uncached_one(
    council: Council, tmp_path: Path
) -> None:
    attached = tmp_path / "design.md"
    attached.write_text(design(), encoding="utf-8")
    with StubServer(responder=scripted_responder) as stub:
        result = council(
            "run", "--topic", TOPIC, "--options", OPTIONS,
            "--personas", roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, MODEL)),
            "--attach", str(attached), "--rounds", "3", "--dry-run", "--json",
            env={"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": stub.url},
        )  # fmt: skip
        assert stub.requests == []  # a dry run calls nothing
    assert result.code == 0, result.err
    data = result.json()
    assert 0 < data["cost_usd"] < data["uncached_cost_usd"]
    assert f"with prompt caching (${data['uncached_cost_usd']:.4f} uncached)" in data["message"]
    reads = {
        (call["persona"], call["round"]): call.get("cache_read_tokens", 0)
        for call in data["plan"]
        if call["phase"] == "persona"
    }
    # Round 1 warmed: all but the first persona read the brief; later rounds read what
    # each persona read the round before.
    assert sum(reads[slug, 1] > 0 for slug in SLUGS) == len(SLUGS) - 1
    assert all(reads[slug, number] > 0 for slug in SLUGS for number in (2, 3))
