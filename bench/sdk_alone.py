"""The provider SDK's share of an eval's CPU: the same calls, made by the SDK alone.

`bench/eval_scale.py` starts this script in a child process once the eval has run. It
sends as many chat completions as the eval booked to the same stub, at the same
concurrency, through the `openai` client `OpenAIProvider` builds (on the same HTTP stack)
and the request path it calls (`client.post` of a chat request), with the persona prompts the
eval recorded in its `prompts/round-N.json` files, in turn. Where the revision streams
its answers (its provider has `send_streamed`), so do these calls: the same streamed
request, its body read as it comes, without the engine's reading of the events. No
debate is read or written: the child's CPU is what the SDK, its HTTP stack and the event
loop cost for those calls, which no change to the engine can take away.

    python bench/sdk_alone.py --url URL --prompts ROOT --calls N --concurrency C
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from dreamcontext_council.engine.providers.base import Prompt
from dreamcontext_council.engine.providers.openai_provider import (
    CHAT_OPTIONS,
    CHAT_PATH,
    OpenAIProvider,
    chat_request,
)

# The output budget of a persona answer in the bench's debates.
MAX_TOKENS = 4096


def recorded_prompts(root: Path) -> list[Prompt]:
    """Every persona prompt the eval under `root` sent, as its prompts files hold them."""
    found = []
    for path in sorted(root.glob("council/*/*/prompts/round-*.json")):
        for call in json.loads(path.read_text(encoding="utf-8"))["calls"]:
            found.append(Prompt(call["system"], call["user"], max_tokens=MAX_TOKENS))
    if not found:
        raise SystemExit(f"no prompts/round-N.json under {root}: run the eval first")
    return found


async def send_all(url: str, prompts: list[Prompt], calls: int, concurrency: int) -> int:
    """Make `calls` requests, at most `concurrency` at once; the bytes answered."""
    import openai

    provider = OpenAIProvider(api_key="bench-key", base_url=url, timeout_s=120)
    if hasattr(provider, "client_options"):  # on the HTTP stack the eval used
        client: Any = provider.build_client(provider.client_options())
    else:  # a revision from before the stack was chosen: the SDK's own client
        client = openai.AsyncOpenAI(api_key="bench-key", base_url=url, max_retries=0, timeout=120)
    gate = asyncio.Semaphore(concurrency)
    streamed = hasattr(OpenAIProvider, "send_streamed")

    async def one(n: int) -> int:
        request = chat_request(prompts[n % len(prompts)], "bench-model", custom_server=True)
        async with gate:
            if not streamed:
                body = await client.post(
                    CHAT_PATH, body=request, cast_to=bytes, options=CHAT_OPTIONS
                )
                return len(body)
            request |= {"stream": True, "stream_options": {"include_usage": True}}
            stream = await client.post(
                CHAT_PATH,
                body=request,
                cast_to=object,
                options=CHAT_OPTIONS,
                stream=True,
                stream_cls=openai.AsyncStream[object],
            )
            try:
                return sum([len(chunk) async for chunk in stream.response.aiter_bytes()])
            finally:
                await stream.close()

    try:
        return sum(await asyncio.gather(*(one(n) for n in range(calls))))
    finally:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the stub's OpenAI base URL")
    parser.add_argument("--prompts", type=Path, required=True, help="the eval's root folder")
    parser.add_argument("--calls", type=int, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    args = parser.parse_args()
    prompts = recorded_prompts(args.prompts)
    answered = asyncio.run(send_all(args.url, prompts, args.calls, args.concurrency))
    print(f"sdk alone: {args.calls} calls, {len(prompts)} prompts, {answered} bytes answered")


if __name__ == "__main__":
    main()
