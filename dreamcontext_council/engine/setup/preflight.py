"""Provider pre-flight: before a folder is created or a call is made, every model can be called.

One step, run by `launch` before it writes anything: the folder's `command:` models
have the user's consent (engine/providers/consent.py), every anthropic model has credentials,
every openai model has a key (or a server URL: a local server needs none), every
`command:` program resolves the way the command provider will start it, and every
server URL in use accepts a TCP connection. Before those, the plan itself: a server
URL set with no model named (the calls would go to the scripted stand-in) and a
`--max-cost` over a model with no known price (it could not be enforced) are refused. A problem stops the run with exit 2 and
one line naming the persona, the model and the fix; `--dry-run` reports the same line.

It checks what can be known without a request; then `key_preflight.refused_keys` asks each
server once whether it takes the key. A server that takes the key but not the model fails
on the first call.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from dreamcontext_council.actions import convene
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.protocol.plan import RunPlan, Seats
from dreamcontext_council.engine.providers import consent
from dreamcontext_council.engine.providers.keys import (
    answer_keys,
    hide_keys,
    url_without_credentials,
)
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import BASE_URL_ENVS
from dreamcontext_council.errors import ConsentRequired, ProviderUnavailable, UsageError

CONNECT_TIMEOUT_S = 3.0

# What the anthropic SDK accepts besides ANTHROPIC_API_KEY, in its own order.
ANTHROPIC_TOKEN_ENVS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE")
ANTHROPIC_FEDERATION_ENVS = ("ANTHROPIC_FEDERATION_RULE_ID", "ANTHROPIC_ORGANIZATION_ID")
ANTHROPIC_IDENTITY_ENVS = ("ANTHROPIC_IDENTITY_TOKEN", "ANTHROPIC_IDENTITY_TOKEN_FILE")


@dataclass(frozen=True)
class ModelUse:
    """Who calls which model, and the option that changes it (None: the persona's own)."""

    who: str
    model: str
    option: str | None


@dataclass(frozen=True)
class Problem:
    """Why `model` cannot be called now, and what to do about it."""

    who: str
    model: str
    problem: str
    fix: str


def model_uses(plan: RunPlan, files: DebateFiles | None) -> list[ModelUse]:
    """Every model the run will call: the plan's seats this run asks, from the debate's state."""
    seats = plan.seats
    flags = plan.flags
    uses: list[ModelUse] = []
    if files is not None:
        debate = files.debate()
        phase = debate.status.phase
        asks_personas = not flags.resynthesize and phase not in ("synthesizing", "complete")
        rounds_left = debate.current_round < debate.rounds_planned
        if asks_personas:
            for seat in seats.model_seats():  # a person's seat calls nothing
                option = "--model" if seat.follows_run else None
                uses.append(ModelUse(f"persona {seat.slug}", seat.model, option))
        checks = asks_personas and rounds_left and debate.rounds_planned > 2
        synthesizes = phase != "complete" or flags.resynthesize
        solo = flags.baseline and phase != "complete" and not files.paths.baseline.exists()
    else:
        for seat in seats.model_seats():  # a person's seat calls nothing
            option = "--model" if seat.follows_run else None
            uses.append(ModelUse(f"persona {seat.slug}", seat.model, option))
        if seats.auto:
            uses.append(ModelUse("the personas --personas auto writes", seats.model, "--model"))
            uses.append(_orchestrator(seats, "--personas auto"))
        planned = convene.planned_rounds(
            plan.new.rounds if plan.new else None, grounded=plan.grounded()
        )
        checks, synthesizes = planned > 2, True
        solo = flags.baseline
    if checks and not flags.compact:
        uses.append(_orchestrator(seats, "the convergence check"))
    if synthesizes:
        uses.append(ModelUse("the synthesis", seats.synthesis(), _synthesis_option(seats)))
    if solo:
        option = "--baseline-model" if seats.baseline_model else _synthesis_option(seats)
        uses.append(ModelUse("the solo answer (--baseline)", seats.baseline(), option))
    if flags.only is not None:
        uses = [u for u in uses if u.who in {f"persona {slug}" for slug in flags.only}]
    return uses


def _synthesis_option(seats: Seats) -> str:
    return "--synth-model" if seats.synth_model else "--model"


def _orchestrator(seats: Seats, who: str) -> ModelUse:
    option = "--check-model" if seats.check_model else "--model"
    return ModelUse(who, seats.check(), option)


def find_problems(plan: RunPlan, uses: list[ModelUse]) -> list[Problem]:
    """What stands in the way of each use; servers are each connected to once."""
    reached: dict[str, str | None] = {}
    problems = []
    for use in uses:
        found = _model_problem(use, plan, reached)
        if found is not None:
            problem, fix = found
            problems.append(Problem(use.who, use.model, problem, fix + _switch(use)))
    return problems


def _switch(use: ModelUse) -> str:
    if use.option is None:
        return ", or give the persona another `model:` in its context-and-persona.md"
    return f", or pass {use.option} to run on another model"


def _model_problem(
    use: ModelUse, plan: RunPlan, reached: dict[str, str | None]
) -> tuple[str, str] | None:
    spec = parse_model(use.model)
    env = plan.env
    if spec.provider == "anthropic":
        if anthropic_credentials(env) is None:
            return "no Anthropic credentials", "set ANTHROPIC_API_KEY"
        gateway = plan.endpoints.anthropic_base_url
        return _server_problem(
            gateway or env.get(BASE_URL_ENVS["anthropic"]),
            plan.endpoints.anthropic_source or "ANTHROPIC_BASE_URL",
            env,
            reached,
        )
    if spec.provider == "openai":
        given = plan.endpoints.base_url
        url = given or env.get(BASE_URL_ENVS["openai"]) or None
        if not env.get("OPENAI_API_KEY") and url is None:
            return "no OpenAI key", "set OPENAI_API_KEY (or --base-url for a local server)"
        return _server_problem(url, "--base-url" if given else "OPENAI_BASE_URL", env, reached)
    if spec.provider == "command":
        return _program_problem(spec.model, env)
    return None


def anthropic_credentials(env: Mapping[str, str]) -> str | None:
    """Where the anthropic SDK will find credentials, or None when it finds none.

    Its order: ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_PROFILE, workload
    identity federation variables, then the active profile on disk
    (`$ANTHROPIC_CONFIG_DIR` or `~/.config/anthropic`, `configs/<active>.json`).
    """
    for name in ANTHROPIC_TOKEN_ENVS:
        if env.get(name):
            return name
    if all(env.get(n) for n in ANTHROPIC_FEDERATION_ENVS) and any(
        env.get(n) for n in ANTHROPIC_IDENTITY_ENVS
    ):
        return "workload identity federation"
    config = env.get("ANTHROPIC_CONFIG_DIR")
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    folder = Path(config) if config else home / ".config" / "anthropic"
    try:
        active = (folder / "active_config").read_text(encoding="utf-8").strip() or "default"
    except (OSError, UnicodeDecodeError):
        active = "default"
    profile = folder / "configs" / f"{active}.json"
    return f"profile {active}" if "/" not in active and profile.is_file() else None


def _program_problem(line: str, env: Mapping[str, str]) -> tuple[str, str] | None:
    """Whether the command provider can start `line`: split like a shell, no shell."""
    try:
        argv = shlex.split(line)
    except ValueError:
        return "its command line has unbalanced quotes", "fix the command line"
    if not argv:
        return "its command line is empty", "name a program after `command:`"
    program = argv[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program)
        if not path.is_file():
            return f"program {program} does not exist", "fix the path"
        if not os.access(path, os.X_OK):
            return f"program {program} is not executable", f"run `chmod +x {program}`"
        return None
    # The provider passes its environment to the program, so the lookup uses its PATH.
    if shutil.which(program, path=os.pathsep.join(os.get_exec_path(dict(env)))) is None:
        return f"program {program} is not on PATH", "install it or add its folder to PATH"
    return None


def _server_problem(
    url: str | None, source: str, env: Mapping[str, str], reached: dict[str, str | None]
) -> tuple[str, str] | None:
    if not url:
        return None
    if url not in reached:
        reached[url] = unreachable(url)
    why = reached[url]
    if why is None:
        return None
    shown = url_without_credentials(url)[0]
    return f"server {shown} {why}", f"start it or fix {source}"


def unreachable(url: str) -> str | None:
    """Why `url`'s server does not accept a TCP connection, or None when it does.

    Behind an HTTP proxy (`HTTPS_PROXY`, ...) the proxy, not the server, is called:
    nothing is checked then.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "is not a valid URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "is not an http:// or https:// URL"
    proxies = urllib.request.getproxies_environment()
    # Not in typeshed, but public since Python 3.0: NO_PROXY matching as the SDKs do it.
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if proxies.get(parts.scheme) and not bypass(parts.hostname, proxies):
        return None
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=CONNECT_TIMEOUT_S):
            return None
    except ConnectionRefusedError:
        return "refused the connection"
    except TimeoutError:
        return f"did not answer within {CONNECT_TIMEOUT_S:g} s"
    except socket.gaierror:
        return f"has an unknown host name {parts.hostname}"
    except OSError as exc:
        return f"cannot be reached ({exc.strerror or exc})"


def summary(problems: list[Problem], env: Mapping[str, str]) -> str:
    """One line for every problem, those of one model and cause grouped; no key in it."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for p in problems:
        groups.setdefault((p.model, p.problem, p.fix), []).append(p.who)
    parts = []
    for (model, problem, fix), who in groups.items():
        parts.append(f"{names_of(who)} (model {model}): {problem}; {fix}")
    line = consent.visible("Cannot run: " + " | ".join(parts) + ". Nothing was written.")
    return hide_keys(line, answer_keys((env, os.environ), []))


def _calls_openai(uses: list[ModelUse]) -> bool:
    """Whether the run calls an OpenAI-compatible server, where a `--base-url` leads."""
    return _calls(uses, "openai")


def _calls(uses: list[ModelUse], provider: str) -> bool:
    """Whether the run calls a model of `provider`."""
    return any(_provider(use.model) == provider for use in uses)


def _provider(model: str) -> str | None:
    try:
        return parse_model(model).provider
    except UsageError:
        return None  # refused with the accepted forms by find_problems


def names_of(who: list[str]) -> str:
    """`personas a, b and the synthesis` from `persona a`, `persona b`, `the synthesis`."""
    slugs = [w.removeprefix("persona ") for w in who if w.startswith("persona ")]
    names = [f"persona{'s' if len(slugs) > 1 else ''} {', '.join(slugs)}"] if slugs else []
    names += [w for w in who if not w.startswith("persona ")]
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]


