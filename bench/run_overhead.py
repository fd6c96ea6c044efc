"""How much time `council run` adds on top of the model calls it waits for.

A debate of 8 personas x 3 rounds runs twice with the same fixed latency per call:
once on the scripted provider (DREAMCONTEXT_SCRIPTED_DELAY) and once through the
real `openai` SDK against the local stub server (tests/stub_server.py, 127.0.0.1
only) delaying every answer by the same amount. The convergence check answers
CONTINUE so round 3 runs.

The figure is wall time ÷ critical path, where the critical path is what no engine
could avoid: each round's slowest call, plus the check, plus synthesis, all taken
from the latencies in usage.jsonl. The target is 1.05 or less.

The default latency, 2 s a call, is still fast for a model writing a 1,000-token
answer; the engine's own cost is a fixed few hundred milliseconds per debate (file
writes with fsync between rounds), so shorter latencies give larger ratios:
`--latency 0.2` shows that stress case.

Both runs happen in this process after a small warm-up run, so interpreter start-up
and first imports are not counted; they are printed apart.

    .venv/bin/python bench/run_overhead.py [--personas 8] [--rounds 3] [--latency 2]
                                           [--dir PATH] [--repeat 3] [--what-if]

`--what-if` runs the scripted debate again with parts of the storage layer switched
off in this process only (the live file, fsync), to show where the overhead goes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from council_stub import StubServer, bench_env, responder, write_roster

from dreamcontext_council.engine.providers.scripted import DELAY_ENV
from dreamcontext_council.engine.setup.launch import launch
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.rules.usage import calls_of

TARGET = 1.05
TOPIC = "Should we migrate the session store from Redis to Postgres?"
OPTIONS = "A=Migrate now,B=Stay on Redis"
PERSONA_PHASES = ("opening", "cross-exam", "rebuttal")


@dataclass
class Figures:
    """One measured run."""

    name: str
    wall_s: float
    cpu_s: float
    critical_s: float
    calls: int
    rounds: int
    checks: int

    @property
    def ratio(self) -> float:
        return self.wall_s / self.critical_s if self.critical_s else float("inf")


def critical_path(records: list[dict[str, Any]]) -> tuple[float, int, int]:
    """Sum of each round's slowest persona call, the checks and synthesis; rounds; checks."""
    slowest: dict[int, float] = {}
    serial = 0.0
    checks = 0
    for record in records:
        latency = float(record["latency_s"])
        if record["phase"] in PERSONA_PHASES:
            slowest[record["round"]] = max(slowest.get(record["round"], 0.0), latency)
        elif record["phase"] in ("check", "synthesis"):
            serial += latency
            checks += record["phase"] == "check"
    return sum(slowest.values()) + serial, len(slowest), checks


@contextmanager
def scripted_delay(seconds: float) -> Iterator[None]:
    previous = os.environ.get(DELAY_ENV)
    os.environ[DELAY_ENV] = str(seconds)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(DELAY_ENV, None)
        else:
            os.environ[DELAY_ENV] = previous


def run_debate(
    base: Path, *, personas: int, rounds: int, model: str, base_url: str | None = None
) -> tuple[float, float, Path, str]:
    """Run one debate in this process; (wall seconds, CPU seconds, root, debate id)."""
    folder = Path(tempfile.mkdtemp(prefix="run-overhead-", dir=base))
    root = folder / "_dream_context"
    env = bench_env(folder)
    request = Launch(
        topic=TOPIC,
        personas_spec=write_roster(folder, personas, model),
        options_spec=OPTIONS,
        rounds=rounds,
        model=model,
        check_model=model,
        synth_model=model,
        base_url=base_url,
        concurrency=personas,  # every persona of a round in flight at once
        retries=0,
        quiet=True,
        yes=True,
        root=str(root),
        env=env,
    )
    started, cpu = time.perf_counter(), time.process_time()
    result = asyncio.run(launch(request, echo=lambda _line: None))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if result["stopped"] != "complete":
        raise SystemExit(f"the {model} run stopped early: {result['message']}")
    return wall, cpu, root, str(result["id"])


def measure(name: str, run: tuple[float, float, Path, str]) -> Figures:
    wall, cpu, root, debate_id = run
    usage = root / "council" / debate_id / "usage.jsonl"
    records = calls_of(json.loads(line) for line in usage.read_text(encoding="utf-8").splitlines())
    critical, rounds, checks = critical_path(records)
    return Figures(name, wall, cpu, critical, len(records), rounds, checks)


