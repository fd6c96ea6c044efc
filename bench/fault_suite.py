"""The fault suite: kills, concurrent writers, provider storms, a full disk, and fuzzing.

CI runs the short version as ordinary tests (tests/faults/ and tests/fuzz/). This script
runs the same cases, short or `--long`, and prints what they saw: where the SIGKILLs
landed, which faults each storm sent and how each run ended, and how long each case took.

    python bench/fault_suite.py            # the CI-size suite
    python bench/fault_suite.py --long     # 50 kills, every fault alone through both SDKs,
                                           # 3 passes of 32 writers, fuzzing at full size
    python bench/fault_suite.py --long -k storm   # any pytest selection

The long suite takes a while (about 20-40 minutes on 2 cores). The tmpfs cases need root
(mount); without it they are skipped, and pytest says why.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def run(long: bool, select: str | None, seed: str) -> tuple[int, list[dict[str, Any]], float]:
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.jsonl"
        env = dict(os.environ)
        env["DREAMCONTEXT_FAULT_REPORT"] = str(report)
        env["DREAMCONTEXT_FAULT_SEED"] = seed
        env["DREAMCONTEXT_FAULT_LONG"] = "1" if long else "0"
        argv = [sys.executable, "-m", "pytest", "tests/faults", "tests/fuzz"]
        argv += ["-p", "no:cacheprovider", "-q", "-rs", "--durations=15", "--timeout=3600"]
        if select:
            argv += ["-k", select]
        started = time.perf_counter()
        code = subprocess.call(argv, cwd=REPO, env=env)
        elapsed = time.perf_counter() - started
        lines = report.read_text(encoding="utf-8").splitlines() if report.exists() else []
    return code, [json.loads(line) for line in lines], elapsed


def summary(records: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for record in (r for r in records if r["case"] == "sigkill"):
        out.append(
            f"SIGKILL: {record['kills']} kills over {record['debates']} debates; every debate "
            f"resumed to complete, no answer asked twice, no corrupt file"
        )
        for status, count in sorted(record["landed"].items(), key=lambda kv: -kv[1]):
            out.append(f"  landed while {status}: {count}")
        out.append(
            f"  temp files the kills left: {record['temp_files_by_kills']}; "
            f"left after the resumes: {record['temp_files_left']}"
        )
        out.append(
            f"  half-built folders of a killed `new`: {record['new_folders_by_kills']}; "
            f"left after the resumes: {record['new_folders_left']}"
        )
    for record in (r for r in records if r["case"] == "writers"):
        out.append(
            f"Writers: {record['processes']} processes x {record['passes']} passes, "
            f"{record['commands']} commands, nothing lost"
        )
    storms = [r for r in records if r["case"] == "storm"]
    if storms:
        sent: Counter[str] = Counter()
        for record in storms:
            sent.update(record["faults"])
        ended = Counter(r["first_run"] for r in storms)
        out.append(
            f"Provider storms: {len(storms)} debates; first runs {dict(ended)}; every stopped "
            "run resumed to complete"
        )
        out.append("  faults sent: " + ", ".join(f"{k} {v}" for k, v in sorted(sent.items())))
        for message in sorted({r["stop_message"] for r in storms if r["stop_message"]}):
            out.append(f"  stop message: {message}")
    for record in (r for r in records if r["case"] == "full-disk"):
        out.append(
            f"Full disk ({record['filled']}): {record['refused_commands']} writing commands "
            "refused with exit 1, every file byte-for-byte unchanged, no temp file left"
        )
    for record in (r for r in records if r["case"] == "disk-fills-mid-run"):
        out.append(
            f"Disk fills during run ({record['room_bytes']} bytes free): first run "
            f"{record['first_run']}, resumed to complete"
        )
    for record in (r for r in records if r["case"] == "file-size-limit-mid-run"):
        out.append(
            f"No file may grow past {record['limit_bytes']} bytes during run: first run "
            f"{record['first_run']}, resumed to complete"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", action="store_true", help="Run every case at full size.")
    parser.add_argument("-k", dest="select", help="A pytest -k selection.")
    parser.add_argument("--seed", default="7", help="Seed for the kill moments.")
    args = parser.parse_args()
    code, records, elapsed = run(args.long, args.select, args.seed)
    print(f"\nFault suite ({'long' if args.long else 'short'}), {elapsed:.0f}s wall")
    for line in summary(records):
        print(line)
    sys.exit(code)


if __name__ == "__main__":
    main()
