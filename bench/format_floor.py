"""The floor under an eval's CPU: the writes the folder format asks for, and nothing else.

`bench/eval_scale.py` splits an eval's CPU into the SDK's share and the engine's. This
script splits the engine's share once more. It runs the same workload (N compact debates
of 4 personas x 2 rounds, plus synthesis and the solo baseline) on the scripted provider,
in a child process that notes every write the storage layer makes: which file, how many
bytes, whole-file rewrite or append, fsynced or not. Then a second child replays those
writes in the same order, in a fresh folder on the same file system, with the least Python
that can make them: open, write, fsync, close, rename, and a `mkdir` the first time a
folder is seen. It reads nothing, parses nothing and renders nothing.

That child's CPU per debate is what the format's files cost, whatever engine writes them:
a floor under the engine's share. Next to the SDK's share from `eval_scale.py`, it says how
much of the 0.05 s target is left for everything else a debate does (reading the folder,
building prompts, parsing answers, rendering files, the protocol itself).

    .venv/bin/python bench/format_floor.py [--debates 200] [--repeat 3] [--dir PATH]

The replay runs `--repeat` times with fsync and as many without, in turn, each in a folder
of its own, and the least disturbed run (lowest CPU) of each kind is printed. Nothing is
deleted while the script runs: on a file system mounted with `discard`, the next fsyncs
would pay for freeing the deleted blocks. The last line reads
`format_floor: writes_cpu_per_debate=X.XXXs eval_cpu_per_debate=Y.YYYs`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from council_stub import write_roster
from eval_scale import (
    PERSONAS,
    Child,
    checked_calls,
    eval_args,
    run_child,
    workload_arguments,
    write_set,
)

from dreamcontext_council.engine.providers.scripted import DELAY_ENV

# The eval, with every write of `folder/storage.py` noted. The three writers are replaced
# before any other module of the package is imported, so every `from ... import` gets the
# noting one; `atomic_write_json` writes through `atomic_write_text`.
NOTED = (
    "import atexit, json, runpy, sys\n"
    "from dreamcontext_council.folder import storage\n"
    "out, noted = sys.argv.pop(1), []\n"
    "def noting(kind, write):\n"
    "    def noted_write(path, text, *args, **options):\n"
    "        size = len(text.encode('utf-8')) + (kind == 'append-line')\n"
    "        noted.append([kind, str(path), size, options.get('durable', True)])\n"
    "        return write(path, text, *args, **options)\n"
    "    return noted_write\n"
    "storage.atomic_write_text = noting('rewrite', storage.atomic_write_text)\n"
    "storage.append_line = noting('append-line', storage.append_line)\n"
    "storage.append_text = noting('append', storage.append_text)\n"
    "atexit.register(lambda: open(out, 'w', encoding='utf-8').write(json.dumps(noted)))\n"
    "runpy.run_module('dreamcontext_council', run_name='__main__')\n"
)


@dataclass(frozen=True)
class Replayed:
    """The CPU the replay child spent on the writes, its start-up left out."""

    cpu_s: float
    system_s: float


@dataclass(frozen=True)
class Write:
    """One write the eval made."""

    kind: str  # "rewrite", "append" or "append-line"
    path: str
    size: int
    durable: bool


def replay(writes: list[Write], source: str, target: str, *, fsync: bool) -> None:
    """Make `writes` again under `target` instead of `source`, as plainly as they can be made."""
    made: set[str] = set()
    data = b"x" * max((w.size for w in writes), default=0)
    for n, write in enumerate(writes):
        path = target + write.path[len(source) :]
        folder = os.path.dirname(path)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        if write.kind == "rewrite":
            temp = f"{folder}/.{os.path.basename(path)}.{n}.tmp"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        else:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data[: write.size])
            if fsync and write.durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if write.kind == "rewrite":
            os.replace(temp, path)


def read_writes(path: Path) -> list[Write]:
    return [Write(*entry) for entry in json.loads(path.read_text(encoding="utf-8"))]


def noted_eval(work: Path, debates: int, args: argparse.Namespace) -> tuple[Child, list[Write]]:
    """Run the workload's eval on the scripted provider, noting its writes."""
    work.mkdir(parents=True)
    root = work / "_dream_context"
    root.mkdir()
    roster = write_roster(work, PERSONAS, "scripted")
    write_set(work / "scale.jsonl", debates)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "DREAMCONTEXT_"))
    }
    env.update(DREAMCONTEXT_ROOT=str(root), NO_COLOR="1")
    env[DELAY_ENV] = str(args.latency)
    log = work / "writes.json"
    argv = [sys.executable, "-c", NOTED, str(log), "council", *eval_args(roster, "scripted", args)]
    child = run_child(argv, env, work)
    checked_calls(child, root, debates)
    return child, read_writes(log)