@contextmanager
def switched_off(what: str) -> Iterator[None]:
    """For --what-if: skip the live file or fsync in this process while the block runs."""
    from dreamcontext_council.actions import live_state

    if what == "live file":
        saved = live_state.write_live
        live_state.write_live = lambda *_args, **_kw: None  # type: ignore[assignment]
        try:
            yield
        finally:
            live_state.write_live = saved  # type: ignore[assignment]
    else:
        saved_fsync = os.fsync
        os.fsync = lambda _fd: None  # type: ignore[assignment]
        try:
            yield
        finally:
            os.fsync = saved_fsync


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--personas", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per call")
    parser.add_argument("--dir", type=Path, default=None, help="where the debates are written")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per case; the best one is shown"
    )
    parser.add_argument(
        "--what-if", action="store_true", help="also run with the live file / fsync switched off"
    )
    args = parser.parse_args()
    base = args.dir or Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    with StubServer(responder=responder) as warm:
        run_debate(base, personas=2, rounds=1, model="scripted")
        run_debate(base, personas=2, rounds=1, model="openai:bench-model", base_url=warm.openai_url)
    warm_up = time.perf_counter() - started

    def best(name: str, runs: list[Figures]) -> Figures:
        chosen = min(runs, key=lambda f: f.ratio)  # the least disturbed run on a shared machine
        chosen.name = name
        return chosen

    results = []
    with scripted_delay(args.latency):
        results.append(
            best(
                "scripted",
                [
                    measure(
                        "",
                        run_debate(
                            base, personas=args.personas, rounds=args.rounds, model="scripted"
                        ),
                    )
                    for _ in range(args.repeat)
                ],
            )
        )
    with StubServer(responder=responder, default_delay_s=args.latency) as stub:
        results.append(
            best(
                "openai SDK → stub",
                [
                    measure(
                        "",
                        run_debate(
                            base,
                            personas=args.personas,
                            rounds=args.rounds,
                            model="openai:bench-model",
                            base_url=stub.openai_url,
                        ),
                    )
                    for _ in range(args.repeat)
                ],
            )
        )
    if args.what_if:
        for parts in (("live file",), ("fsync",), ("live file", "fsync")):
            runs = []
            for _ in range(args.repeat):
                with scripted_delay(args.latency), contextlib.ExitStack() as stack:
                    for part in parts:
                        stack.enter_context(switched_off(part))
                    run = run_debate(
                        base, personas=args.personas, rounds=args.rounds, model="scripted"
                    )
                runs.append(measure("", run))
            results.append(best("no " + " or ".join(parts), runs))

    nominal = (args.rounds + 2) * args.latency
    print(
        f"council run overhead: {args.personas} personas x {args.rounds} rounds, "
        f"{args.latency:g}s per call, best of {args.repeat} runs, debates under {base}"
    )
    print(
        f"(warm-up of imports and templates, not counted: {warm_up:.2f}s; nominal critical "
        f"path {nominal:.2f}s; CPU includes the stub server's threads in the openai run)"
    )
    print()
    width = 22
    print(f"{'':22}" + "".join(f"{f.name:>{width}}" for f in results))
    rows = [
        ("calls", [str(f.calls) for f in results]),
        ("rounds / checks", [f"{f.rounds} / {f.checks}" for f in results]),
        ("wall time", [f"{f.wall_s:.3f}s" for f in results]),
        ("CPU time", [f"{f.cpu_s:.3f}s" for f in results]),
        ("critical path", [f"{f.critical_s:.3f}s" for f in results]),
        ("overhead", [f"{f.wall_s - f.critical_s:.3f}s" for f in results]),
        ("wall ÷ critical path", [f"{f.ratio:.3f}" for f in results]),
        (f"meets {TARGET}", ["yes" if f.ratio <= TARGET else "no" for f in results]),
    ]
    for label, cells in rows:
        print(f"{label:22}" + "".join(f"{c:>{width}}" for c in cells))
    for f in results:
        if f.rounds != args.rounds:
            raise SystemExit(f"{f.name}: only {f.rounds} rounds ran; the check must say CONTINUE")


if __name__ == "__main__":
    main()
