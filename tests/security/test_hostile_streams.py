"""A hostile model server or `command:` program cannot exhaust memory or hold a call open.

An answer is read up to its cap (`--max-answer-kb`, 200 KB by default) plus 64 KiB of room,
whatever comes: endless answer text as events, an endless JSON body, a gzip body that
inflates without end, a program that never stops printing. Past that, reading stops, the
connection is closed (the server sees it) or the program killed. A streamed call times out
when no event completes within the timeout, whatever other bytes keep coming.

The real SDKs call a local server that never ends its body (tests/hostile_server.py); what
the server sent before the client closed its connection is the measure of what was read.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path

import pytest
from council_run import Council, roster_file
from hostile_server import (
    HostileServer,
    endless_chat_deltas,
    endless_chat_json,
    endless_message_deltas,
    gzip_bomb,
    keep_alives,
    never_ended_event,
)
from offline import no_provider_environment as no_provider_environment  # autouse here

from dreamcontext_council.engine.protocol.answer_cap import cap_answer, size_of
from dreamcontext_council.engine.providers.base import Completion, Prompt
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet, ProviderSettings
from dreamcontext_council.engine.providers.sse import SseDecoder
from dreamcontext_council.errors import CouncilError

from .command_consent_support import workspace

KEY = "sk-test-hostile-0000"
DEFAULT_BUDGET = 200 * 1000 + 64 * 1024  # the default cap and its room, in characters
# What a client that stopped at its budget can have been sent: the budget's bytes as events
# (about 1.2 bytes of event per character of text) and what the sockets buffer on the way.
SENT_BOUND = 16 * 1024 * 1024
CEILING = 32 * 1024 * 1024  # what the server sends a client that never stops reading


def _complete(
    server: HostileServer, model: str, *, streamed: bool = True, timeout_s: float = 30.0
) -> Completion:
    base_urls = {"openai": server.openai_url} if model.startswith("openai:") else {}
    env = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}
    if model.startswith("anthropic:"):
        env["ANTHROPIC_BASE_URL"] = server.url
    providers = ProviderSet(
        ProviderSettings(timeout_s=timeout_s, max_retries=0, base_urls=base_urls), env=env
    )
    heard: list[str] = []
    prompt = Prompt("", "Answer at length.", on_text=heard.append if streamed else None)

    async def run() -> Completion:
        try:
            return await providers.complete(parse_model(model), prompt)
        finally:
            await providers.aclose()

    return asyncio.run(run())


# -- answers read under the cap -----------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("model", "body"),
    [
        ("openai:gpt-4o-mini", endless_chat_deltas()),
        ("anthropic:claude-haiku-4-5", endless_message_deltas()),
    ],
)
def test_endless_streamed_text_is_cut_at_the_cap_and_the_connection_closed(
    model: str, body: object
) -> None:
    with HostileServer(body, ceiling=CEILING) as server:  # type: ignore[arg-type]
        completion = _complete(server, model)
        server.wait_for(1)

    assert completion.cut
    assert DEFAULT_BUDGET < len(completion.text) <= DEFAULT_BUDGET + 16 * 1000
    assert server.gave_up == [True]
    assert server.sent[0] < SENT_BOUND


@pytest.mark.timeout(60)
@pytest.mark.parametrize("streamed", [True, False])
def test_an_endless_json_body_is_refused_once_past_the_budget(streamed: bool) -> None:
    with HostileServer(endless_chat_json(), content_type="application/json") as server:
        with pytest.raises(CouncilError) as caught:
            _complete(server, "openai:gpt-4o-mini", streamed=streamed)
        server.wait_for(1)

    assert f"more than {DEFAULT_BUDGET:,} bytes" in str(caught.value)
    assert "--max-answer-kb" in str(caught.value)
    assert server.gave_up == [True]
    assert server.sent[0] < SENT_BOUND


@pytest.mark.timeout(60)
@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"])
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_an_endless_error_body_is_read_only_in_part(model: str, compressed: bool) -> None:
    # The SDK reads an error response's body whole to say what the server said.
    body, headers = (
        (gzip_bomb(), {"Content-Encoding": "gzip"})
        if compressed
        else (
            endless_chat_json(),
            {},
        )
    )
    with HostileServer(
        body,
        content_type="application/json",
        headers=headers,
        status="500 Internal Server Error",
        ceiling=CEILING,
    ) as server:
        with pytest.raises(CouncilError) as caught:
            _complete(server, model)
        server.wait_for(1)

    assert "500" in str(caught.value)
    assert server.gave_up == [True]
    assert server.sent[0] < SENT_BOUND


@pytest.mark.timeout(60)
def test_a_gzip_body_is_counted_as_it_inflates() -> None:
    """Each byte sent inflates to about a thousand: the server sends 48 KB, a 48 MB body."""
    bomb = HostileServer(
        gzip_bomb(),
        content_type="application/json",
        headers={"Content-Encoding": "gzip"},
        ceiling=48 * 1024,
    )
    with bomb as server, pytest.raises(CouncilError) as caught:
        _complete(server, "openai:gpt-4o-mini", streamed=False)

    assert f"more than {DEFAULT_BUDGET:,} bytes" in str(caught.value)


ENDLESS_PROGRAM = """\
import os, sys
from pathlib import Path
here = Path(sys.argv[1])
(here / "pid").write_text(str(os.getpid()))
sys.stdin.read()
line = b"y\\n" * 32768
for _ in range({rounds}):
    sys.stdout.buffer.write(line)