def check(
    plan: RunPlan,
    files: DebateFiles | None,
    uses: list[ModelUse],
    trust: consent.FolderTrust | None = None,
) -> str | None:
    """The pre-flight of a plan: consent first, then every model in use.

    `plan.consent.base_url` is the `--base-url` given this time; without one, the URL the folder
    recorded gets the calls (and the key) only with consent, checked before any server
    is so much as connected to; so do the programs and URL the project's `council.toml`
    chose. Returns None when the run can start. A `--dry-run` gets
    the one line that says what would fail; a run gets `ConsentRequired` or
    `ProviderUnavailable` (exit 2). `trust` is the folder's allowances when the caller
    holds them already (the trust file is read once, if at all, for the whole pre-flight).
    """
    try:
        consent.require_named_defaults(
            plan.consent.asked, plan.consent.commands, calls_openai=_calls_openai(uses)
        )
        if files is not None:
            trust = trust or consent.FolderTrust(files, plan.env)
            consent.require_consent(files, set(plan.consent.commands), plan.env, trust)
            if plan.consent.base_url is None and _calls_openai(uses):
                consent.require_base_url(files, plan.endpoints.base_url, plan.env, trust)
            if plan.consent.anthropic_base_url is None and _calls(uses, "anthropic"):
                consent.require_base_url(
                    files,
                    plan.endpoints.anthropic_base_url,
                    plan.env,
                    trust,
                    setting="anthropic_base_url",
                    flag="--anthropic-base-url",
                )
    except ConsentRequired as refused:
        if not plan.flags.dry_run:
            raise
        return str(refused)
    refusal = unnamed_model(plan, uses) or unpriced_cap(plan, uses)
    if refusal is not None:
        if plan.flags.dry_run:
            return refusal
        raise UsageError(refusal)
    problems = find_problems(plan, uses)
    if not problems:
        return None
    line = summary(problems, plan.env)
    if plan.flags.dry_run:
        return line
    raise ProviderUnavailable(line)


