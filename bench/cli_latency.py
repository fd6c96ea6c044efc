"""Cold-start latency of `board`, `list --all` and `verdict` on roots of 1, 100 and 10,000 debates.

Each command runs as a fresh `dreamcontext` process (the console script of this interpreter's
environment), so every figure includes interpreter start-up and imports. Generating the roots
is not measured: one debate is held through the library (two rounds, four personas, reports,
verdicts, a fact and a directive) and copied file by file under new ids; a third of the copies
are marked complete with a final report. index.json is written last, as the tool leaves it.

Bytecode is cached (in a private PYCACHEPREFIX) as in any normal install, so the "cold" start
is a new interpreter, not a first run after installing. Besides wall time the table gives the
children's CPU time (user + sys), which a busy machine inflates much less than wall time.

Two baselines run in the same round robin, the bare interpreter and the interpreter importing
click: on a shared or throttled machine they show how fast the machine was at that moment,
and board minus the click baseline is the part this project controls.

Then `board` and `list --all` on a copy of the Node tool's reference debate
(tests/fixtures/reference-debate), beside the same commands of the Node CLI when `--node`
names its entry script (`node SCRIPT council board ID`), alternated run by run; without it
they are read against the two baselines.

Targets: `board` under 150 ms and independent of the number of debates; `list --all` of 10,000
debates under 1 s; on the reference debate, `board` and `list --all` at most 0.35x the Node
CLI's time.

    python bench/cli_latency.py                 # sizes 1,100,10000; 7 runs each
    python bench/cli_latency.py --runs 11 --sizes 1,10000 --keep /tmp/latency-roots
    python bench/cli_latency.py --sizes 1 --runs 15 --node ../dreamcontext/dist/cli.js
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from dreamcontext_council import (
    Root,
    append_report,
    end_round,
    inject_fact,
    new_debate,
    queue_directive,
    record_verdict,
    start_round,
)
from dreamcontext_council.actions.index import index_entry
from dreamcontext_council.folder.storage import atomic_write_json
from dreamcontext_council.rules.debate import parse_debate
from dreamcontext_council.rules.roster import PRESETS

BOARD_TARGET_MS = 150.0
LIST_TARGET_MS = 1000.0
NODE_TARGET = 0.35
REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "reference-debate"
REFERENCE_ID = "council_lwVpZDlF"
TOPIC = "Should we migrate the session store from Redis to Postgres?"
OPTIONS = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay on Redis"}]
STANCES = ("A", "B", "A", "A")


def _entry(slug: str, number: int, stance: str) -> str:
    return (
        "### Executive Summary\n"
        f"{slug} favours option {stance} in round {number}: the write path is the risk, and "
        "a staged migration with a dual-write window keeps it reversible.\n\n"
        "### Position\n"
        f"Option {stance}, with a rollback plan and a two-week dual-write window.\n\n"
        "### Reasoning\n"
        "- Postgres 16 sustains the measured peak of 40k small writes per second.\n"
        "- Redis persistence has failed twice this year; both incidents lost sessions.\n"
        "- The migration touches three services; each can fall back independently.\n\n"
        "### Reactions to peers\n"
        "The contrarian's point about connection pool limits holds; pgbouncer answers it.\n\n"
        "### Open questions\n"
        "- What is the p99 latency budget for session reads?\n"
        "- Who owns the runbook during the dual-write window?\n"
    )


def hold_template(root: Root) -> str:
    """A debate held through the library, standing in round 2 with half its verdicts in."""
    personas = PRESETS["cognitive"]
    debate = new_debate(root, TOPIC, rounds=3, options=OPTIONS, personas=personas)
    did = debate.id
    start_round(root, did, 1)
    for spec, stance in zip(personas, STANCES, strict=True):
        record_verdict(
            root,
            did,
            spec.slug,
            1,
            stance=stance,
            conviction=60 + len(spec.slug),
            headline=f"{spec.slug} leans {stance}",
        )
        append_report(root, did, spec.slug, _entry(spec.slug, 1, stance), number=1)
    end_round(root, did, 1)
    inject_fact(root, did, "Peak load is 40k session writes per second.")
    queue_directive(root, did, personas[0].slug, "Answer the contrarian on pool limits.")
    start_round(root, did, 2)
    for spec in personas[:2]:
        record_verdict(
            root, did, spec.slug, 2, stance="A", conviction=70, headline=f"{spec.slug} holds A"
        )
    return did


_FINAL_REPORT = """---
debate_id: {id}
topic: {topic}
synthesized_at: '2026-11-30'
personas: [synthesizer, epistemologist, contrarian, systems-thinker]
rounds: 2
---

## Verdict
Migrate now (A), 3 of 4 personas.

## Decision card
Migrate with a dual-write window.

## Why
The write path is the risk and a staged migration keeps it reversible. synthesizer R1

