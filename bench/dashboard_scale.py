"""The dashboard and `council watch` on a root of 10,000 debates and on a 2 MB debate.

Builds the root as bench/cli_latency.py does (one debate held through the library, copied
under new ids) and adds one big debate through the library: 10 personas × 4 rounds of
20 KB entries, synthesized and complete. Then it measures, each figure against its target:

- the two watch designs, in this process: the whole tree with a write-only event_filter,
  and what the dashboard does (the index and the open debate only, `watches.Watches`):
  inotify watches held, time to set them up, idle CPU, edit-to-event latency;
- `council serve` as a real process: start-up to the first page, idle CPU with the list
  and the big debate open (their event streams held), a hand edit of the big debate to
  the `change` event on its stream, and the build time and size of the list page, the
  big debate page (cold, then warm) and its live fragment;
- `council watch` on the big debate as a real process: idle CPU, and a hand edit of
  verdicts.json to the redrawn board.

    python bench/dashboard_scale.py                       # 10,000 debates, 60 s idle
    python bench/dashboard_scale.py --debates 1000 --idle 10 --keep /tmp/dash-root
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

sys.path.insert(0, str(Path(__file__).parent))
from cli_latency import build_root, machine

from dreamcontext_council import (
    Root,
    append_report,
    end_round,
    new_debate,
    record_verdict,
    start_round,
)
from dreamcontext_council.actions.closing import begin_synthesis, complete_debate
from dreamcontext_council.dashboard.changes import change_key, paths_of
from dreamcontext_council.dashboard.watches import WRITE_EVENTS, Watches
from dreamcontext_council.rules.roster import PersonaSpec

IDLE_CPU_TARGET = 2.0  # percent of one core
EDIT_TARGET_MS = 1000.0
STARTUP_TARGET_MS = 2000.0
DEBATE_COLD_TARGET_MS = 300.0
DEBATE_UPDATE_TARGET_MS = 50.0
LIST_TARGET_MS = 100.0
LIST_TARGET_KB = 100.0
BIG_PERSONAS = 10
BIG_ROUNDS = 4
ENTRY_BYTES = 20_000  # --entry-kb changes it
TICK = os.sysconf("SC_CLK_TCK")

rows: list[tuple[str, str, str, str]] = []  # what, figure, target, verdict


def row(what: str, figure: float, unit: str, target: float | None, below: bool = True) -> None:
    shown = f"{figure:,.1f} {unit}" if figure < 100 else f"{figure:,.0f} {unit}"
    shown = f"{figure:,.0f}" if not unit else shown
    if target is None:
        rows.append((what, shown, "", ""))
        return
    ok = figure < target if below else figure > target
    rows.append((what, shown, f"< {target:,.0f} {unit}", "ok" if ok else "MISSED"))


# -- the big debate -------------------------------------------------------------------------


def _big_entry(slug: str, number: int, entry_bytes: int) -> str:
    paragraph = (
        f"{slug} in round {number}: the write path is the risk; a staged migration with a "
        "dual-write window keeps it reversible, and the pool limits are measured first. "
    )
    reasoning: list[str] = []
    while sum(len(p) for p in reasoning) < entry_bytes - 1200:
        i = len(reasoning)
        reasoning.append(f"- Point {i}: {paragraph}See **contrarian** and [F{i % 7 + 1}].\n")
    return (
        "### Executive Summary\n"
        f"{paragraph}\n\n"
        "### Position\n"
        "Option A, with a rollback plan.\n\n"
        "### Reasoning\n" + "".join(reasoning) + "\n"
        "### Reactions to peers\n"
        "**contrarian**: the pool limits hold; pgbouncer answers them.\n\n"
        "### Open questions\n"
        "- What is the p99 latency budget for session reads?\n"
    )


BIG_REPORT = """---
debate_id: {id}
topic: Big debate
personas: [{personas}]
rounds: {rounds}
---

## Verdict
Migrate now (A), {n} of {n} personas.

## Decision card
Migrate with a dual-write window.

## Why
The write path is the risk and a staged migration keeps it reversible.

