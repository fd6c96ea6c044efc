"""A run's plan: every setting of one `council run`, resolved once and never changed after.

`engine/setup/plan.py` builds it from the command's options, what the debate recorded
of its last run and the defaults; consent, the pre-flight, the `--dry-run` estimate,
the record in debate.md (`recorded()`), the providers (`provider_settings()`) and the
run itself (`CouncilRun`) read it, and nothing after it reads the options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from dreamcontext_council.engine.model_calls.accounting import Budget, PriceTable
from dreamcontext_council.engine.model_calls.progress import Progress
from dreamcontext_council.engine.prompting.synthesis_input import CompressionSettings
from dreamcontext_council.engine.protocol.answer_cap import DEFAULT_MAX_ANSWER_KB
from dreamcontext_council.engine.providers.consent import FileDefault
from dreamcontext_council.engine.providers.keys import url_without_credentials
from dreamcontext_council.engine.providers.registry import ProviderSettings
from dreamcontext_council.rules.roster import PersonaSpec
from dreamcontext_council.rules.run_settings import (
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_WINDOW,
    MODEL_FIELDS,
    RunSettings,
)
from dreamcontext_council.rules.seats import is_person

if TYPE_CHECKING:  # the tools file's reader is loaded only by a run with research tools
    from dreamcontext_council.engine.research.session import ResearchPlan


@dataclass(frozen=True)
class PersonaSeat:
    """One persona's model, and whether it follows the run's model (`--model` moves it).

    A seat whose model is `human` (rules/seats.py) is a person's: no model is called for
    it, nothing is checked or priced for it, and the run waits for its entries."""

    slug: str
    model: str
    follows_run: bool

    @property
    def person(self) -> bool:
        """Whether a person answers this seat (`run --human`, `model: human`)."""
        return is_person(self.model)


@dataclass(frozen=True)
class Seats:
    """The model of every seat: the fields of `MODEL_FIELDS`, then the personas.

    `model` is the run's model (every persona that names none); the other three are
    None where they follow it. `personas` are the debate's (or the roster's) personas;
    `auto` is true when `--personas auto` is still to write them. `sources` says where
    each setting of `MODEL_FIELDS` that is set came from (`--model`, `debate.md run.model`,
    `DREAMCONTEXT_MODEL`, `_dream_context/council.toml`, the user's file, the default).
    """

    model: str
    check_model: str | None = None
    synth_model: str | None = None
    baseline_model: str | None = None
    personas: tuple[PersonaSeat, ...] = ()
    auto: bool = False
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    model_given: bool = False  # the run's model was named (a flag, a variable, a config file)

    def check(self) -> str:
        """The model of the orchestrator's calls (the convergence check, `--personas auto`):
        `--check-model`, else the synthesis model, so it is not the debaters' own model."""
        return self.check_model or self.synth_model or self.model

    def synthesis(self) -> str:
        return self.synth_model or self.model

    def baseline(self) -> str:
        """The solo answer's model: `--baseline-model`, else the synthesis model."""
        return self.baseline_model or self.synthesis()

    def described(self, name: str) -> str:
        """A setting of `MODEL_FIELDS` as the user reads it: `openai:gpt-4o (from …)`."""
        model = getattr(self, name)
        source = self.sources.get(name)
        return f"{model} (from {source})" if source else str(model)

    def model_seats(self) -> tuple[PersonaSeat, ...]:
        """The personas a model answers: every seat but a person's."""
        return tuple(seat for seat in self.personas if not seat.person)

    def person_seats(self) -> tuple[PersonaSeat, ...]:
        """The personas a person answers."""
        return tuple(seat for seat in self.personas if seat.person)

    def models(self) -> dict[str, str | None]:
        """Each setting of `MODEL_FIELDS` by name: the one list of fields that name a model."""
        return {name: getattr(self, name) for name in MODEL_FIELDS}


@dataclass(frozen=True)
class Endpoints:
    """Where the calls go: `base_url` for OpenAI-compatible servers (None: the default, or
    `OPENAI_BASE_URL`, which the SDK reads itself); `source` says where it came from."""

    base_url: str | None = None
    source: str | None = None
    anthropic_base_url: str | None = None
    """The anthropic provider's server (`--anthropic-base-url`, or recorded; None: the
    default, or `ANTHROPIC_BASE_URL`, which the SDK reads itself)."""
    anthropic_source: str | None = None


@dataclass(frozen=True)
class Limits:
    """How long, how often, how much: as settled (given, else recorded, else the default)."""

    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    concurrency: int | None = None
    max_cost: float | None = None
    max_calls: int | None = None
    max_answer_kb: int = DEFAULT_MAX_ANSWER_KB
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    human_timeout: float | None = None  # seconds a person's seat is waited for; None: forever
    prices: PriceTable = field(default_factory=PriceTable)
    shared_budget: Budget | None = None  # limits shared with other runs in the process (eval)

    def answer_kb(self) -> int:
        """The answer cap in KB a run applies (a cap of 0 means the default)."""
        return self.max_answer_kb or DEFAULT_MAX_ANSWER_KB


@dataclass(frozen=True)
class Research:
    """The research tools: `tools` is the file recorded; `plan` is what this run starts
    (None: no tool server, as for a resynthesis that names no file)."""

    tools: str | None = None
    plan: ResearchPlan | None = None


@dataclass(frozen=True)
class Compression:
    """The synthesis gate and window in characters (`--gate`, `--window`)."""

    gate: int | None = None
    window: int = DEFAULT_WINDOW

    def settings(self) -> CompressionSettings:
        return CompressionSettings(gate_chars=self.gate, window_chars=self.window or DEFAULT_WINDOW)


@dataclass(frozen=True)
class Flags:
    """What this run does besides debating, and how it stops."""

    compact: bool = False
    early_stop: bool = False  # 90% twice in a row ends the debating without asking the check
    baseline: bool = False  # before round 1, one solo answer (baseline.md)
    only: tuple[str, ...] | None = None  # answer only these personas of the running round
    resynthesize: bool = False
    promote: bool = False
    dry_run: bool = False
    # Round 1 starts one call per model first when the shared prompt is large, so the others
    # read its cache (`--no-warm` turns it off).
    warm: bool = True


@dataclass(frozen=True)
class NewDebate:
    """The debate a `--topic` run makes, once its consent and pre-flight have passed."""

    topic: str
    options: tuple[Mapping[str, str], ...] = ()
    rounds: int | None = None
    interrupt: bool = False
    attachments: tuple[Path, ...] = ()
    roster: tuple[PersonaSpec, ...] | None = None  # None: `--personas auto`


@dataclass(frozen=True)
class Consent:
    """What the user named on this command line: its naming is the consent to it.

    `commands` are the `command:` models and `--allow-command`s given (never a
    recorded one), and those the user's own defaults chose (the environment, their config
    file); `base_url` is the `--base-url` given, or the user's file's. `asked` are the
    programs and URL the project's file chose, which run only when named
    (`consent.require_named_defaults`)."""

    commands: frozenset[str] = frozenset()
    base_url: str | None = None
    anthropic_base_url: str | None = None  # the --anthropic-base-url given this time
    asked: tuple[FileDefault, ...] = ()


@dataclass(frozen=True)
class RunPlan:
    """Everything one `council run` does, resolved once (engine/setup/plan.py)."""

    debate_id: str | None
    new: NewDebate | None
    seats: Seats
    endpoints: Endpoints
    limits: Limits
    research: Research
    compression: Compression
    flags: Flags
    consent: Consent
    previous: RunSettings  # what the debate recorded of its last run
    env: Mapping[str, str]
    root: str | None = None
    yes: bool = False
    quiet: bool = False
    tty: bool = False
    # Set by callers that are not a terminal (the MCP server): where progress goes, and
    # who hears the new debate's id as soon as its folder exists.
    progress: Progress | None = None
    on_created: Callable[[str], None] | None = None
    cancelled_as: str = "interrupted by Ctrl-C"  # what stopped a cancelled run, for run.json

    def recorded(self) -> RunSettings:
        """What debate.md records of this run (`run:`): no key, no credentials in the URL."""
        url = self.endpoints.base_url
        base_url, secret = url_without_credentials(url) if url else (None, False)
        gateway = self.endpoints.anthropic_base_url
        anthropic_url, anthropic_secret = (
            url_without_credentials(gateway) if gateway else (None, False)
        )
        limits = self.limits
        return RunSettings(
            **self.seats.models(),
            base_url=base_url,
            base_url_secret=secret,
            anthropic_base_url=anthropic_url,
            anthropic_base_url_secret=anthropic_secret,
            timeout=limits.timeout,
            retries=limits.retries,
            concurrency=limits.concurrency,
            max_cost=limits.max_cost,
            max_calls=limits.max_calls,
            gate=self.compression.gate,
            window=self.compression.window,
            max_answer_kb=limits.max_answer_kb,
            compact=self.flags.compact,
            early_stop=self.flags.early_stop,
            baseline=self.flags.baseline,
            tools=self.research.tools,
            max_tool_calls=limits.max_tool_calls,
            human_timeout=limits.human_timeout,
        )

    def provider_settings(self) -> ProviderSettings:
        """The providers' settings: timeout, retries, concurrency per provider, server URL,
        and the answer cap every answer is read within."""
        return ProviderSettings.for_run(
            self.limits.timeout,
            self.limits.retries,
            self.limits.concurrency,
            self.endpoints.base_url,
            self.limits.answer_kb(),
            anthropic_base_url=self.endpoints.anthropic_base_url,
        )

    def grounded(self) -> bool:
        """Whether a new debate reads material (attachments or research tools)."""
        return bool((self.new is not None and self.new.attachments) or self.research.tools)