## Position timeline
| Persona | R1 | R2 |
|---|---|---|

## What was debated
Write throughput, rollback, pool limits.

## Minority view & revisit conditions
contrarian: stay on Redis until the pool limits are measured.

## Open risks
Connection pool exhaustion under failover.

## Appendix: per-agent per-round summaries
See the reports.
"""


def build_root(base: Path, count: int) -> tuple[Root, str]:
    """A root with `count` debates; returns it and the id of the debate the commands use."""
    root = Root(base / "_dream_context")
    root.council.mkdir(parents=True)
    target = hold_template(root)
    folder = root.council / target
    files = {
        p.relative_to(folder): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }
    template_meta = parse_debate(files[Path("debate.md")].decode(), "template").meta
    entries = []
    for i in range(count - 1):
        new_id = f"council_g{i:07d}"
        topic = f"{TOPIC} (variant {i})"
        complete = i % 3 == 0
        out = root.council / new_id
        for rel, data in files.items():
            text = data.replace(target.encode(), new_id.encode())
            if rel == Path("debate.md"):
                text = text.replace(TOPIC.encode(), topic.encode(), 2)
                if complete:
                    text = text.replace(b"status: round_2_running", b"status: complete")
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
        if complete:
            report = _FINAL_REPORT.format(id=new_id, topic=json.dumps(topic))
            (out / "final-report.md").write_text(report, encoding="utf-8")
        meta = template_meta | {"id": new_id, "topic": topic}
        if complete:
            meta["status"] = "complete"
        entries.append(index_entry(meta))
    entries.reverse()  # the copies are "older" than the held debate, which leads the index
    atomic_write_json(root.index, [index_entry(template_meta), *entries], within=root.path)
    return root, target


@dataclass
class Timing:
    command: str
    size: int
    walls_ms: list[float] = field(default_factory=list)
    cpus_ms: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.walls_ms)

    @property
    def min_ms(self) -> float:
        return min(self.walls_ms)

    @property
    def cpu_ms(self) -> float:
        return statistics.median(self.cpus_ms)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_once(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """Wall and CPU time of one fresh process, in ms."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=cwd)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
    return elapsed, (_children_cpu() - cpu) * 1000


PYTHON_ONLY = "baseline: python -c pass"
CLICK_ONLY = "baseline: python -c 'import click'"


def commands(exe: str, debate_id: str) -> dict[str, list[str]]:
    return {
        # What no command can go below on this machine at this moment: the interpreter,
        # and the interpreter with click, measured in the same round robin.
        PYTHON_ONLY: [sys.executable, "-c", "pass"],
        CLICK_ONLY: [sys.executable, "-c", "import click"],
        "board": [exe, "council", "board", debate_id, "--plain"],
        "list --all": [exe, "council", "list", "--all"],
        "verdict": [
            exe,
            "council",
            "verdict",
            debate_id,
            "contrarian",
            "2",
            "--stance",
            "B",
            "--conviction",
            "55",
            "--headline",
            "Stay until pool limits are measured",
        ],
        # Informative: a debate.md changed outside the tool (git pull, the Node tool), so
        # list re-reads that one debate and rewrites the index.
        EDITED: [exe, "council", "list", "--all"],
    }


EDITED = "list --all, 1 debate edited outside"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,100,10000", help="Debate counts (comma-separated).")
    parser.add_argument("--runs", type=int, default=7, help="Measured runs per command.")
    parser.add_argument("--keep", type=Path, help="Build the roots here and keep them.")
    parser.add_argument("--node", type=Path, help="The Node CLI's entry script, to compare with.")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    exe = str(Path(sys.executable).with_name("dreamcontext"))
    base = args.keep or Path(tempfile.mkdtemp(prefix="cli-latency-"))
    results: dict[tuple[str, int], Timing] = {}
    try:
        roots = {}
        for size in sizes:
            where = base / f"root-{size}"
            if where.exists():
                shutil.rmtree(where)
            start = time.perf_counter()
            roots[size] = build_root(where, size)
            print(f"built {size} debates in {time.perf_counter() - start:.1f}s", file=sys.stderr)
        os.sync()  # the writeback of the new files must not land on the measurements
        time.sleep(2)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
        # Round robin over sizes and commands, so a busy moment hits them all alike; the
        # first round only warms the bytecode cache and the page cache.
        for round_number in range(args.runs + 1):
            for size in sizes:
                root, target = roots[size]
                env["DREAMCONTEXT_ROOT"] = str(root.path)
                for name, argv in commands(exe, target).items():
                    if name == EDITED:
                        os.utime(root.council / target / "debate.md")
                    wall, cpu = time_once(argv, env)
                    if round_number:
                        timing = results.setdefault((name, size), Timing(name, size))
                        timing.walls_ms.append(wall)
                        timing.cpus_ms.append(cpu)
        reference = reference_runs(base, exe, env, args.runs, args.node)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    report(results, sizes, args.runs)
    report_reference(reference, results, sizes, args.node)