def main() -> None:
    parser = workload_arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="replays of each kind")
    parser.add_argument("--replay", nargs=3, metavar=("LOG", "FROM", "TO"), help=argparse.SUPPRESS)
    parser.add_argument("--no-fsync", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay:  # the child that makes the writes again, timed without its start-up
        log, source, target = args.replay
        writes = read_writes(Path(log))
        before = resource.getrusage(resource.RUSAGE_SELF)
        replay(writes, source, target, fsync=not args.no_fsync)
        after = resource.getrusage(resource.RUSAGE_SELF)
        user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
        print(json.dumps({"cpu_s": user + system, "system_s": system}))
        return

    base = Path(tempfile.mkdtemp(prefix="format-floor-", dir=args.dir))
    work = base / "eval"
    os.sync()
    child, writes = noted_eval(work, args.debates, args)
    runs: dict[bool, list[Replayed]] = {True: [], False: []}
    for turn in range(args.repeat):
        for fsync in (True, False):
            target = base / f"replay-{'fsync' if fsync else 'no-fsync'}-{turn + 1}"
            argv = [sys.executable, __file__, "--replay", str(work / "writes.json"), str(work)]
            argv += [str(target)] + ([] if fsync else ["--no-fsync"])
            os.sync()  # the blocks the eval and the last replay left dirty are not this one's
            done = run_child(argv, dict(os.environ), base)
            if done.code != 0:
                raise SystemExit(f"the replay failed ({done.code}):\n{done.out[-3000:]}")
            runs[fsync].append(Replayed(**json.loads(done.out.strip().splitlines()[-1])))
    best = {fsync: min(found, key=lambda c: c.cpu_s) for fsync, found in runs.items()}

    n = args.debates
    rewrites = [w for w in writes if w.kind == "rewrite"]
    fsynced = sum(w.durable for w in writes)
    print(
        f"format floor: {n} debates of {PERSONAS} personas x 2 rounds + synthesis + baseline, "
        f"scripted provider, under {base}; best of {args.repeat} replay(s) of each kind"
    )
    print(
        f"writes a debate: {len(writes) / n:.1f} ({len(rewrites) / n:.1f} whole-file rewrites, "
        f"{(len(writes) - len(rewrites)) / n:.1f} appends; {fsynced / n:.1f} fsynced), "
        f"{sum(w.size for w in writes) / n / 1024:.1f} KiB"
    )
    print()
    print(f"{'':34}{'CPU per debate':>16}{'of it system':>15}")
    rows: tuple[tuple[str, Child | Replayed], ...] = (
        ("the eval (scripted), as it runs", child),
        ("its writes alone, fsynced", best[True]),
        ("its writes alone, no fsync", best[False]),
    )
    for label, measured in rows:
        print(
            f"{label:34}{measured.cpu_s / n * 1000:>13.1f} ms"
            f"{measured.system_s / n * 1000:>12.1f} ms"
        )
    print(
        f"format_floor: writes_cpu_per_debate={best[True].cpu_s / n:.3f}s "
        f"eval_cpu_per_debate={child.cpu_s / n:.3f}s"
    )


if __name__ == "__main__":
    main()
