"""Is the engine the bottleneck of `council eval` at scale?

`dreamcontext council eval` runs N questions (200 by default), each a compact debate of
4 personas x 2 rounds plus synthesis and the solo baseline, through the real `openai`
SDK against the local stub server, which answers every call after a fixed latency (0.5 s)
and runs in its own process (bench/council_stub.py). The eval runs as a child process,
exactly as a user starts it, with a provider concurrency of 64.

- **wall ÷ floor**: the child's wall time (start-up included) over the floor no engine
  could beat, calls x latency ÷ concurrency, the calls counted from every debate's
  usage.jsonl. Target 1.5 or less.
- **engine CPU per debate**: the child's user + system CPU time (from `wait4`, so the
  stub's threads are not in it) ÷ N. Nothing is subtracted: interpreter start-up,
  imports, the SDK's HTTP and JSON work and writing the results are all in it; the
  start-up alone (`eval --help`, measured the same way) is printed apart. Target 0.05 s.
- **peak RSS**: the child's `ru_maxrss`. Target under 300 MiB.
- **the SDK's calls alone** (bench/sdk_alone.py): the same number of calls to the same stub
  at the same concurrency, made by the `openai` client alone with the prompts the eval
  recorded, in a child of their own. Its CPU per debate is the part of the engine CPU
  that the provider SDK, its HTTP stack and the event loop cost; the rest is the engine's.

    .venv/bin/python bench/eval_scale.py [--debates 200] [--latency 0.5]
                                         [--concurrency 64] [--parallel 128] [--dir PATH]
                                         [--before REV] [--repeat N]

With `--scripted` the personas answer through the built-in scripted provider instead, after
the same latency, with no HTTP and no SDK: the engine's CPU measured directly (the SDK-alone
run and its rows are left out). That provider is not held to `--concurrency`, so there is
no floor, and the last line reads `eval_scale --scripted: engine_cpu_per_debate=...`.

With `--before REV` the same workload also runs on that older revision (exported with
`git archive`, run by this interpreter), the two sides in turn `--repeat` times; each side's
least disturbed run (lowest CPU) is printed beside the other's, with their ratio, and the
median of the ratios of the two runs of each turn (the sides swap order every turn).
`--patch FILE` applies a patch to that revision first: `--before HEAD --patch
bench/patches/without-streaming.patch` measures this tree against itself with every
call asked plainly and no in-flight file or live row, which is what streaming costs.

The last line reads `eval_scale: wall/floor=X.XX engine_cpu_per_debate=Y.YYYs peak_rss=ZMiB`.
With `--profile FILE` the child runs under cProfile (on CPU time) and writes its stats to FILE (the
figures are then those of a profiled run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from council_stub import BENCH_MODEL, StubProcess, bench_env, export_revision, write_roster

import dreamcontext_council
from dreamcontext_council.engine.providers.scripted import DELAY_ENV
from dreamcontext_council.rules.usage import calls_of

TARGETS = {"wall/floor": 1.5, "cpu per debate": 0.05, "peak MiB": 300}
# cProfile on CPU time, not wall time: waiting on the stub would otherwise fill the top.
PROFILED = (
    "import cProfile, runpy, sys, time\n"
    "out = sys.argv.pop(1)\n"
    "profile = cProfile.Profile(time.process_time)\n"
    "try:\n"
    "    profile.runcall(runpy.run_module, 'dreamcontext_council', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "profile.dump_stats(out)\n"
)
PERSONAS = 4
ROUNDS = 2


@dataclass
class Child:
    """What one child process cost."""

    wall_s: float
    cpu_s: float
    system_s: float
    peak_mib: float
    code: int
    out: str


def run_child(argv: list[str], env: dict[str, str], cwd: Path) -> Child:
    """Run `argv` to its end; its wall time, CPU time (user + system) and peak RSS."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        out = output.read().decode("utf-8", "replace")
    return Child(
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_stime,
        usage.ru_maxrss / 1024,
        process.returncode,
        out,
    )


def write_set(path: Path, count: int) -> None:
    """`count` two-option questions whose known answer is A."""
    with path.open("w", encoding="utf-8") as out:
        for n in range(1, count + 1):
            line = {
                "id": f"q{n:04d}",
                "question": f"Should service {n} move its session store from Redis to Postgres?",
                "options": {"A": "Migrate now", "B": "Stay on Redis"},
                "answer": "A",
            }
            out.write(json.dumps(line) + "\n")


def count_calls(root: Path) -> tuple[int, int]:
    """Calls booked in every debate's usage.jsonl, and the number of debates."""
    calls = debates = 0
    for usage in sorted((root / "council").glob("*/usage.jsonl")):
        debates += 1
        lines = usage.read_text(encoding="utf-8").splitlines()
        calls += len(calls_of(json.loads(line) for line in lines if line.strip()))
    return calls, debates