def reference_runs(
    base: Path, exe: str, env: dict[str, str], runs: int, node: Path | None
) -> dict[str, Timing]:
    """board and list --all on a copy of the reference debate, ours and (with `node`) the
    Node CLI's, alternated; the first round only warms the caches."""
    copy = base / "reference"
    shutil.copytree(REFERENCE, copy)
    env = env | {"DREAMCONTEXT_ROOT": str(copy / "_dream_context")}
    argvs = {
        "board": ["council", "board", REFERENCE_ID],
        "list --all": ["council", "list", "--all"],
    }
    tools = {"ours": [exe]} | ({"node": ["node", str(node)]} if node else {})
    timings: dict[str, Timing] = {}
    for round_number in range(runs + 1):
        for name, argv in argvs.items():
            for tool, head in tools.items():
                # In the copy's folder: the Node CLI reads `_dream_context/` there, not the
                # DREAMCONTEXT_ROOT that points ours at the same folder.
                wall, cpu = time_once([*head, *argv], env, cwd=copy)
                if round_number:
                    timing = timings.setdefault(f"{tool} {name}", Timing(name, 1))
                    timing.walls_ms.append(wall)
                    timing.cpus_ms.append(cpu)
    return timings


def report_reference(
    ref: dict[str, Timing], by: dict[tuple[str, int], Timing], sizes: list[int], node: Path | None
) -> None:
    floor = statistics.median(by[CLICK_ONLY, s].median_ms for s in sizes)
    print("\nThe Node tool's reference debate: median wall ms (fastest; CPU)\n")
    for name in ("board", "list --all"):
        ours = ref[f"ours {name}"]
        line = f"{name}: {ours.median_ms:.0f} ({ours.min_ms:.0f}; {ours.cpu_ms:.0f})"
        line += f", {ours.median_ms - floor:.0f} above the python + click baseline"
        if node:
            theirs = ref[f"node {name}"]
            ratio = ours.median_ms / theirs.median_ms
            line += (
                f"; Node CLI {theirs.median_ms:.0f} ({theirs.min_ms:.0f}; {theirs.cpu_ms:.0f}): "
                f"{ratio:.2f}x, at most {NODE_TARGET}x: {'yes' if ratio <= NODE_TARGET else 'NO'}"
            )
        print(line)
    if not node:
        print("(no Node CLI named with --node: the ratio to it is not measured)")


def machine() -> str:
    """CPUs, memory and Python, for the figures to be read against."""
    memory = "?"
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return (
        f"{os.cpu_count()} CPUs, {memory} memory, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def report(by: dict[tuple[str, int], Timing], sizes: list[int], runs: int) -> None:
    names = list(dict.fromkeys(name for name, _ in by))
    print(f"\n{machine()}")
    print(f"\nCold start of fresh processes, {runs} runs each: median wall ms (fastest; CPU)\n")
    head = "| command | " + " | ".join(f"{s:,} debates" for s in sizes)
    print(head + f" | growth {sizes[-1]:,} ÷ {sizes[0]:,} |")
    print("|---" * (len(sizes) + 2) + "|")
    for name in names:
        cells = [
            f"{by[name, s].median_ms:.0f} ({by[name, s].min_ms:.0f}; {by[name, s].cpu_ms:.0f})"
            for s in sizes
        ]
        ratio = by[name, sizes[-1]].median_ms / by[name, sizes[0]].median_ms
        print(f"| {name} | " + " | ".join(cells) + f" | {ratio:.2f}× |")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    floor = statistics.median(by[CLICK_ONLY, s].median_ms for s in sizes)
    ours = statistics.median(by["board", s].median_ms for s in sizes) - floor
    print(f"board above the python + click baseline: {ours:.0f} ms")
    print()
    board = [by["board", s].median_ms for s in sizes]
    board_ok = max(board) < BOARD_TARGET_MS
    flat = max(board) / min(board) < 1.25
    print(
        f"board < {BOARD_TARGET_MS:.0f} ms cold: {'yes' if board_ok else 'NO'} "
        f"(slowest median {max(board):.0f} ms)"
    )
    print(
        f"board independent of the number of debates: {'yes' if flat else 'NO'} "
        f"(largest ÷ smallest median {max(board) / min(board):.2f})"
    )
    if 10_000 in sizes:
        listing = by["list --all", 10_000].median_ms
        print(
            f"list --all of 10,000 < {LIST_TARGET_MS:.0f} ms: "
            f"{'yes' if listing < LIST_TARGET_MS else 'NO'} ({listing:.0f} ms)"
        )


if __name__ == "__main__":
    main()