def unnamed_model(plan: RunPlan, uses: list[ModelUse]) -> str | None:
    """A server URL is set but no model is named: the calls would go to the scripted
    stand-in, never to that server. The line that asks for the model, or None."""
    seats = plan.seats
    if seats.model_given or _provider(seats.model) != "scripted":
        return None
    if not any(use.option == "--model" and use.model == seats.model for use in uses):
        return None  # every seat names its own model
    given = plan.endpoints.base_url
    recorded = plan.endpoints.source or "--base-url"
    for url, source, provider in (
        (given, recorded, "openai"),
        (plan.env.get(BASE_URL_ENVS["openai"]), BASE_URL_ENVS["openai"], "openai"),
        (plan.env.get(BASE_URL_ENVS["anthropic"]), BASE_URL_ENVS["anthropic"], "anthropic"),
    ):
        if url:
            shown = url_without_credentials(url)[0]
            return consent.visible(
                f"Cannot run: {source} is set ({shown}) but no model is named, so every call "
                f"would go to the built-in scripted stand-in, not to that server; pass "
                f"--model {provider}:<model> (e.g. --model {provider}:llama3.1), or --model "
                "scripted to run offline. Nothing was written."
            )
    return None


def unpriced_cap(plan: RunPlan, uses: list[ModelUse]) -> str | None:
    """A `--max-cost` the run cannot enforce: a model in use has no known price, so its
    calls would count as $0. The line that says how to price it, or None."""
    cap = plan.limits.max_cost
    if cap is None:
        return None
    unpriced: dict[str, str] = {}
    for use in uses:
        try:
            spec = parse_model(use.model)
        except UsageError:
            continue  # refused with the accepted forms by find_problems
        if plan.limits.prices.price(spec) is None:
            unpriced.setdefault(str(spec), spec.model)
    if not unpriced:
        return None
    recorded = " (recorded by an earlier run)" if plan.previous.max_cost is not None else ""
    example = next(iter(unpriced.values()))
    return consent.visible(
        f"Cannot run: --max-cost ${cap:g}{recorded} cannot be enforced: no price is known "
        f"for {', '.join(sorted(unpriced))}, so its calls would count as $0. Pass --prices "
        f'FILE, a JSON table like {{"{example}": [0.5, 1.5]}} (dollars per million input and '
        "output tokens), or cap the run with --max-calls N instead. Nothing was written."
    )