sys.stdout.flush()
(here / "finished").write_text("printed it all")
"""


@pytest.mark.timeout(60)
def test_a_program_that_never_stops_printing_is_killed_at_the_cap(tmp_path: Path) -> None:
    script = tmp_path / "endless.py"
    script.write_text(ENDLESS_PROGRAM.format(rounds=CEILING // 65536), encoding="utf-8")
    command = f"command:{shlex.quote(sys.executable)} {shlex.quote(str(script))} {tmp_path}"
    providers = ProviderSet(ProviderSettings(timeout_s=30.0, max_retries=0), env=os.environ)

    async def run() -> Completion:
        try:
            return await providers.complete(parse_model(command), Prompt("", "q"))
        finally:
            await providers.aclose()

    completion = asyncio.run(run())

    assert completion.cut
    assert DEFAULT_BUDGET < len(completion.text) + 1 <= DEFAULT_BUDGET + 65536 + 1
    assert not (tmp_path / "finished").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(int((tmp_path / "pid").read_text()), 0)


@pytest.mark.timeout(120)
def test_a_run_against_an_endless_stream_stops_reading_each_answer(tmp_path: Path) -> None:
    """`council run --max-answer-kb 8` as a real process: every call's connection is closed
    once its answer passes 8 KB and the room; the answers, cut, break the contract."""
    council = workspace(tmp_path)
    roster = roster_file(
        tmp_path / "roster.json", {"insider": "openai:gpt-4o-mini", "critic": "openai:gpt-4o"}
    )
    with HostileServer(endless_chat_deltas(), ceiling=CEILING) as server:
        result = _run(council, roster, server.openai_url)
        requests = len(server.gave_up)

    assert result.code != 0
    assert "broke the contract" in result.out + result.err
    assert requests >= 2 and server.gave_up == [True] * requests
    assert max(server.sent) < SENT_BOUND


def _run(council: Council, roster: str, url: str) -> object:
    return council.proc(
        "run", "--topic", "Which database?", "--options", "pg=Postgres,my=MySQL",
        "--personas", roster, "--rounds", "1", "--yes", "--retries", "0",
        "--max-answer-kb", "8", "--base-url", url, env={"OPENAI_API_KEY": KEY},
    )  # fmt: skip


# -- a call with no completed event times out ---------------------------------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("model", "body"),
    [
        ("openai:gpt-4o-mini", keep_alives(0.1)),
        ("anthropic:claude-haiku-4-5", keep_alives(0.1)),
        ("openai:gpt-4o-mini", never_ended_event(0.1)),
        (
            "anthropic:claude-haiku-4-5",
            keep_alives(0.1, event=b'event: ping\ndata: {"type": "ping"}\n\n'),
        ),
    ],
    ids=["comments-openai", "comments-anthropic", "never-ended-event", "ping-events"],
)
def test_a_stream_that_completes_no_event_times_out(model: str, body: object) -> None:
    hostile = HostileServer(body)  # type: ignore[arg-type]
    with hostile as server, pytest.raises(CouncilError) as caught:
        _complete(server, model, timeout_s=1.0)

    assert "timed out after 1s" in str(caught.value)


@pytest.mark.timeout(60)
def test_an_event_longer_than_the_budget_is_a_malformed_answer() -> None:
    def one_long_line() -> object:
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "'
        while True:
            yield b"a" * 65536

    with HostileServer(one_long_line, ceiling=CEILING) as server:  # type: ignore[arg-type]
        with pytest.raises(CouncilError) as caught:
            _complete(server, "openai:gpt-4o-mini")
        server.wait_for(1)

    assert f"stream event over {DEFAULT_BUDGET:,} bytes" in str(caught.value)
    assert server.gave_up == [True]
    assert server.sent[0] < SENT_BOUND


def test_the_decoder_refuses_an_event_past_its_bound_however_it_is_split() -> None:
    decoder = SseDecoder(max_event=1000)
    decoder.feed(b"data: " + b"a" * 900)
    with pytest.raises(Exception, match="stream event over 1,000 bytes"):
        for _ in range(2):
            decoder.feed(b": a comment, not an end\n")
            decoder.feed(b"a" * 60)


# -- the cut --------------------------------------------------------------------------------


def test_an_answer_whose_reading_stopped_keeps_its_head_within_the_cap() -> None:
    text = "## Analysis\n\n```python\n" + "print('y')\n" * 5000  # a fence open when cut

    capped = cap_answer(
        text, 8, keep_block="verdict", kept_at="insider/raw/round-1.md", read_whole=False
    )

    assert capped.truncated and size_of(capped.text) <= 8000
    assert capped.text.startswith("## Analysis\n\n```python\nprint('y')\n")
    assert "reading stopped after 55,023 bytes" in capped.text
    assert "`insider/raw/round-1.md`" in capped.text
    assert capped.text.count("```") % 2 == 0


def test_an_answer_of_more_sections_than_markers_fit_is_still_cut_to_the_cap() -> None:
    text = "# a\n" * 100_000 + "```verdict\nstance: pg\n```\n"

    capped = cap_answer(text, 8, keep_block="verdict", kept_at="raw.md")

    assert capped.truncated and size_of(capped.text) <= 8000