## Appendix: per-agent per-round summaries
See the reports.
"""


def build_big_debate(root: Root, entry_bytes: int = ENTRY_BYTES) -> str:
    """10 personas × 4 rounds of 20 KB entries, synthesized and complete."""
    personas = [
        PersonaSpec(f"persona-{i:02d}", f"You are persona {i}.", "", ["risk"])
        for i in range(BIG_PERSONAS)
    ]
    options = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay on Redis"}]
    debate = new_debate(
        root, "Big debate: migrate?", rounds=BIG_ROUNDS, options=options, personas=personas
    )
    did = debate.id
    for number in range(1, BIG_ROUNDS + 1):
        start_round(root, did, number)
        for spec in personas:
            record_verdict(
                root, did, spec.slug, number, stance="A", conviction=70, headline="Holds A"
            )
            append_report(
                root, did, spec.slug, _big_entry(spec.slug, number, entry_bytes), number=number
            )
        end_round(root, did, number)
    begin_synthesis(root, did)
    report = BIG_REPORT.format(
        id=did,
        personas=", ".join(p.slug for p in personas),
        rounds=BIG_ROUNDS,
        n=BIG_PERSONAS,
    )
    (root.council / did / "final-report.md").write_text(report, encoding="utf-8")
    complete_debate(root, did)
    return did


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# -- measuring ------------------------------------------------------------------------------


def inotify_watches(pid: int | str = "self") -> int:
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                    count += sum(1 for line in info if line.startswith("inotify wd:"))
    return count


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def idle_percent(pid: int, seconds: float) -> float:
    start = cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - start) / seconds * 100


def hand_edit(path: Path, i: int) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(f"\nEdited by hand ({i}).\n")


def edit_latency(edit: Callable[[int], None], arrived: Callable[[], None], runs: int) -> float:
    """Median ms from a hand edit to `arrived` returning (it blocks until the event, and
    raises queue.Empty after 10 s: a lost event counts as infinite)."""
    times = []
    for i in range(runs):
        time.sleep(0.5)  # let the previous burst settle
        start = time.perf_counter()
        edit(i)
        try:
            arrived()
        except queue.Empty:
            times.append(float("inf"))  # never arrived: the event was lost
            continue
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


class Overflows(logging.Handler):
    """Counts watchdog's "Inotify queue overflowed" warnings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "events were lost" in record.getMessage():
            self.count += 1


def burst(root: Root) -> None:
    """What a `git checkout` of the whole root does: every debate.md and verdicts.json touched."""
    for debate in os.scandir(root.council):
        if debate.name.startswith("council_"):
            for name in ("debate.md", "verdicts.json"):
                with suppress(OSError):
                    os.utime(os.path.join(debate.path, name))


def compare_watch_designs(root: Root, big: str, idle: float, runs: int) -> None:
    """Three ways to watch, in this process: the whole tree with every event kind (as
    before), the whole tree with a write-only filter, and the index + the open debate."""
    report = root.council / big / "persona-00" / "report.md"
    events: queue.Queue[str] = queue.Queue()
    pid = os.getpid()
    overflows = Overflows()
    logging.getLogger("watchdog").addHandler(overflows)

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            for path in paths_of(event):
                key = change_key(root.path, path)
                if key is not None:
                    events.put(key)

    def arrived() -> None:
        while events.get(timeout=10) != big:
            pass

    def drain() -> None:
        with suppress(queue.Empty):
            while True:
                events.get_nowait()

    def whole_tree(event_filter: list[type[FileSystemEvent]] | None) -> Callable[[], None]:
        observer = Observer()
        observer.daemon = True
        observer.start()
        observer.schedule(Handler(), str(root.path), recursive=True, event_filter=event_filter)

        def stop() -> None:
            observer.stop()
            observer.join(timeout=30)

        return stop

    def scoped() -> Callable[[], None]:
        watches = Watches(root, events.put)
        watches.start()
        watches.acquire(None)
        watches.acquire(big)
        return watches.stop

    designs: list[tuple[str, Callable[[], Callable[[], None]]]] = [
        ("whole tree, every event (before)", lambda: whole_tree(None)),
        ("whole tree, write-only filter", lambda: whole_tree(WRITE_EVENTS)),
        ("index + open debate (chosen)", scoped),
    ]
    for name, start_design in designs:
        drain()
        before = inotify_watches()
        start = time.perf_counter()
        stop = start_design()
        setup_ms = (time.perf_counter() - start) * 1000
        held = inotify_watches() - before
        try:
            time.sleep(1)
            drain()
            cpu = idle_percent(pid, idle)
            latency = edit_latency(lambda i: hand_edit(report, i), arrived, runs)
            overflows.count = 0
            burst(root)
            time.sleep(5)
            drain()
            after_burst = idle_percent(pid, idle)
            lost = overflows.count
            drain()
            after_latency = edit_latency(lambda i: hand_edit(report, i), arrived, 1)
        finally:
            stop()
        row(f"{name}: inotify watches", held, "", None)
        row(f"{name}: set-up", setup_ms, "ms", STARTUP_TARGET_MS)
        row(f"{name}: idle CPU over {idle:.0f} s", cpu, "%", IDLE_CPU_TARGET)
        row(f"{name}: edit to event", latency, "ms", EDIT_TARGET_MS)
        row(f"{name}: queue overflows after touching every debate", lost, "", None)
        row(f"{name}: idle CPU over {idle:.0f} s after that", after_burst, "%", IDLE_CPU_TARGET)
        row(f"{name}: edit to event after that", after_latency, "ms", EDIT_TARGET_MS)
    logging.getLogger("watchdog").removeHandler(overflows)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(root: Root) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DREAMCONTEXT_ROOT"] = str(root.path)
    return env


