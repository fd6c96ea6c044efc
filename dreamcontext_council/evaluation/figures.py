"""An eval's results.json as the dashboard shows it: every figure checked, the plot drawn
again from those figures.

results.json may come from someone else's repository: it is read through the safe-read layer
within the eval folder, each figure must be a finite number in range, and the plot is drawn
by the same SVG builder from the checked numbers (the `accuracy-cost.svg` on disk is never
shown: it could hold anything). A file that is refused or does not parse is a FormatError
that names it and says what to do.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from dreamcontext_council.errors import FormatError
from dreamcontext_council.evaluation.evidence_figures import Evidence, read_evidence
from dreamcontext_council.evaluation.folder import METHODS, EvalFolder
from dreamcontext_council.folder.safe_read import read_bytes
from dreamcontext_council.views.eval_results import (
    METHOD_TITLES,
    accuracy_cost_svg,
    stand_in_line,
)


@dataclass(frozen=True)
class MethodLine:
    """One method's figures, as results.json gives them."""

    method: str
    title: str
    right: int
    questions: int
    accuracy: float
    low: float
    high: float
    calls: int
    tokens: int
    cost_usd: float
    wall_s: float

    @property
    def tokens_per_question(self) -> float:
        return self.tokens / self.questions if self.questions else 0.0

    @property
    def cost_per_question(self) -> float:
        return self.cost_usd / self.questions if self.questions else 0.0

    @property
    def right_per_dollar(self) -> float | None:
        """Accuracy over cost per question (right answers per dollar); None when free."""
        return self.right / self.cost_usd if self.cost_usd > 0 else None

    def to_summary(self) -> dict[str, Any]:
        """The shape `accuracy_cost_svg` draws from."""
        return {
            "right": self.right,
            "questions": self.questions,
            "accuracy": self.accuracy,
            "interval_95": [self.low, self.high],
            "calls": self.calls,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "wall_s": self.wall_s,
        }


@dataclass(frozen=True)
class Results:
    """results.json as the page shows it: the method table, when and for how many questions."""

    methods: list[MethodLine]
    questions: int
    written: str
    stand_in: str = ""  # said when the scripted stand-in gave answers (see stand_in_line)
    evidence: Evidence = field(default_factory=Evidence)


def _bad_results(path: Path, what: str) -> FormatError:
    return FormatError(
        f"{path} {what}; run the same `dreamcontext council eval` command again to rewrite it, "
        "or delete it."
    )


def _number(value: Any, path: Path, what: str, *, share: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad_results(path, f"has no number for {what}")
    if value < 0 or (share and value > 1):
        raise _bad_results(path, f"has {value} for {what}, out of range")
    return float(value)


def _method_line(method: str, data: Any, path: Path) -> MethodLine:
    if not isinstance(data, dict):
        raise _bad_results(path, f"has no figures for {method}")
    interval = data.get("interval_95")
    if not isinstance(interval, list) or len(interval) != 2:
        raise _bad_results(path, f"has no 95% interval for {method}")

    def count(key: str) -> int:
        return int(_number(data.get(key), path, f"{method} {key}"))

    return MethodLine(
        method=method,
        title=METHOD_TITLES[method],
        right=count("right"),
        questions=count("questions"),
        accuracy=_number(data.get("accuracy"), path, f"{method} accuracy", share=True),
        low=_number(interval[0], path, f"{method} interval", share=True),
        high=_number(interval[1], path, f"{method} interval", share=True),
        calls=count("calls"),
        tokens=count("tokens"),
        cost_usd=_number(data.get("cost_usd"), path, f"{method} cost_usd"),
        wall_s=_number(data.get("wall_s"), path, f"{method} wall_s"),
    )


def read_results(folder: EvalFolder) -> Results | None:
    """results.json, every figure checked; None when it is not written yet.

    FormatError names the file and what to do when it is refused (a link out, a FIFO, too
    big), is not JSON, or holds a figure that is not a number in range.
    """
    path = folder.path / "results.json"
    try:
        data = read_bytes(path, within=folder.path)
        written = path.stat().st_mtime
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FormatError(
            f"{path} cannot be read ({exc.strerror}); check its permissions."
        ) from None
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise _bad_results(path, "is not JSON") from None
    methods = parsed.get("methods") if isinstance(parsed, dict) else None
    if not isinstance(methods, dict):
        raise _bad_results(path, "has no methods")
    lines = [_method_line(m, methods[m], path) for m in METHODS if m in methods]
    if not lines:
        raise _bad_results(path, "has no figures for any method")
    questions = int(_number(parsed.get("questions"), path, "questions"))
    # Written since the stand-in is named; an older results.json has neither count.
    scripted = int(_number(parsed.get("stand_in_calls", 0), path, "stand_in_calls"))
    calls = int(_number(parsed.get("calls", scripted), path, "calls"))
    stamp = dt.datetime.fromtimestamp(written, dt.UTC)
    return Results(
        lines,
        questions,
        stamp.strftime("%Y-%m-%d %H:%M UTC"),
        stand_in_line(scripted, calls),
        read_evidence(parsed),
    )


def accuracy_cost_plot(results: Results) -> Markup:
    """The accuracy-vs-cost plot drawn from the checked figures (no markup from the file)."""
    return Markup(accuracy_cost_svg({line.method: line.to_summary() for line in results.methods}))
