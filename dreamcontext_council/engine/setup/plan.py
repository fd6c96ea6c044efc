"""From the command's options to the run's plan: the one place settings are resolved.

The options given this time, what the debate recorded of its last run (debate.md
`run:`, see engine/setup/remembered.py) and the defaults meet here, once, in
`resolve`; every step after it (consent, pre-flight, the estimate, the record, the
run) reads the `RunPlan` it returns, never the options. An option given wins, else
the recorded setting, else the default; a flag cannot be unsaid on a resume.

The models, the personas and the server URL have defaults a user sets once
(engine/setup/defaults.py), below the recorded setting: the environment, then the
project's `_dream_context/council.toml`, then the user's own `council.toml`, then the
built-in default. The plan says where each came from (`Seats.sources`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.accounting import PriceTable
from dreamcontext_council.engine.protocol.answer_cap import DEFAULT_MAX_ANSWER_KB
from dreamcontext_council.engine.protocol.plan import (
    Compression,
    Consent,
    Endpoints,
    Flags,
    Limits,
    NewDebate,
    PersonaSeat,
    Research,
    RunPlan,
    Seats,
)
from dreamcontext_council.engine.providers import consent
from dreamcontext_council.engine.providers.models import default_model
from dreamcontext_council.engine.research import session as research
from dreamcontext_council.engine.setup.defaults import (
    BASE_URL,
    ENV_NAMES,
    PERSONAS,
    Defaults,
    read_defaults,
)
from dreamcontext_council.engine.setup.remembered import persona_model
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder.paths import Root, find_root
from dreamcontext_council.rules.roster import PersonaSpec, with_persons
from dreamcontext_council.rules.run_settings import (
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_WINDOW,
    MODEL_FIELDS,
    RunSettings,
)
from dreamcontext_council.rules.seats import HUMAN_MODEL

T = TypeVar("T")
D = TypeVar("D")

DEFAULT_PERSONAS = "cognitive"


def resolve(
    request: Launch,
    files: DebateFiles | None,
    roster: list[PersonaSpec] | None,
    previous: RunSettings,
    *,
    prices: PriceTable | None = None,
    only: list[str] | None = None,
    options: list[dict[str, str]] | None = None,
    attachments: list[Path] | None = None,
    defaults: Defaults | None = None,
) -> RunPlan:
    """The plan of this run: `request` settled against `previous`, then the defaults.

    `files` is the debate a resume runs (None: `request.topic` makes one from `roster`,
    None for `--personas auto`); `prices`, `only`, `options` and `attachments` are the
    request's, already read and checked; `defaults` the layers below the recorded
    settings (None: read them, `defaults_for`). Raises `UsageError` for options that say
    opposite things or a recorded URL whose credentials were not stored, and reads the
    tools file (engine/research/session.py) without asking consent for it.
    """
    if defaults is None:
        defaults = defaults_for(request, files)
    if roster is not None and request.humans:
        roster = with_persons(roster, request.humans)  # the same again when already seated
    tools_plan = _research(request, files, previous)
    for flag, secret, given in (
        ("--base-url", previous.base_url_secret, request.base_url),
        ("--anthropic-base-url", previous.anthropic_base_url_secret, request.anthropic_base_url),
    ):
        if secret and given is None:
            raise UsageError(
                f"This debate ran on a {flag} that carried credentials, which are never "
                f"stored; pass {flag} again."
            )
    tools = request.tools or previous.tools
    if tools_plan is not None or request.no_tools:  # else what was recorded stays recorded
        tools = str(tools_plan.path) if tools_plan else None
    chosen = {name: _model(name, request, previous, defaults) for name in MODEL_FIELDS}
    if chosen["model"] is None:
        chosen["model"] = (default_model(request.env), _default_source(request.env))
    models = {name: c[0] if c else None for name, c in chosen.items()}
    run_model = models["model"] or default_model(request.env)
    seats = Seats(
        model=run_model,
        check_model=models["check_model"],
        synth_model=models["synth_model"],
        baseline_model=models["baseline_model"],
        personas=_personas(files, roster, previous, run_model, request.humans),
        auto=files is None and personas_setting(request, defaults)[0] == "auto",
        sources=MappingProxyType({name: c[1] for name, c in chosen.items() if c}),
        # Named by the user: a flag, or a default they set (not the record, not the built-in one).
        model_given=request.model is not None
        or (not previous.model and defaults.get("model") is not None),
    )
    base_url, url_source, url_named = _base_url(request, previous, defaults)
    used = {  # the defaults this plan took, by setting
        name: setting
        for name, source in (
            *((n, c[1] if c else None) for n, c in chosen.items()),
            (BASE_URL, url_source),
        )
        if (setting := defaults.get(name)) is not None and setting.source == source
    }
    asked = [
        consent.FileDefault(name, setting.value, setting.source)
        for name, setting in used.items()
        if not setting.trusted
    ]
    # The models the user's own defaults chose (environment, their file) are theirs, named.
    own = [s.value for name, s in used.items() if s.trusted and name in MODEL_FIELDS]
    new = None
    if files is None and request.topic is not None:
        new = NewDebate(
            topic=request.topic,
            options=tuple(MappingProxyType(o) for o in options or []),
            rounds=request.rounds,
            interrupt=request.interrupt,
            attachments=tuple(
                attachments if attachments is not None else map(Path, request.attach)
            ),
            roster=tuple(roster) if roster is not None else None,
        )
    return RunPlan(
        debate_id=request.debate_id,
        new=new,
        seats=seats,
        endpoints=Endpoints(
            base_url=base_url,
            source=url_source,
            anthropic_base_url=request.anthropic_base_url or previous.anthropic_base_url,
            anthropic_source="--anthropic-base-url"
            if request.anthropic_base_url
            else "debate.md run.anthropic_base_url"
            if previous.anthropic_base_url
            else None,
        ),
        limits=Limits(
            timeout=_first(request.timeout, previous.timeout, DEFAULT_TIMEOUT),
            retries=_first(request.retries, previous.retries, DEFAULT_RETRIES),
            concurrency=_first(request.concurrency, previous.concurrency, None),
            max_cost=_first(request.max_cost, previous.max_cost, None),
            max_calls=_first(request.max_calls, previous.max_calls, None),
            max_answer_kb=_first(
                request.max_answer_kb, previous.max_answer_kb, DEFAULT_MAX_ANSWER_KB
            ),
            max_tool_calls=_first(
                request.max_tool_calls, previous.max_tool_calls, DEFAULT_MAX_TOOL_CALLS
            ),
            human_timeout=_first(request.human_timeout, previous.human_timeout, None),
            prices=prices if prices is not None else PriceTable(),
            shared_budget=request.shared_budget,
        ),
        research=Research(tools=tools, plan=tools_plan),
        compression=Compression(
            gate=_first(request.gate, previous.gate, None),
            window=_first(request.window, previous.window, DEFAULT_WINDOW),
        ),
        # A flag cannot be unsaid on a resume: once a run was compact, it stays so.
        flags=Flags(
            compact=request.compact or previous.compact,
            early_stop=request.early_stop or previous.early_stop,
            baseline=request.baseline or previous.baseline,
            only=tuple(only) if only is not None else None,
            resynthesize=request.resynthesize,
            promote=request.promote,
            dry_run=request.dry_run,
            warm=request.warm,
        ),
        consent=Consent(
            commands=frozenset(_named_commands(request) | consent.named_commands(own)),
            base_url=url_named,  # else the folder's own, which needs consent
            anthropic_base_url=request.anthropic_base_url,
            asked=tuple(asked),
        ),
        previous=previous,
        env=MappingProxyType(dict(request.env)),
        root=request.root,
        yes=request.yes,
        quiet=request.quiet,
        tty=request.tty,
        progress=request.progress,
        on_created=request.on_created,
        cancelled_as=request.cancelled_as,
    )


def defaults_for(request: Launch, files: DebateFiles | None) -> Defaults:
    """The defaults layers of a run: the environment, the project's file in the root (the
    debate's, else the one `request` names or finds), the user's file."""
    root: Root | None = files.root if files is not None else find_root(request.root)
    return read_defaults(request.env, root if root is not None and root.path.is_dir() else None)


def personas_setting(request: Launch, defaults: Defaults) -> tuple[str, str]:
    """The personas of a new debate and where that came from: `--personas`, else the
    defaults (`DREAMCONTEXT_PERSONAS`, a `council.toml`), else the cognitive preset."""
    if request.personas_spec is not None:
        return request.personas_spec, "--personas"
    setting = defaults.get(PERSONAS)
    if setting is not None:
        return setting.value, setting.source
    return DEFAULT_PERSONAS, "the default"


def _model(
    name: str, request: Launch, previous: RunSettings, defaults: Defaults
) -> tuple[str, str] | None:
    """A setting of `MODEL_FIELDS` and where it came from: the flag, the record, a default."""
    if given := getattr(request, name):
        return given, "--" + name.replace("_", "-")
    if recorded := getattr(previous, name):
        return recorded, f"debate.md run.{name}"
    setting = defaults.get(name)
    return (setting.value, setting.source) if setting is not None else None


def _default_source(env: Mapping[str, str]) -> str:
    if env.get("ANTHROPIC_API_KEY"):
        return "the default: ANTHROPIC_API_KEY is set"
    if env.get("OPENAI_API_KEY"):
        return "the default: OPENAI_API_KEY is set"
    return "the default: no API key is set"


def _base_url(
    request: Launch, previous: RunSettings, defaults: Defaults
) -> tuple[str | None, str | None, str | None]:
    """The server URL, where it came from, and the URL the user named (consent's, None: a
    recorded URL or the project's, which need consent, or none at all).

    `OPENAI_BASE_URL` stays the SDK's to read: it is not put in the plan, nor recorded."""
    if request.base_url:
        return request.base_url, "--base-url", request.base_url
    if previous.base_url:
        return previous.base_url, "debate.md run.base_url", None
    setting = defaults.get(BASE_URL)
    if setting is None:
        return None, None, None
    if setting.source == ENV_NAMES[BASE_URL]:
        return None, setting.source, None
    return setting.value, setting.source, setting.value if setting.trusted else None


def _first(given: T | None, stored: T | None, default: D) -> T | D:
    """The option given this time, else the recorded one, else the default."""
    if given is not None:
        return given
    return stored if stored is not None else default


def _personas(
    files: DebateFiles | None,
    roster: list[PersonaSpec] | None,
    previous: RunSettings,
    run_model: str,
    humans: list[str],
) -> tuple[PersonaSeat, ...]:
    """Each persona's model: the debate's personas on a resume, else the roster's (for
    `--personas auto`, none yet). A seat `--human` names is a person's; one it names that
    the council lacks is a new seat, added when the run records its plan."""
    persons = list(dict.fromkeys(humans))
    seats: list[PersonaSeat] = []
    if files is not None:
        for slug in files.debate().personas:
            model, follows = persona_model(files.context(slug).model, previous, run_model)
            seats.append(PersonaSeat(slug, model, follows))
    else:
        seats = [PersonaSeat(p.slug, p.model or run_model, not p.model) for p in roster or []]
    seats = [PersonaSeat(s.slug, HUMAN_MODEL, False) if s.slug in persons else s for s in seats]
    known = {s.slug for s in seats}
    seats += [PersonaSeat(slug, HUMAN_MODEL, False) for slug in persons if slug not in known]
    return tuple(seats)


def _research(
    request: Launch, files: DebateFiles | None, previous: RunSettings
) -> research.ResearchPlan | None:
    """The research tools of this run; a resynthesis asks no persona, so starts no server."""
    if request.no_tools:
        if request.tools:
            raise UsageError("--tools and --no-tools say opposite things; pass one of them.")
        return None
    if request.resynthesize and not request.tools:
        return None
    return research.plan(request.tools, previous.tools, files.id if files else None)


def _named_commands(request: Launch) -> set[str]:
    """The command lines the user named this time: in model flags and `--allow-command`.

    Read from the options, not the plan, so a model the folder recorded is not among them."""
    models = (getattr(request, name) for name in MODEL_FIELDS)
    return consent.named_commands(models, request.allow_commands)
