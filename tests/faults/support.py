"""Helpers for the fault suite: run the real CLI, read a root back, and find what is broken.

The suite runs short in CI. `DREAMCONTEXT_FAULT_LONG=1` (what `bench/fault_suite.py --long`
sets) makes every case run at full size: 50 kills, more writers, both SDKs on every storm.
"""

from __future__ import annotations

import json
import os
import resource
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from debate_story import FINAL_REPORT_SECTIONS, Result, run_process
from debate_story import council_argv as council_argv
from offline import clean_environment

from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.markdown import sections

LONG = os.environ.get("DREAMCONTEXT_FAULT_LONG") == "1"
REPORT_ENV = "DREAMCONTEXT_FAULT_REPORT"  # bench/fault_suite.py collects what the cases saw
PERSONA_PHASES = ("opening", "cross-exam", "rebuttal")


def report(case: str, **figures: Any) -> None:
    """Append what a case saw to the fault-suite report, when one is being written."""
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"case": case, **figures}, default=str) + "\n")


def scaled(short: int, long: int) -> int:
    """`short` in CI, `long` in the long suite."""
    return long if LONG else short


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without keys, base URLs, proxies or council settings."""
    home.mkdir(parents=True, exist_ok=True)
    return {**clean_environment(os.environ, home), **extra}


Done = Result  # what a command did: code, out, err, and `text` (both streams)


def run_council(
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    *,
    stdin: bytes | None = None,
    timeout: float = 120,
    file_size_limit: int | None = None,
) -> Done:
    """`python -m dreamcontext_council council ARGS` as a real process.

    With `file_size_limit`, the kernel refuses (EFBIG) every write that would make a file
    larger than that many bytes: a write error injected at the OS level, needing no root.
    """

    def limit() -> None:
        assert file_size_limit is not None
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return run_process(
        args,
        cwd=cwd,
        env=dict(env),
        input=stdin if stdin is not None else b"",
        timeout=timeout,
        preexec_fn=limit if file_size_limit is not None else None,
    )


def debate_ids(root: Path) -> list[str]:
    council = root / "council"
    if not council.is_dir():
        return []
    return sorted(p.name for p in council.iterdir() if p.name.startswith("council_"))


def usage_records(folder: Path) -> list[dict[str, Any]]:
    path = folder / "usage.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def asked_twice(folder: Path) -> list[tuple[str, int, int]]:
    """(persona, round, count) for persona answers recorded ok more than once."""
    counts = Counter(
        (r["persona"], r["round"])
        for r in usage_records(folder)
        if r.get("phase") in PERSONA_PHASES and r.get("outcome") == "ok"
    )
    return [(p, n, c) for (p, n), c in counts.items() if c > 1]


def temp_files(root: Path) -> list[Path]:
    """Atomic-write temp files left behind (`.name.<pid>-<hex>.tmp`)."""
    return sorted(p for p in root.rglob(".*.tmp") if p.is_file())


def problems(root: Path, *, complete: bool = False) -> list[str]:
    """Everything corrupt under a root; empty when every file parses.

    Every .json parses, every usage.jsonl line parses, every .md with frontmatter parses,
    every debate loads whole through the library, and a complete debate's final report
    has every required section and every persona's `round_entries` counts its report.
    """
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name.endswith(".tmp") or path.name.endswith(".lock"):
            continue
        where = str(path.relative_to(root))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            found.append(f"{where}: unreadable ({exc})")
            continue
        try:
            if path.suffix == ".json":
                json.loads(text)
            elif path.suffix == ".jsonl":
                for line in text.split("\n"):
                    if line:
                        json.loads(line)
                if text and not text.endswith("\n"):
                    found.append(f"{where}: last line is not terminated")
            elif path.suffix == ".md":
                frontmatter_io.parse(text, where)
        except (ValueError, CouncilError) as exc:
            found.append(f"{where}: {exc}")
    for debate_id in debate_ids(root):
        folder = root / "council" / debate_id
        if not (folder / "debate.md").exists():
            continue  # killed before the folder was written: not a debate yet
        try:
            snapshot = load_snapshot(Root(root), debate_id)
        except CouncilError as exc:
            found.append(f"{debate_id}: does not load ({exc})")
            continue
        if complete or snapshot.debate.status.phase == "complete":
            report = snapshot.final_report() or ""
            _, body = frontmatter_io.parse(report, "final-report.md")
            titles = [s.title.casefold() for s in sections(body, 2)]
            lacking = [t for t in FINAL_REPORT_SECTIONS if t.casefold() not in titles]
            if lacking:
                found.append(f"{debate_id}: final-report.md lacks {', '.join(lacking)}")
            for persona in snapshot.personas:
                count = persona.context.round_entries if persona.context else None
                if count != len(persona.entries):
                    found.append(
                        f"{debate_id}/{persona.slug}: round_entries {count} but "
                        f"{len(persona.entries)} entries in report.md"
                    )
    return found


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under `root` (lock files aside) by relative path, for byte comparisons."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def no_traceback(done: Done) -> bool:
    return "Traceback (most recent call last)" not in done.text
