"""A call of the run, in process: its in-flight file and progress row live exactly as long
as the call, whether it answers or is cancelled."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from dreamcontext_council.engine.model_calls.accounting import SYNTHESIS_CALLER, Ledger, PriceTable
from dreamcontext_council.engine.model_calls.caller import Caller
from dreamcontext_council.engine.model_calls.progress import LiveProgress
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet
from dreamcontext_council.engine.providers.scripted import DELAY_ENV
from dreamcontext_council.folder.in_flight import InFlight, in_flight_dir, read_in_flight

from .test_scripted_provider import material


def rendered(progress: LiveProgress) -> str:
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(progress._shown())
    return out.getvalue()


async def seen_in_flight(folder: Path) -> InFlight:
    """The one call in flight, once its file is written (a minute at most)."""
    for _ in range(6000):
        calls = read_in_flight(folder)
        if calls:
            [call] = calls
            return call
        await asyncio.sleep(0.01)
    raise AssertionError("no call in flight")


@pytest.fixture
def caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Caller:
    monkeypatch.setenv(DELAY_ENV, "0.5")  # longer than a write interval: the file is written
    folder = tmp_path / "council" / "council_AbC12345"
    folder.mkdir(parents=True)
    ledger = Ledger(folder / "usage.jsonl", PriceTable(), within=tmp_path)
    return Caller(ProviderSet(env={}), ledger, LiveProgress(io.StringIO()))


def test_a_call_outside_a_round_is_in_flight_until_it_answers(caller: Caller) -> None:
    prompt = prompts.persona_prompt("risk-auditor", "You audit risk.", ["risk"], material())
    assert isinstance(caller.progress, LiveProgress)
    progress = caller.progress

    async def scenario() -> tuple[InFlight, str, str]:
        asking = asyncio.create_task(
            caller.ask(
                parse_model("scripted"),
                prompt,
                persona=SYNTHESIS_CALLER,
                round=2,
                phase="synthesis",
            )
        )
        call = await seen_in_flight(caller.folder)
        screen = rendered(progress)
        completion, _ = await asking
        return call, screen, completion.text

    call, screen, answer = asyncio.run(scenario())

    assert (call.persona, call.phase, call.round, call.state) == (
        "(synthesis)",
        "synthesis",
        2,
        "streaming",
    )
    assert "(synthesis)" in screen and "thinking" in screen
    assert answer.startswith("### Executive Summary")
    assert read_in_flight(caller.folder) == []
    assert list(in_flight_dir(caller.folder).iterdir()) == []
    assert "(synthesis)" not in rendered(progress)  # the row went with the call


def test_a_cancelled_call_leaves_no_in_flight_file(caller: Caller) -> None:
    prompt = prompts.persona_prompt("risk-auditor", "You audit risk.", ["risk"], material())

    async def scenario() -> None:
        asking = asyncio.create_task(
            caller.ask(
                parse_model("scripted"), prompt, persona="risk-auditor", round=1, phase="opening"
            )
        )
        await seen_in_flight(caller.folder)
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking

    asyncio.run(scenario())

    assert read_in_flight(caller.folder) == []
    assert list(in_flight_dir(caller.folder).iterdir()) == []


def test_a_retry_starts_the_text_over_until_the_next_attempt(tmp_path: Path) -> None:
    from dreamcontext_council.engine.model_calls.live_call import LiveCall
    from dreamcontext_council.engine.model_calls.progress import QuietProgress
    from dreamcontext_council.engine.providers.base import RetryNotice

    folder = tmp_path / "council" / "council_AbC12345"
    folder.mkdir(parents=True)

    async def scenario() -> list[tuple[str, int, str]]:
        seen: list[tuple[str, int, str]] = []

        def look() -> None:
            [call] = read_in_flight(folder)
            seen.append((call.state, call.chars, call.detail))

        live = LiveCall(
            folder, within=tmp_path, progress=QuietProgress(), persona="a", phase="opening", round=1
        )
        live.begin()
        live.text("half an ans")
        live.retry(RetryNotice("connection reset", 1, 4, 3600.0))
        look()  # written at once, the text dropped
        live.text("A whole")  # the next attempt streams before its wait is over
        live.file.flush()
        look()
        live.retry(RetryNotice("connection reset", 2, 4, 0.0))
        await asyncio.sleep(0.01)  # the wait is over: the next attempt has begun
        look()
        live.end()
        return seen

    seen = asyncio.run(scenario())

    assert seen == [
        ("retrying", 0, "connection reset, retry 1/4 in 3600 s"),
        ("streaming", 7, ""),
        ("streaming", 0, ""),
    ]
    assert read_in_flight(folder) == []