@dataclass
class Figures:
    """One eval of the workload, measured."""

    calls: int
    floor_s: float
    child: Child
    start_up: Child
    sdk: Child | None

    @property
    def ratio(self) -> float:
        return self.child.wall_s / self.floor_s

    def per_debate(self, debates: int) -> float:
        return self.child.cpu_s / debates


def measure(code_dir: Path | None, args: argparse.Namespace, work: Path) -> Figures:
    """Run the workload once with the code in `code_dir` (None: the installed checkout)."""
    work.mkdir(parents=True)
    root = work / "_dream_context"
    model = "scripted" if args.scripted else BENCH_MODEL
    roster = write_roster(work, PERSONAS, model)
    write_set(work / "scale.jsonl", args.debates)
    env = bench_env(work, drop=("ANTHROPIC_", "OPENAI_", "DREAMCONTEXT_"))
    env.update(DREAMCONTEXT_ROOT=str(root), NO_COLOR="1")
    if args.scripted:
        env[DELAY_ENV] = str(args.latency)
    if code_dir is not None:
        env["PYTHONPATH"] = str(code_dir)
    council = [sys.executable, "-m", "dreamcontext_council", "council"]
    if args.profile:
        council = [sys.executable, "-c", PROFILED, str(args.profile.resolve()), "council"]
    root.mkdir()

    start_up = run_child(
        [sys.executable, "-m", "dreamcontext_council", "council", "eval", "--help"], env, work
    )
    if args.scripted:
        child = run_child([*council, *eval_args(roster, model, args)], env, work)
        calls = checked_calls(child, root, args.debates)
        return Figures(calls, calls * args.latency / args.concurrency, child, start_up, None)
    with StubProcess(args.latency, keep_alive=args.keep_alive) as stub:
        child = run_child(
            [*council, *eval_args(roster, model, args), "--base-url", stub.openai_url], env, work
        )
        calls = checked_calls(child, root, args.debates)
        sdk = run_child(
            [
                sys.executable,
                str(Path(__file__).with_name("sdk_alone.py")),
                "--url",
                stub.openai_url,
                "--prompts",
                str(root),
                "--calls",
                str(calls),
                "--concurrency",
                str(args.concurrency),
            ],
            env,
            work,
        )
        if sdk.code != 0:
            raise SystemExit(f"the SDK's calls alone failed ({sdk.code}):\n{sdk.out[-3000:]}")
    return Figures(calls, calls * args.latency / args.concurrency, child, start_up, sdk)


def eval_args(roster: str, model: str, args: argparse.Namespace) -> list[str]:
    """The `council eval` command line of the workload, the server's URL left out."""
    return [
        "eval",
        "scale.jsonl",
        "--personas",
        roster,
        "--rounds",
        str(ROUNDS),
        "--model",
        model,
        "--concurrency",
        str(args.concurrency),
        "--parallel",
        str(args.parallel),
        "--retries",
        "0",
    ]


def checked_calls(child: Child, root: Path, debates: int) -> int:
    """The calls the eval booked; SystemExit when it failed or left a debate out."""
    if child.code != 0:
        raise SystemExit(f"the eval failed ({child.code}):\n{child.out[-3000:]}")
    calls, written = count_calls(root)
    if written != debates:
        raise SystemExit(f"{written} debates were written, not {debates}")
    return calls


