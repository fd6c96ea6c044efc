"""The click types of the numeric `run` and `eval` flags: the ranges of rules/limits.py, so a
flag and the same setting recorded in debate.md's `run:` pass the one check."""

from __future__ import annotations

import math
from typing import Any

import click

from dreamcontext_council.rules.limits import RUN_SPANS


class _FiniteRange(click.FloatRange):
    """A FloatRange that refuses NaN, which compares as inside any range."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if isinstance(number, float) and math.isnan(number):
            self.fail(f"{value!r} is not a number.", param, ctx)
        return number


def flag_range(setting: str) -> click.ParamType:
    """The type of the flag of the `run:` setting `setting` (`timeout` for `--timeout`)."""
    span = RUN_SPANS[setting]
    if span.whole:
        return click.IntRange(int(span.least), int(span.most))
    return _FiniteRange(span.least, span.most, min_open=span.above_least)
