"""What a call's in-flight file and progress row cost the run, alone: CPU per call.

`--calls` calls of `--latency` seconds run at once on one event loop, each answering in
`--pieces` pieces at its end, first bare, then each inside the `LiveCall` the run gives it
(its in-flight file written by the write thread once the first interval is over, then
removed). The difference in this process's CPU (user + system, every thread) is what the
files cost; best of `--repeat` runs a side, taken in turn. Compare it with the engine CPU
per call of `bench/eval_scale.py --scripted` (CPU per debate ÷ 10 calls).

    .venv/bin/python bench/in_flight_cost.py [--calls 200] [--latency 0.5] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
from pathlib import Path

from dreamcontext_council.engine.model_calls.live_call import LiveCall
from dreamcontext_council.engine.model_calls.progress import QuietProgress

PIECE = "### Reasoning\n- A line of an answer, about as long as a paragraph's first line.\n\n"


async def one_call(folder: Path, root: Path, args: argparse.Namespace, live: bool) -> None:
    call = None
    if live:
        call = LiveCall(
            folder, within=root, progress=QuietProgress(), persona="a", phase="opening", round=1
        )
        call.begin()
    try:
        await asyncio.sleep(args.latency)
        for _ in range(args.pieces):
            if call is not None:
                call.text(PIECE)
    finally:
        if call is not None:
            call.end()


async def calls(folders: list[Path], root: Path, args: argparse.Namespace, live: bool) -> None:
    await asyncio.gather(
        *(one_call(folders[n % len(folders)], root, args, live) for n in range(args.calls))
    )


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls at once")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per call")
    parser.add_argument("--pieces", type=int, default=8, help="pieces of text per answer")
    parser.add_argument("--repeat", type=int, default=5, help="runs a side; the best counts")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="in-flight-cost-"))
    folders = [root / "council" / f"council_Bench{n:03d}" for n in range(20)]
    for folder in folders:
        folder.mkdir(parents=True)
    best = {False: float("inf"), True: float("inf")}
    for _ in range(args.repeat):
        for live in (False, True):
            before = cpu_s()
            asyncio.run(calls(folders, root, args, live))
            best[live] = min(best[live], cpu_s() - before)
    left = sorted(p.name for p in root.rglob("*.json"))
    assert not left, f"in-flight files left: {left}"
    per_call_ms = (best[True] - best[False]) / args.calls * 1000
    print(
        f"{args.calls} calls of {args.latency:g}s, {args.pieces} pieces each, best of {args.repeat}"
    )
    print(f"bare calls            {best[False]:.3f}s CPU")
    print(f"with in-flight files  {best[True]:.3f}s CPU")
    print(f"in_flight_cost: cpu_per_call={per_call_ms:.3f}ms")


if __name__ == "__main__":
    main()
