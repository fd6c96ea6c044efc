"""Readers of report structure at N and 2N: every one that was quadratic in its input.

A cloned `final-report.md`, `report.md` entry, round log or context file may hold any number
of headings, or one line megabytes long. Each case below builds such a text of size N and of
size 2N and times its reader on both, side by side in one run (best of `--repeat`, after a
garbage collection); the ratio of the two times is what linear means here: about 2, and at
most 2.5 (`--strict` exits 1 past it). The collector is paused while a read is timed (it
runs before each): its full collections walk every object alive, the bigger input's
included, and add to t(2N) what the reader's own work does not. The last column is the
ratio with the collector running, for comparison. The final report's readers stop at
MAX_REPORT_SECTIONS sections, so their cases also show that a report ten or a hundred times
past the bound is refused in constant time.

    python bench/many_headings.py
    python bench/many_headings.py --size 120000 --repeat 5 --strict
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from dreamcontext_council.errors import FormatError
from dreamcontext_council.rules import final_report, markdown, persona, report, roundlog
from dreamcontext_council.rules.limits import MAX_REPORT_SECTIONS
from dreamcontext_council.views import export

TARGET = 2.5


@dataclass(frozen=True)
class Case:
    name: str
    unit: str
    make: Callable[[int], str]
    read: Callable[[str], object]


def _headings(n: int) -> str:
    return "".join(f"## Note {i}\n\nline {i}\n" for i in range(n))


def _entry_sections(n: int) -> str:
    return "".join(f"### Reasoning {i}\n\ntext {i}\n" for i in range(n))


def _directives(n: int) -> str:
    return "".join(f"## Round 1 — Directives\n\n- directive {i}\n" for i in range(n))


def _setext(n: int) -> str:
    return "\n".join(f"Heading {i}\n===\n" for i in range(n))


def _report_md(n: int) -> str:
    body = "".join(f"## Round 1 — 2026-01-01\n\n### Position\n\nA {i}\n" for i in range(n))
    return f"---\npersona: a\nrounds_completed: 1\n---\n\n{body}"


def _round_log(n: int) -> str:
    return "# Round log\n\n" + "".join(
        f"## Persona failed — a in round 1\n- timed out {i}\n" for i in range(n)
    )


def _final_report_part(text: str) -> object:
    with contextlib.suppress(FormatError):  # past the bound: said in one line
        return final_report.final_report_part(text, "council_bench", "Verdict")
    return None


CASES = [
    Case(
        "sections(): a text of N `##` headings",
        "headings",
        _headings,
        lambda t: markdown.sections(t, 2),
    ),
    Case("a round entry's N `###` sections", "sections", _entry_sections, report.missing_sections),
    Case(
        "a context file's N Directives sections", "sections", _directives, persona.directive_rounds
    ),
    Case("report.md of N entries", "entries", _report_md, report.parse_report),
    Case("round-log.md of N failure entries", "entries", _round_log, roundlog.persona_failures),
    Case("a setext entry of N headings (as_stored)", "headings", _setext, report.as_stored),
    Case("export demote of N headings", "headings", _headings, lambda t: export.demote(t, 2)),
    Case(
        "one heading line of N × ` #`",
        "chars/2",
        lambda n: "## a" + " #" * n + " x",
        lambda t: markdown.headings([t]),
    ),
    Case(
        "a Verdict of N `*`",
        "chars",
        lambda n: "## Verdict\n\n" + "*" * n,
        final_report.verdict_statement,
    ),
    Case(
        "a Verdict of `Confidence` + N spaces",
        "chars",
        lambda n: "## Verdict\n\nA. Confidence" + " " * n + "high",
        final_report.verdict_statement,
    ),
    Case(
        "report show --section Verdict, N sections",
        "headings",
        lambda n: "## Verdict\n\nA.\n" + _headings(n),
        _final_report_part,
    ),
    Case(
        "show's Verdict, N sections",
        "headings",
        lambda n: "## Verdict\n\nA.\n" + _headings(n),
        final_report.verdict_statement,
    ),
]
# How many of each unit make N, per case: a reader of lines gets a bigger N than one of
# whole entries so every case takes long enough to time.
SCALE = {"headings": 1, "sections": 1, "entries": 1, "chars/2": 10, "chars": 20}


def one_time(read: Callable[[str], object], text: str, *, collector: bool) -> float:
    markdown._sections.cache_clear()  # time the split, not the cache of the last texts
    gc.collect()
    if not collector:
        gc.disable()
    try:
        start = time.perf_counter()
        read(text)
        return time.perf_counter() - start
    finally:
        gc.enable()


def best_times(
    read: Callable[[str], object], small: str, large: str, repeat: int, *, collector: bool
) -> list[float]:
    """The best time of each text; N and 2N take turns, so a burst of load on the shared
    machine lands on both alike."""
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for i, text in enumerate((small, large)):
            best[i] = min(best[i], one_time(read, text, collector=collector))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=60_000, help="N (headings, sections, …)")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs")
    parser.add_argument("--strict", action="store_true", help=f"exit 1 past a ratio of {TARGET}")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"N = {args.size:,} (× the case's scale), best of {args.repeat}; load {load:.2f}")
    print(f"final reports are read up to {MAX_REPORT_SECTIONS:,} sections\n")
    print(f"{'reader':48} {'N':>11} {'t(N)':>9} {'t(2N)':>9} {'ratio':>6} {'with gc':>8}")
    worst = 0.0
    for case in CASES:
        n = args.size * SCALE[case.unit]
        small, large = case.make(n), case.make(2 * n)
        t_small, t_large = best_times(case.read, small, large, args.repeat, collector=False)
        ratio = t_large / t_small if t_small > 0 else float("inf")
        with_gc = best_times(case.read, small, large, args.repeat, collector=True)
        worst = max(worst, ratio)
        print(
            f"{case.name:48} {n:>11,} {t_small:>8.4f}s {t_large:>8.4f}s {ratio:>6.2f} "
            f"{with_gc[1] / with_gc[0]:>8.2f}"
        )
    met = worst <= TARGET
    print(f"\nworst ratio {worst:.2f}; meets {TARGET}: {'yes' if met else 'no'}")
    return 0 if met or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
