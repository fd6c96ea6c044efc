"""debate.md's `run:` mapping: how `council run` runs this debate, so a resume runs it the same way.

Written by `council run` when it starts, read back by `council run <id>`. It holds
models, the server URL (never its credentials), limits and the synthesis window; never
a key. The Node tool ignores frontmatter keys it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from dreamcontext_council.errors import FormatError

RUN_KEY = "run"
DEFAULT_TIMEOUT = 120.0
DEFAULT_RETRIES = 4
DEFAULT_WINDOW = 100_000
MAX_RETRIES = 10
MAX_CONCURRENCY = 64
MIN_WINDOW = 1000
MIN_ANSWER_KB = 8
DEFAULT_MAX_TOOL_CALLS = 4
MAX_TOOL_CALLS = 32

MODEL_FIELDS = ("model", "check_model", "synth_model", "baseline_model")
"""Every setting of `RunSettings` that names a model, in one place.

A debate folder may come from someone else, so each of these is checked for consent
(engine/providers/consent.py) and resolved into the run's plan, its seats, on a resume
(engine/setup/plan.py). A new setting that names a model goes here, or a `command:`
recorded in it would run unasked; a test fails until it does."""


@dataclass(frozen=True)
class RunSettings:
    """The settings one run used; None where the run left the choice to its default.

    A view of the run's plan (`RunPlan.recorded()`, engine/protocol/plan.py), never
    filled another way, and read back into the next run's plan.

    `model` is the model of every persona that names none; `base_url_secret` is true
    when the `--base-url` given carried credentials, which are not stored.
    """

    model: str | None = None
    check_model: str | None = None
    synth_model: str | None = None
    base_url: str | None = None
    base_url_secret: bool = False
    timeout: float | None = None
    retries: int | None = None
    concurrency: int | None = None
    max_cost: float | None = None
    max_calls: int | None = None
    gate: int | None = None
    window: int | None = None
    max_answer_kb: int | None = None
    compact: bool = False
    early_stop: bool = False
    baseline: bool = False
    baseline_model: str | None = None
    tools: str | None = None
    """The MCP tools file (`--tools`), relative to the project folder when inside it."""
    max_tool_calls: int | None = None
    human_timeout: float | None = None
    """Seconds a person's seat (`run --human`) is waited for each round; None: as long as it takes."""

    def as_meta(self) -> dict[str, Any]:
        """The `run:` mapping to write: only the settings that are set, in a fixed order."""
        # `is`, not `in`: a setting of 0 (no retries, no calls) is recorded.
        return {
            f.name: value
            for f in fields(self)
            if (value := getattr(self, f.name)) is not None and value is not False
        }


def _number(value: Any, *, whole: bool) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) if whole else isinstance(value, int | float)


# name → (whole number?, least, most)
_LIMITS: dict[str, tuple[bool, float, float | None]] = {
    "timeout": (False, 0.0, None),
    "retries": (True, 0, MAX_RETRIES),
    "concurrency": (True, 1, MAX_CONCURRENCY),
    "max_cost": (False, 0.0, None),
    "max_calls": (True, 0, None),
    "gate": (True, 0, None),
    "window": (True, MIN_WINDOW, None),
    "max_answer_kb": (True, MIN_ANSWER_KB, None),
    "max_tool_calls": (True, 0, MAX_TOOL_CALLS),
    "human_timeout": (False, 0.0, None),
}
_FLAGS = ("base_url_secret", "compact", "early_stop", "baseline")
_TEXTS = (*MODEL_FIELDS, "base_url", "tools")


def parse_run_settings(value: Any, where: str = "debate.md") -> RunSettings:
    """Read and check the `run:` mapping (absent or null: nothing recorded yet)."""
    if value is None:
        return RunSettings()
    if not isinstance(value, dict):
        raise FormatError(f"{where}: 'run' must be a mapping of run settings, not {value!r}.")
    known = {f.name for f in fields(RunSettings)}
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        raise FormatError(f"{where}: 'run' has unknown settings {', '.join(unknown)}; remove them.")
    for name in _TEXTS:
        text = value.get(name)
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise FormatError(f"{where}: run.{name} must be a non-empty text, not {text!r}.")
    for name in _FLAGS:
        flag = value.get(name, False)
        if not isinstance(flag, bool):
            raise FormatError(f"{where}: run.{name} must be true or false, not {flag!r}.")
    for name, (whole, least, most) in _LIMITS.items():
        number = value.get(name)
        if number is None:
            continue
        kind = "a whole number" if whole else "a number"
        span = f"{least:g}" + (f"–{most:g}" if most is not None else " or more")
        if (
            not _number(number, whole=whole)
            or number < least
            or (most is not None and number > most)
        ):
            raise FormatError(f"{where}: run.{name} must be {kind}, {span}, not {number!r}.")
    for name in ("timeout", "human_timeout"):
        if value.get(name) == 0:
            raise FormatError(f"{where}: run.{name} must be more than 0 seconds.")
    return RunSettings(**{k: v for k, v in value.items() if v is not None})
