"""What streaming an answer costs the calling process, against a plain call of the same answer.

A stub server in a child process (tests/stub_server.py, 127.0.0.1 only) answers every
call with the same text, in pieces of `--chars` characters (about a token each, as real
models stream); the measured process makes `--calls` calls through `AnthropicProvider`
and `OpenAIProvider` (default HTTP stack, or `DREAMCONTEXT_HTTP`), once plainly and once
with a listener (streamed), and prints its CPU per call and per streamed piece.

    python bench/stream_cost.py --answer 3000 --chars 4 --calls 100 [--gap 0.002]

With `--gap` the stub waits that long before every piece after the first, so each piece
comes in a read of its own, as a real server's tokens do; without it the pieces come as
fast as the stub can send them, and a read often holds many.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from stub_server import StubResponse, StubServer  # noqa: E402

from dreamcontext_council.engine.providers.anthropic_provider import (  # noqa: E402
    AnthropicProvider,
)
from dreamcontext_council.engine.providers.base import Prompt  # noqa: E402
from dreamcontext_council.engine.providers.openai_provider import OpenAIProvider  # noqa: E402
from dreamcontext_council.engine.providers.sdk_provider import SdkProvider  # noqa: E402

SENTENCE = "The council weighs the evidence on caching sessions in Redis. "


def answer_text(length: int) -> str:
    return (SENTENCE * (length // len(SENTENCE) + 1))[:length]


def serve(length: int, chars: int, gap: float) -> None:
    """Answer every call with the same text in pieces, `gap` seconds apart, until standard
    input closes."""
    text = answer_text(length)
    pieces = [text[i : i + chars] for i in range(0, len(text), chars)]
    answer = StubResponse.streamed(text, pieces=pieces, stall_s=gap)
    with StubServer(lambda _: answer, keep_alive=True) as stub:
        print(f"port {stub.port}", flush=True)
        sys.stdin.read()


async def cpu_per_call(provider: SdkProvider, calls: int, streamed: bool, length: int) -> float:
    """Seconds of this process's CPU per call, `calls` calls eight at a time."""
    heard: list[str] = []
    prompt = Prompt("You are the Operator.", "Should we cache? " * 100, on_text=None)
    if streamed:
        prompt = Prompt(prompt.system, prompt.user, on_text=heard.append)
    gate = asyncio.Semaphore(8)

    async def one() -> int:
        async with gate:
            return len((await provider.complete(prompt, "bench-model")).text)

    await one()  # connections and imports, not counted
    started = time.process_time()
    lengths = await asyncio.gather(*(one() for _ in range(calls)))
    spent = time.process_time() - started
    if set(lengths) != {length}:
        raise SystemExit(f"an answer came back with the wrong length: {set(lengths)}")
    return spent / calls


async def measure(port: int, calls: int, length: int, chars: int) -> None:
    pieces = -(-length // chars)
    print(f"{calls} calls per case; answer of {length} characters in {pieces} pieces")
    print(f"{'':24}{'plain':>10}{'streamed':>10}{'extra/piece':>13}")
    for cls in (AnthropicProvider, OpenAIProvider):
        base = f"http://127.0.0.1:{port}" + ("/v1" if cls is OpenAIProvider else "")
        provider = cls(api_key="bench-key", base_url=base, timeout_s=60)
        try:
            plain = await cpu_per_call(provider, calls, False, length)
            streamed = await cpu_per_call(provider, calls, True, length)
        finally:
            await provider.aclose()
        extra = (streamed - plain) / pieces * 1e6
        label = f"{provider.name} ({provider.http_stack})"
        print(f"{label:24}{plain * 1e3:>8.2f}ms{streamed * 1e3:>8.2f}ms{extra:>11.1f}µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answer", type=int, default=3000, help="characters per answer")
    parser.add_argument("--chars", type=int, default=4, help="characters per streamed piece")
    parser.add_argument("--calls", type=int, default=100, help="calls per case")
    parser.add_argument(
        "--gap",
        type=float,
        default=0.0,
        help="seconds between two pieces (0: as fast as the stub sends; a few ms: each piece "
        "its own read, as from a real server)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.answer, args.chars, args.gap)
        return
    command = [sys.executable, __file__, "--serve", "--answer", str(args.answer)]
    command += ["--chars", str(args.chars), "--gap", str(args.gap)]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as stub:
        assert stub.stdout is not None and stub.stdin is not None
        first = stub.stdout.readline().split()
        if len(first) != 2 or first[0] != "port":
            stub.kill()
            raise SystemExit(f"the stub server did not start: {first!r}")
        try:
            asyncio.run(measure(int(first[1]), args.calls, args.answer, args.chars))
        finally:
            stub.stdin.close()


if __name__ == "__main__":
    main()
