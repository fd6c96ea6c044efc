"""usage.jsonl, totals in `show` and `board`, the price table, and the budget stops."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dreamcontext_council.errors import EXIT_STOPPED

from .support import OPTIONS, TOPIC, Council, ok_answers

SCRIPTED_PRICE = {"scripted": [1000.0, 2000.0]}  # dollars per million tokens, in and out


def prices_file(tmp_path: Path, table: dict[str, list[float]]) -> str:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    return str(path)


def test_usage_totals_show_in_show_and_board(council: Council) -> None:
    debate_id = council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1").last_line
    records = council.usage(debate_id)
    tokens_in = sum(r["input_tokens"] for r in records)
    tokens_out = sum(r["output_tokens"] for r in records)
    line = (
        f"{len(records)} calls · {tokens_in:,} in / {tokens_out:,} out tokens · $0.0000 · scripted"
    )

    show = council("show", debate_id)
    board = council("board", debate_id, "--plain")
    board_json = council("board", debate_id, "--json").json()

    assert line in show.out
    assert line in board.out
    assert board_json["usage"]["calls"] == len(records)
    assert board_json["usage"]["input_tokens"] == tokens_in
    assert council("show", debate_id, "--json").json()["usage"]["output_tokens"] == tokens_out


def test_a_price_table_override_changes_cost(council: Council, tmp_path: Path) -> None:
    prices = prices_file(tmp_path, SCRIPTED_PRICE)

    result = council("run", "--topic", TOPIC, "--rounds", "1", "--prices", prices, "--json")

    assert result.code == 0, result.err
    records = council.usage(result.json()["id"])
    for record in records:
        expected = (record["input_tokens"] * 1000 + record["output_tokens"] * 2000) / 1_000_000
        assert record["cost_usd"] == pytest.approx(expected, abs=1e-6)
    total = sum(r["cost_usd"] for r in records)
    assert total > 0
    assert result.json()["cost_usd"] == pytest.approx(total, abs=1e-5)
    assert f"${total:.4f}" in council("show", result.json()["id"]).out


def test_a_price_table_through_the_environment(council: Council, tmp_path: Path) -> None:
    prices = prices_file(tmp_path, SCRIPTED_PRICE)

    result = council("run", "--topic", TOPIC, "--rounds", "1", env={"DREAMCONTEXT_PRICES": prices})

    assert result.code == 0, result.err
    assert all(r["cost_usd"] > 0 for r in council.usage(result.last_line))


def test_a_broken_price_table_is_refused_before_anything_is_written(
    council: Council, tmp_path: Path
) -> None:
    path = tmp_path / "prices.json"
    path.write_text("{not json", encoding="utf-8")

    result = council("run", "--topic", TOPIC, "--prices", str(path))

    assert result.code == 2
    assert "price table" in result.err
    assert not council.root.exists()


def test_max_calls_stops_cleanly_and_the_rerun_finishes(council: Council) -> None:
    # With a delay the four openings are in flight together: the budget must count them.
    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--max-calls",
        "3",
        "--json",
        env={"DREAMCONTEXT_SCRIPTED_DELAY": "0.05"},
    )

    assert result.code == EXIT_STOPPED, result.err
    data = result.json()
    debate_id = data["id"]
    assert data["stopped"] == "budget"
    assert "--max-calls 3" in data["message"]
    assert data["calls"] == 3
    assert len(council.usage(debate_id)) == 3  # never more calls than allowed
    assert council.status(debate_id) == "round_1_running"
    assert "## Run stopped by budget" in council.log(debate_id)
    # The cap is remembered: a bare rerun makes at most 3 more calls.
    bare = council("run", debate_id, "--json")
    assert bare.json()["stopped"] == "budget" and bare.json()["calls"] == 3

    again = council("run", debate_id, "--max-calls", "100")

    assert again.code == 0, again.err
    assert council.status(debate_id) == "complete"
    assert max(ok_answers(council.usage(debate_id)).values()) == 1


def test_max_calls_counts_only_this_run(council: Council) -> None:
    debate_id = council("run", "--topic", TOPIC, "--max-calls", "4").last_line
    for _ in range(10):
        if council.status(debate_id) == "complete":
            break
        result = council("run", debate_id, "--max-calls", "4")
        done = council.status(debate_id) == "complete"
        assert result.code == (0 if done else EXIT_STOPPED), result.err
    assert council.status(debate_id) == "complete"
    counts = ok_answers(council.usage(debate_id))
    assert set(counts.values()) == {1}


def test_max_cost_stops_before_crossing_and_the_rerun_finishes(
    council: Council, tmp_path: Path
) -> None:
    prices = prices_file(tmp_path, SCRIPTED_PRICE)

    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--prices",
        prices,
        "--max-cost",
        "6",
        "--json",
    )

    assert result.code == EXIT_STOPPED, result.err
    data = result.json()
    debate_id = data["id"]
    assert data["stopped"] == "budget"
    assert "--max-cost $6.00" in data["message"]
    spent = sum(r["cost_usd"] for r in council.usage(debate_id))
    assert 0 < spent <= 6
    assert council.status(debate_id) != "complete"

    again = council("run", debate_id, "--prices", prices, "--max-cost", "1000")

    assert again.code == 0, again.err
    assert council.status(debate_id) == "complete"
    assert max(ok_answers(council.usage(debate_id)).values()) == 1


def test_max_calls_zero_calls_nothing(council: Council) -> None:
    result = council("run", "--topic", TOPIC, "--max-calls", "0", "--json")

    assert result.code == EXIT_STOPPED, result.err
    assert result.json()["stopped"] == "budget"
    assert council.usage(result.json()["id"]) == []


def test_a_resume_whose_recorded_budget_allows_no_call_says_so_and_writes_nothing(
    council: Council,
) -> None:
    first = council("run", "--topic", TOPIC, "--rounds", "2", "--max-calls", "0", "--json")
    assert first.code == EXIT_STOPPED, first.err
    debate_id = first.json()["id"]
    assert council.meta(debate_id)["run"]["max_calls"] == 0  # recorded: it travels with git
    before = council.tree()

    again = council("run", debate_id)

    assert again.code == 2
    [line] = again.err.strip().splitlines()
    assert "--max-calls 0 (recorded by an earlier run) allows none" in line, line
    assert f"`dreamcontext council run {debate_id} --max-calls N`" in line, line
    assert council.tree() == before
    raised = council("run", debate_id, "--max-calls", "100")
    assert raised.code == 0, raised.err
    assert council.status(debate_id) == "complete"


def test_a_pending_line_is_fsynced_and_the_line_settling_it_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamcontext_council.engine.model_calls.accounting import (
        PENDING,
        Ledger,
        PriceTable,
        with_outcome,
    )
    from dreamcontext_council.engine.providers.models import parse_model

    usage = tmp_path / "usage.jsonl"
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}") == str(usage):
            synced.append(len(usage.read_bytes().splitlines()))  # lines on disk at the fsync
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    ledger = Ledger(usage, PriceTable())
    spec = parse_model("scripted")

    def line(outcome: str) -> str:
        error = "boom" if outcome == "failed" else None
        return ledger.record(
            spec=spec,
            persona="alpha",
            round_number=1,
            phase="round",
            completion=None,
            outcome=outcome,
            error=error,
        )

    answered = line("ok")
    ledger.append(with_outcome(answered, PENDING))  # the call returned: paid for
    ledger.append(answered)  # its answer is on disk
    ledger.append(line("failed"))  # a call that failed: its only line

    outcomes = [json.loads(x)["outcome"] for x in usage.read_text(encoding="utf-8").splitlines()]
    assert outcomes == ["pending", "ok", "failed"]
    assert synced == [1, 3]  # the pending line and the lone failed line, not the `ok`
