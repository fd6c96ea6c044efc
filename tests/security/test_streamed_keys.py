"""A key a model echoes while its answer streams never reaches the listener, even split
between two pieces of the stream, and the pieces still join to the (hidden) answer."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubResponse, StubServer

from dreamcontext_council.engine.providers.base import Completion, Prompt, RetryNotice
from dreamcontext_council.engine.providers.keys import StreamedKeyHider, hide_keys
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet, ProviderSettings
from dreamcontext_council.engine.providers.retry import RetryPolicy

KEY = "sk-proj-ECHOEDKEY-1a2b3c4d5e6f"
OTHER = "gw-ECHOEDKEY-77aa88bb99cc"
MARKER = "ECHOEDKEY"
ANSWER = f"My key is {KEY}; the gateway's is {OTHER}. Also sk-proj-ECHO, not a key."


def _pieces(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(ANSWER)), max_size=20))
def test_no_piece_told_carries_a_key_however_the_answer_is_split(cuts: list[int]) -> None:
    told: list[str] = []
    hider = StreamedKeyHider(told.append, (KEY, OTHER))

    for piece in _pieces(ANSWER, cuts):
        hider.text(piece)
        assert MARKER not in "".join(told)
    hider.finish()

    assert "".join(told) == hide_keys(ANSWER, (KEY, OTHER))


def test_text_held_for_a_failed_attempt_is_dropped_on_restart() -> None:
    told: list[str] = []
    hider = StreamedKeyHider(told.append, (KEY,))

    hider.text("Half a key: sk-proj-ECHO")
    hider.restart()
    hider.text("A clean answer.")
    hider.finish()

    assert told == ["Half a key: ", "A clean answer."]


def _complete(server: StubServer, prompt: Prompt) -> Completion:
    providers = ProviderSet(
        ProviderSettings(base_urls={"openai": server.openai_url}),
        env={"OPENAI_API_KEY": KEY, "MY_GATEWAY_API_KEY": OTHER},
        retry=RetryPolicy(base_delay_s=0.0, jitter=lambda: 0.0),
    )

    async def run() -> Completion:
        try:
            return await providers.complete(parse_model("openai:gpt-4o-mini"), prompt)
        finally:
            await providers.aclose()

    return asyncio.run(run())


def test_a_streamed_answer_that_echoes_keys_tells_none_of_them() -> None:
    split_at = ANSWER.index(KEY) + 9  # the key in two pieces
    pieces = [ANSWER[:split_at], ANSWER[split_at:]]
    heard: list[str | RetryNotice] = []
    cut = StubResponse.streamed(ANSWER, pieces=pieces, cut_after=1, cut="drop")
    whole = StubResponse.streamed(ANSWER, pieces=pieces)
    with StubServer() as server:
        server.enqueue(cut, whole)
        completion = _complete(server, Prompt("", "q", on_text=heard.append, on_retry=heard.append))

    told = [h for h in heard if isinstance(h, str)]
    assert MARKER not in "".join(told)
    assert MARKER not in completion.text and "[redacted]" in completion.text
    [notice] = [h for h in heard if isinstance(h, RetryNotice)]
    after = heard[heard.index(notice) + 1 :]
    assert "".join(str(h) for h in after) == completion.text