def _exe() -> str:
    return str(Path(sys.executable).with_name("dreamcontext"))


@contextmanager
def running(argv: list[str], root: Root) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        argv,
        env=_environment(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=root.path.parent,
    )
    try:
        yield process
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        stderr = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
        for line in stderr.splitlines():
            if "overflow" in line.lower() or "inotify limit" in line:
                print(f"  {argv[2]} said: {line}", file=sys.stderr)


class Stream:
    """One server-sent event stream, read on a thread: `change` events land in a queue."""

    def __init__(self, url: str) -> None:
        self.changes: queue.Queue[str] = queue.Queue()
        self.ready = threading.Event()
        self.client = httpx.Client(timeout=None)
        threading.Thread(target=self._read, args=(url,), daemon=True).start()
        if not self.ready.wait(10):
            raise SystemExit(f"no event stream at {url}")

    def _read(self, url: str) -> None:
        with suppress(httpx.HTTPError), self.client.stream("GET", url) as response:
            for line in response.iter_lines():
                if line.startswith("retry:") or line.startswith(": connected"):
                    self.ready.set()
                if line.startswith("data:"):
                    self.changes.put(line)

    def next_change(self) -> None:
        self.changes.get(timeout=10)

    def drain(self) -> None:
        with suppress(queue.Empty):
            while True:
                self.changes.get_nowait()

    def close(self) -> None:
        self.client.close()


def timed_get(client: httpx.Client, url: str) -> tuple[float, int]:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code != 200:
        raise SystemExit(f"GET {url}: {response.status_code}")
    return elapsed, len(response.content)


