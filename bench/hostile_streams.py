"""Hostile streams: peak memory of a call against a body that never ends, and the SSE
decoder's time against its input's size.

Memory. Each case runs in a process of its own: it imports the providers, makes one ordinary
call (a short answer from a local server) and notes its peak RSS, the base; then makes the
hostile call and notes its peak RSS again. The bound checked is peak <= base + 4 x cap,
where the answer is read up to the cap plus 64 KiB. The cases: endless SSE text deltas
(OpenAI and Anthropic), an endless plain JSON body, a gzip body that inflates without end,
and a `command:` program printing `y` for ever (`yes`).

Time. The decoder is fed N and 2N bytes in 4 KiB pieces, as one event that never ends (the
worst case of a decoder that looks at its whole buffer for each piece) and as ordinary
events; the ratio of the times is printed (linear: about 2).

    python bench/hostile_streams.py
    python bench/hostile_streams.py --cap-kb 200 --decoder-mb 8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

CASES = ("sse-openai", "sse-anthropic", "plain-json", "gzip-bomb", "command-yes")
KEY = "sk-bench-hostile"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _child(case: str, cap_kb: int) -> None:
    """One case in this process: base RSS after an ordinary call, then the hostile call."""
    import hostile_server as hs
    from stub_server import StubServer

    from dreamcontext_council.engine.providers.base import Prompt
    from dreamcontext_council.engine.providers.models import parse_model
    from dreamcontext_council.engine.providers.registry import ProviderSet, ProviderSettings
    from dreamcontext_council.errors import CouncilError

    settings = {"timeout_s": 60.0, "max_retries": 0, "max_answer_kb": cap_kb}
    prompt = Prompt("", "Answer at length.", on_text=lambda piece: None)

    def call(model: str, env: dict[str, str], base_urls: dict[str, str]) -> str:
        providers = ProviderSet(ProviderSettings(**settings, base_urls=base_urls), env=env)  # type: ignore[arg-type]

        async def run() -> str:
            try:
                completion = await providers.complete(parse_model(model), prompt)
                return f"answer of {len(completion.text):,} characters, cut={completion.cut}"
            except CouncilError as exc:
                return f"failed: {str(exc)[:90]}"
            finally:
                await providers.aclose()

        return asyncio.run(run())

    api = "anthropic" if case == "sse-anthropic" else "openai"
    model = "anthropic:claude-haiku-4-5" if api == "anthropic" else "openai:gpt-4o-mini"

    def env_for(url: str) -> tuple[dict[str, str], dict[str, str]]:
        if api == "anthropic":
            return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url}, {}
        return {"OPENAI_API_KEY": KEY}, {"openai": f"{url}/v1"}

    with StubServer() as stub:  # the ordinary call: every part of a call imported and used
        call(model, *env_for(stub.url))
    base = _peak_mb()

    if case == "command-yes":
        yes = shutil.which("yes") or "yes"
        outcome = call(f"command:{shlex.quote(yes)}", {}, {})
    else:
        body, content_type, headers = {
            "sse-openai": (hs.endless_chat_deltas(), "text/event-stream", {}),
            "sse-anthropic": (hs.endless_message_deltas(), "text/event-stream", {}),
            "plain-json": (hs.endless_chat_json(), "application/json", {}),
            "gzip-bomb": (hs.gzip_bomb(), "application/json", {"Content-Encoding": "gzip"}),
        }[case]
        with hs.HostileServer(
            body, content_type=content_type, headers=headers, ceiling=1 << 40
        ) as server:
            outcome = call(model, *env_for(server.url))
    print(json.dumps({"base": base, "peak": _peak_mb(), "outcome": outcome}))


def memory(cap_kb: int) -> bool:
    bound = 4 * cap_kb * 1000 / (1024 * 1024)
    print(f"Peak RSS against endless bodies, cap {cap_kb:,} KB (bound: base + {bound:.1f} MB)")
    print(f"  {'case':<14} {'base MB':>8} {'peak MB':>8} {'growth':>8}  within  outcome")
    held = True
    for case in CASES:
        run = subprocess.run(
            [sys.executable, __file__, "--child", case, "--cap-kb", str(cap_kb)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if run.returncode != 0:
            print(f"  {case:<14} failed: {run.stderr.strip().splitlines()[-1:]}")
            held = False
            continue
        got = json.loads(run.stdout.strip().splitlines()[-1])
        growth = got["peak"] - got["base"]
        within = growth <= bound
        held &= within
        print(
            f"  {case:<14} {got['base']:8.1f} {got['peak']:8.1f} {growth:8.1f}  "
            f"{'yes' if within else 'NO':<6}  {got['outcome']}"
        )
    return held


def _decode_s(size: int, one_event: bool) -> float:
    from dreamcontext_council.engine.providers.sse import SseDecoder

    if one_event:
        body = b"data: " + b"a" * size
    else:
        event = b'data: {"choices": [{"delta": {"content": "lorem ipsum"}}]}\n\n'
        body = event * (size // len(event))
    pieces = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    decoder = SseDecoder(max_event=4 * size)
    started = time.perf_counter()
    for piece in pieces:
        decoder.feed(piece)
    return time.perf_counter() - started


def decoder(mb: int, turns: int = 5) -> bool:
    size = mb * 1024 * 1024
    print(f"SSE decoder, {mb} MB and {2 * mb} MB in 4 KiB pieces (median of {turns} paired turns)")
    held = True
    for one_event, label in ((True, "one unended event"), (False, "ordinary events")):
        pairs = sorted(
            (_decode_s(size, one_event), _decode_s(2 * size, one_event)) for _ in range(turns)
        )
        ratios = sorted(large / small for small, large in pairs)
        ratio = ratios[len(ratios) // 2]
        small = sorted(p[0] for p in pairs)[turns // 2]
        large = sorted(p[1] for p in pairs)[turns // 2]
        held &= ratio <= 2.5
        print(f"  {label:<18} {small:7.3f} s  {large:7.3f} s  ratio {ratio:4.2f}")
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap-kb", type=int, default=8000, help="the answer cap (KB)")
    parser.add_argument("--decoder-mb", type=int, default=8, help="the decoder's input (MB)")
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.cap_kb)
        return
    held = memory(args.cap_kb)
    print()
    held &= decoder(args.decoder_mb)
    print()
    print("All bounds held." if held else "A bound did not hold.")
    sys.exit(0 if held else 1)


if __name__ == "__main__":
    main()