def workload_arguments(description: str) -> argparse.ArgumentParser:
    """A parser with the workload's options (bench/format_floor.py runs the same workload)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--debates", type=int, default=200, help="questions, one debate each")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per call")
    parser.add_argument("--concurrency", type=int, default=64, help="calls in flight at most")
    parser.add_argument("--parallel", type=int, default=128, help="questions in flight at once")
    parser.add_argument("--dir", type=Path, default=None, help="where the eval is written")
    return parser


def main() -> None:
    parser = workload_arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--profile", type=Path, default=None, help="cProfile stats of the child")
    parser.add_argument(
        "--keep-alive",
        action="store_true",
        help="the stub keeps connections open, as real providers do (default: one per call)",
    )
    parser.add_argument(
        "--scripted",
        action="store_true",
        help="answers from the scripted provider, no HTTP: the engine's CPU alone",
    )
    parser.add_argument(
        "--before", default=None, help="also measure this older revision, side by side"
    )
    parser.add_argument(
        "--patch",
        type=Path,
        default=None,
        help="apply this patch to the --before revision (e.g. bench/patches/without-streaming.patch)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each side, taken in turn; the best counts"
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="eval-scale-", dir=args.dir))
    sides: dict[str, Path | None] = {"this": None}
    if args.before:
        before = export_revision(args.before, base / "before")
        if args.patch:
            subprocess.run(["git", "apply", str(args.patch.resolve())], cwd=before, check=True)
            args.before += "+patch"
        # Compiled now, so neither side's CPU holds the compiling of its modules (this
        # checkout's too: with PYTHONDONTWRITEBYTECODE no run leaves its bytecode behind).
        package = Path(dreamcontext_council.__file__).parent
        for code in (before, package):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(code)], check=True)
        sides = {args.before: before, "this": None}
    runs: dict[str, list[Figures]] = {name: [] for name in sides}
    for turn in range(args.repeat):
        # In turn, so a change in the machine hits both; the order swaps every turn, so
        # neither side always runs on a machine that has warmed up for it.
        order = list(sides.items()) if turn % 2 == 0 else list(sides.items())[::-1]
        for name, code_dir in order:
            runs[name].append(measure(code_dir, args, base / f"{name}-{turn + 1}"))
    # The least disturbed run of each side: its CPU is the least another process added.
    best = {name: min(found, key=lambda f: f.child.cpu_s) for name, found in runs.items()}
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())

    print(
        f"eval scale: {args.debates} debates of {PERSONAS} personas x {ROUNDS} rounds + "
        f"synthesis + baseline, {args.latency:g}s per call, concurrency {args.concurrency}, "
        f"--parallel {args.parallel}, "
        + (
            "scripted provider (no HTTP), "
            if args.scripted
            else f"connections {'kept open' if args.keep_alive else 'closed after each call'}, "
        )
        + f"under {base}; "
        f"best of {args.repeat} run(s) a side"
    )
    print(f"(load average before the summary: {load}; python {sys.version.split()[0]})")
    print()
    names = list(sides)
    print(f"{'':22}" + "".join(f"{name:>12}" for name in names))
    floor_note = (
        "none: the scripted provider is not held to --concurrency"
        if args.scripted
        else "calls x latency ÷ concurrency"
    )
    rows = [
        ("calls (usage.jsonl)", lambda f: f"{f.calls}", ""),
        ("floor", lambda f: "-" if args.scripted else f"{f.floor_s:.2f}s", floor_note),
        ("wall time", lambda f: f"{f.child.wall_s:.2f}s", ""),
        (
            "wall ÷ floor",
            lambda f: "-" if args.scripted else f"{f.ratio:.2f}",
            f"target ≤ {TARGETS['wall/floor']}",
        ),
        ("engine CPU", lambda f: f"{f.child.cpu_s:.2f}s", "user + system of the eval process"),
        ("  of it system", lambda f: f"{f.child.system_s:.2f}s", "the kernel's share"),
        ("  of it start-up", lambda f: f"{f.start_up.cpu_s:.2f}s", "`eval --help`"),
        (
            "CPU per debate",
            lambda f: f"{f.per_debate(args.debates):.4f}s",
            f"target ≤ {TARGETS['cpu per debate']}s",
        ),
        (
            "  of it the SDK's",
            lambda f: f"{f.sdk.cpu_s / args.debates:.4f}s" if f.sdk else "-",
            "the same calls by the SDK alone (sdk_alone.py)",
        ),
        (
            "  the rest, engine's",
            lambda f: f"{(f.child.cpu_s - f.sdk.cpu_s) / args.debates:.4f}s" if f.sdk else "-",
            "",
        ),
        (
            "peak RSS",
            lambda f: f"{f.child.peak_mib:.0f} MiB",
            f"target < {TARGETS['peak MiB']} MiB",
        ),
    ]
    for label, value, note in rows:
        print(f"{label:22}" + "".join(f"{value(best[n]):>12}" for n in names) + f"   {note}")
    this = best["this"]
    per_debate = this.per_debate(args.debates)
    if args.before:
        older = best[args.before]
        print(
            f"{'this ÷ ' + args.before:22}{'':>12}"
            f"{per_debate / older.per_debate(args.debates):>12.2f}   CPU per debate"
        )
        if args.repeat > 1:
            # Each turn's two runs ran within a minute of each other: their ratio is the
            # least touched by this machine's speed, which moves by more than 10% over minutes.
            turns = sorted(
                t.child.cpu_s / b.child.cpu_s
                for t, b in zip(runs["this"], runs[args.before], strict=True)
            )
            print(
                f"{'  turn by turn':22}{'':>12}{statistics.median(turns):>12.2f}   median of "
                + " ".join(f"{r:.2f}" for r in turns)
            )
        if this.sdk and older.sdk:
            print(
                f"{'this ÷ ' + args.before:22}{'':>12}"
                f"{(this.child.cpu_s - this.sdk.cpu_s) / (older.child.cpu_s - older.sdk.cpu_s):>12.2f}"
                "   the rest, engine's"
            )
    if args.scripted:  # the targets are for the real workload, through the SDK
        print(
            f"eval_scale --scripted: engine_cpu_per_debate={per_debate:.3f}s "
            f"peak_rss={this.child.peak_mib:.0f}MiB"
        )
        return
    met = (
        this.ratio <= TARGETS["wall/floor"]
        and per_debate <= TARGETS["cpu per debate"]
        and this.child.peak_mib < TARGETS["peak MiB"]
    )
    print(f"{'meets every target':22}{'yes' if met else 'no':>12}")
    print(
        f"eval_scale: wall/floor={this.ratio:.2f} engine_cpu_per_debate={per_debate:.3f}s "
        f"peak_rss={this.child.peak_mib:.0f}MiB"
    )


if __name__ == "__main__":
    main()