def measure_server(root: Root, big: str, idle: float, runs: int) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    argv = [_exe(), "council", "serve", "--port", str(port)]
    start = time.perf_counter()
    with running(argv, root) as server, httpx.Client(timeout=30) as client:
        while True:
            try:
                first = client.get(base + "/")
                break
            except httpx.TransportError:
                if server.poll() is not None or time.perf_counter() - start > 60:
                    raise SystemExit("council serve did not start") from None
                time.sleep(0.02)
        startup_ms = (time.perf_counter() - start) * 1000
        if first.status_code != 200:
            raise SystemExit(f"GET /: {first.status_code}")
        cold_ms, page_bytes = timed_get(client, f"{base}/d/{big}")
        list_times, fragment_times, page_times = [], [], []
        for _ in range(runs):
            list_ms, list_bytes = timed_get(client, base + "/")
            list_times.append(list_ms)
            ms, _ = timed_get(client, f"{base}/d/{big}")
            page_times.append(ms)
            ms, fragment_bytes = timed_get(client, f"{base}/d/{big}/fragment")
            fragment_times.append(ms)
        listing = Stream(base + "/events")
        debate = Stream(f"{base}/events/{big}")
        try:
            time.sleep(2)
            cpu = idle_percent(server.pid, idle)
            watches = inotify_watches(server.pid)
            report = root.council / big / "persona-00" / "report.md"

            def arrived() -> None:
                debate.next_change()

            debate.drain()
            latency = edit_latency(lambda i: hand_edit(report, i), arrived, runs)
        finally:
            listing.close()
            debate.close()
    row("serve: start-up to the first page", startup_ms, "ms", STARTUP_TARGET_MS)
    row(f"serve: idle CPU over {idle:.0f} s, list and big debate open", cpu, "%", IDLE_CPU_TARGET)
    row("serve: inotify watches with those pages open", watches, "", None)
    row("serve: hand edit to the page's change event", latency, "ms", EDIT_TARGET_MS)
    row("list page: build (median)", statistics.median(list_times), "ms", LIST_TARGET_MS)
    row("list page: size", list_bytes / 1024, "KB", LIST_TARGET_KB)
    row("big debate page: first (cold)", cold_ms, "ms", DEBATE_COLD_TARGET_MS)
    row("big debate page: again (median)", statistics.median(page_times), "ms", None)
    row("big debate page: size", page_bytes / 1024, "KB", None)
    row(
        "big debate live fragment (an update; median)",
        statistics.median(fragment_times),
        "ms",
        DEBATE_UPDATE_TARGET_MS,
    )
    row("big debate live fragment: size", fragment_bytes / 1024, "KB", None)


def measure_watch(root: Root, big: str, idle: float, runs: int) -> None:
    argv = [_exe(), "council", "watch", big]
    verdicts = root.council / big / "verdicts.json"
    original = verdicts.read_text(encoding="utf-8")
    boards: queue.Queue[str] = queue.Queue()
    try:
        with running(argv, root) as process:
            assert process.stdout is not None
            stdout = process.stdout

            def pump() -> None:
                for raw in iter(stdout.readline, b""):
                    if raw.startswith("╰".encode()):
                        boards.put(raw.decode("utf-8", "replace"))

            threading.Thread(target=pump, daemon=True).start()
            boards.get(timeout=60)  # the first board is out
            time.sleep(2)
            cpu = idle_percent(process.pid, idle)

            def edit(i: int) -> None:
                verdicts.write_text(original.replace("Holds A", f"Holds A ({i})"), encoding="utf-8")

            def redrawn() -> None:
                boards.get(timeout=10)

            latency = edit_latency(edit, redrawn, runs)
    finally:
        verdicts.write_text(original, encoding="utf-8")
    row(f"watch: idle CPU over {idle:.0f} s", cpu, "%", IDLE_CPU_TARGET)
    row("watch: hand edit to the redrawn board", latency, "ms", EDIT_TARGET_MS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debates", type=int, default=10_000, help="Debates in the root.")
    parser.add_argument("--idle", type=float, default=60.0, help="Seconds of each idle sample.")
    parser.add_argument("--runs", type=int, default=5, help="Edits and page loads measured.")
    parser.add_argument("--keep", type=Path, help="Build the root here and keep it.")
    parser.add_argument(
        "--entry-kb", type=int, default=ENTRY_BYTES // 1000, help="KB per big-debate entry."
    )
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="dashboard-scale-"))
    where = base / "root"
    try:
        if where.exists():
            shutil.rmtree(where)
        start = time.perf_counter()
        root, _ = build_root(where, args.debates - 1)
        big = build_big_debate(root, args.entry_kb * 1000)
        folders = sum(1 for _ in os.walk(root.path))
        print(
            f"built {args.debates:,} debates ({folders:,} folders) in "
            f"{time.perf_counter() - start:.0f} s; the big debate {big} holds "
            f"{folder_bytes(root.council / big) / 1e6:.1f} MB",
            file=sys.stderr,
        )
        os.sync()
        time.sleep(2)
        compare_watch_designs(root, big, args.idle, args.runs)
        measure_server(root, big, args.idle, args.runs)
        measure_watch(root, big, args.idle, args.runs)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"\n{machine()}; {args.debates:,} debates, {folders:,} folders\n")
    print("| measure | figure | target | |")
    print("|---|---|---|---|")
    for what, figure, target, verdict in rows:
        print(f"| {what} | {figure} | {target} | {verdict} |")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
