"""Hostile input, before and after: the same attacks on an older revision and on this checkout.

Each case builds a debate with the CLI of the revision under test, makes it hostile as a cloned
repository or a hostile model could, and measures what a user would see: seconds and peak
memory of the reading command, whether an outside file leaked, how many raw escape bytes
reached the output, how big the stored report grew. Both revisions run side by side in one
invocation, so the ratios compare like with like on this machine at this moment.

The older revision is exported with `git archive` into a temp folder and imported from there
(this environment's dependencies serve both); nothing is installed.

    python bench/hostile_inputs.py --before a421fa4
    python bench/hostile_inputs.py --before a421fa4 --answer-mb 20 --timeout 60
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from council_stub import export_revision

REPO = Path(__file__).resolve().parents[1]
MARKER = "OUTSIDE-FILE-MARKER-5d1e"
ALIAS_BOMB = """\
---
id: {id}
topic: Bomb
status: created
rounds_planned: 2
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---

## Question

Bomb
"""
# A persona program that answers like the scripted provider, with a huge Reasoning and an
# OSC title sequence in its headline.
BIG_ANSWER = textwrap.dedent(
    """\
    import sys
    from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
    task = task_from_text(sys.stdin.read())
    text = scripted_text(task)
    if task.get("phase") not in ("synthesis", "check"):
        text = text.replace("### Reasoning\\n", "### Reasoning\\n" + "padding words " * {words} + "\\n", 1)
        text = "\\n".join(
            line.replace("headline: ", "headline: \\x1b]0;pwned\\x07 ", 1) for line in text.split("\\n")
        )
    print(text)
    """
)


@dataclass
class Measure:
    seconds: float
    peak_mb: float
    code: int
    out: str


def council(code_dir: Path, root: Path, *args: str, timeout: float) -> Measure:
    """One CLI command of the revision in `code_dir`, as a child process with a 2 GiB cap."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "DREAMCONTEXT_"))
    }
    env.update(PYTHONPATH=str(code_dir), DREAMCONTEXT_ROOT=str(root), NO_COLOR="1")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    root.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "dreamcontext_council", "council", *args],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=root.parent,
            preexec_fn=limit,
        )
        status, usage = _wait(process.pid, started + timeout)
        seconds = time.perf_counter() - started
        output.seek(0)
        out = output.read().decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status) if status is not None else -1
    if status is None:
        out += f"(killed after {timeout:.0f} s)"
    return Measure(seconds, usage.ru_maxrss / 1024, code, out)


def _wait(pid: int, deadline: float) -> tuple[int | None, resource.struct_rusage]:
    """Reap `pid` with its own resource usage; kill it at `deadline` (status None then)."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, usage
        if time.perf_counter() > deadline:
            os.kill(pid, 9)
            _, _, usage = os.wait4(pid, 0)
            return None, usage
        time.sleep(0.02)


def last_id(out: str) -> str:
    return next(w for w in reversed(out.split()) if w.startswith("council_"))


def alias_bomb(code_dir: Path, work: Path, timeout: float) -> Measure:
    root = work / "_dream_context"
    made = council(code_dir, root, "new", "Bomb?", "--personas", "cognitive", timeout=timeout)
    debate_id = last_id(made.out)
    (root / "council" / debate_id / "debate.md").write_text(ALIAS_BOMB.format(id=debate_id))
    return council(code_dir, root, "show", debate_id, timeout=timeout)


def link_out(code_dir: Path, work: Path, timeout: float) -> Measure:
    root = work / "_dream_context"
    made = council(code_dir, root, "run", "--topic", "Link?", "--rounds", "1", timeout=timeout)
    debate_id = last_id(made.out)
    work.mkdir(parents=True, exist_ok=True)
    outside = work / "outside.txt"
    outside.write_text(f"{MARKER}\n")
    log = root / "council" / debate_id / "round-log.md"
    log.unlink()
    log.symlink_to(outside)
    return council(
        code_dir, root, "export", debate_id, "--format", "md", "-o", "-", timeout=timeout
    )


def big_answer(code_dir: Path, work: Path, timeout: float, answer_mb: float) -> tuple[Measure, int]:
    root = work / "_dream_context"
    work.mkdir(parents=True, exist_ok=True)
    script = work / "big_answer.py"
    script.write_text(BIG_ANSWER.format(words=int(answer_mb * 1_000_000 / 14)))
    model = f"command:{sys.executable} {script}"
    made = council(
        code_dir, root, "run", "--topic", "Big?", "--rounds", "1", "--model", model,
        "--yes", timeout=timeout,
    )  # fmt: skip
    reports = list((root / "council").glob("council_*/*/report.md"))
    return made, max((p.stat().st_size for p in reports), default=0)


def board_escapes(code_dir: Path, work: Path, timeout: float) -> int:
    """Raw ESC bytes in the board of the debate `big_answer` ran (its headlines hold an OSC)."""
    root = work / "_dream_context"
    debate_id = next(p.name for p in (root / "council").glob("council_*"))
    return council(code_dir, root, "board", debate_id, timeout=timeout).out.count("\x1b")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="the older revision, e.g. a421fa4")
    parser.add_argument("--answer-mb", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hostile-") as temp:
        base = Path(temp)
        sides = {args.before: export_revision(args.before, base / "before"), "this": REPO}
        rows: dict[str, dict[str, str]] = {}
        for name, code_dir in sides.items():
            work = base / name.replace("/", "_")
            bomb = alias_bomb(code_dir, work / "bomb", args.timeout)
            leak = link_out(code_dir, work / "link", args.timeout)
            run, report = big_answer(code_dir, work / "big", args.timeout, args.answer_mb)
            escapes = board_escapes(code_dir, work / "big", args.timeout)
            rows[name] = {
                "alias bomb: show seconds": f"{bomb.seconds:.2f}",
                "alias bomb: show exit": str(bomb.code),
                "alias bomb: show peak MB": f"{bomb.peak_mb:.0f}",
                "link out: outside file in export": "yes" if MARKER in leak.out else "no",
                f"{args.answer_mb:g} MB answer: largest report.md KB": f"{report / 1000:.0f}",
                f"{args.answer_mb:g} MB answer: run exit": str(run.code),
                "ESC bytes in board output": str(escapes),
            }
        print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
        names = list(rows)
        width = max(len(k) for k in rows[names[0]])
        print(f"{'case':<{width}}  {names[0]:>12}  {names[1]:>12}")
        for key in rows[names[0]]:
            print(f"{key:<{width}}  {rows[names[0]][key]:>12}  {rows[names[1]][key]:>12}")


if __name__ == "__main__":
    main()
