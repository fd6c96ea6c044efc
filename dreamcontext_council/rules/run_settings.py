"""debate.md's `run:` mapping: how `council run` runs this debate, so a resume runs it the same way.

Written by `council run` when it starts, read back by `council run <id>`. It holds
models, the server URL (never its credentials), limits and the synthesis window; never
a key. The Node tool ignores frontmatter keys it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from dreamcontext_council.errors import FormatError, UsageError
from dreamcontext_council.rules.limits import RUN_SPANS

DEFAULT_TIMEOUT = 120.0
DEFAULT_RETRIES = 4
DEFAULT_WINDOW = 100_000
DEFAULT_MAX_TOOL_CALLS = 4

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
    anthropic_base_url: str | None = None
    """The `--anthropic-base-url` given (without credentials), as `base_url` is openai's."""
    anthropic_base_url_secret: bool = False
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


_FLAGS = ("base_url_secret", "anthropic_base_url_secret", "compact", "early_stop", "baseline")
_TEXTS = (*MODEL_FIELDS, "base_url", "anthropic_base_url", "tools")
# The longest recorded value a refusal shows (a cloned folder's value may be anything).
_SHOWN_CHARS = 40


def check_run_shape(value: Any, where: str = "debate.md") -> None:
    """FormatError unless `run:` is absent or a mapping of known settings, each text a
    text and each flag true or false: what debate.md needs to be read at all. The numbers
    are checked when a run takes them (`parse_run_settings`), so a reader of the debate is
    never stopped by a limit only a run uses."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise FormatError(f"{where}: 'run' must be a mapping of run settings, not {_shown(value)}.")
    known = {f.name for f in fields(RunSettings)}
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        raise FormatError(f"{where}: 'run' has unknown settings {', '.join(unknown)}; remove them.")
    for name in _TEXTS:
        text = value.get(name)
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise FormatError(f"{where}: run.{name} must be a non-empty text, not {_shown(text)}.")
    for name in _FLAGS:
        flag = value.get(name, False)
        if not isinstance(flag, bool):
            raise FormatError(f"{where}: run.{name} must be true or false, not {_shown(flag)}.")


def parse_run_settings(value: Any, where: str = "debate.md") -> RunSettings:
    """Read and check the `run:` mapping (absent or null: nothing recorded yet).

    Each number passes the range of its flag (rules/limits.py RUN_SPANS), as `run` checks
    the flag: else UsageError, one line naming the setting, so `run <id>` stops with exit 2
    before any call. A cloned folder may record anything there."""
    check_run_shape(value, where)
    if value is None:
        return RunSettings()
    for name, span in RUN_SPANS.items():
        number = value.get(name)
        if number is not None and not span.holds(number):
            flag = "--" + name.replace("_", "-")
            raise UsageError(
                f"{where}: run.{name} is {_shown(number)}; it must be {span.wording()}, as "
                f"{flag} takes. Fix or remove it in debate.md's `run:`, or pass {flag}."
            )
    return RunSettings(**{k: v for k, v in value.items() if v is not None})


def _shown(value: Any) -> str:
    """A recorded value as a refusal shows it: its repr (control characters escaped), cut."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"
