"""What `run` was asked to do: the request every step of setting up a run reads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dreamcontext_council.engine.model_calls.accounting import Budget
from dreamcontext_council.engine.model_calls.progress import Progress


@dataclass
class Launch:
    """Everything `run` was asked to do."""

    debate_id: str | None = None
    topic: str | None = None
    personas_spec: str | None = (
        None  # None: the defaults (engine/setup/defaults.py), else cognitive
    )
    options_spec: str | None = None
    rounds: int | None = None  # None: the default, compact (2) for a debate with attachments
    interrupt: bool = False
    attach: list[str] = field(default_factory=list)
    compact: bool = False
    early_stop: bool = False
    warm: bool = True  # round 1's warming (engine/protocol/warming.py); False: --no-warm
    baseline: bool = False  # before round 1, one solo answer of the synthesis model
    baseline_model: str | None = None
    model: str | None = None
    allow_commands: list[str] = field(default_factory=list)
    check_model: str | None = None
    synth_model: str | None = None
    base_url: str | None = None
    anthropic_base_url: str | None = None  # --anthropic-base-url: wins over ANTHROPIC_BASE_URL
    # None: what the debate recorded (engine/setup/remembered.py), else the default.
    timeout: float | None = None
    retries: int | None = None
    concurrency: int | None = None
    max_cost: float | None = None
    max_calls: int | None = None
    prices: str | None = None
    gate: int | None = None
    window: int | None = None
    max_answer_kb: int | None = None  # None: recorded, else DEFAULT_MAX_ANSWER_KB
    tools: str | None = None  # the MCP tools file personas may use (None: recorded, else none)
    no_tools: bool = False  # drop the recorded tools file: go on without research tools
    max_tool_calls: int | None = None  # per persona per round; None: recorded, else 4
    dry_run: bool = False
    resynthesize: bool = False
    promote: bool = False
    yes: bool = False
    quiet: bool = False
    only: str | None = None  # `--only slug,slug`
    humans: list[str] = field(default_factory=list)  # `--human SLUG`: seats a person answers
    human_timeout: float | None = None  # seconds a person's seat is waited for; None: recorded
    root: str | None = None
    tty: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    # Set by callers that are not a terminal (the MCP server): where progress goes, and
    # who hears the new debate's id as soon as its folder exists.
    progress: Progress | None = None
    on_created: Callable[[str], None] | None = None
    cancelled_as: str = "interrupted by Ctrl-C"  # what stopped a cancelled run, for run.json
    shared_budget: Budget | None = None  # limits shared with other runs in the process (eval)
