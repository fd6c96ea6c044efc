"""From the `run` command's options to a finished (or paused) run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from dataclasses import replace
from typing import Any

from dreamcontext_council.actions import convene
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.model_calls.accounting import (
    ORCHESTRATOR_CALLER,
    load_prices,
)
from dreamcontext_council.engine.model_calls.progress import make_progress
from dreamcontext_council.engine.protocol.answer_cap import DEFAULT_MAX_ANSWER_KB
from dreamcontext_council.engine.protocol.only import only_round, parse_only
from dreamcontext_council.engine.protocol.run import RUN_LOCK_NAME, CouncilRun, RunOptions
from dreamcontext_council.engine.providers import consent
from dreamcontext_council.engine.providers.models import default_model, parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet, ProviderSettings
from dreamcontext_council.engine.research import session as research
from dreamcontext_council.engine.setup import remembered
from dreamcontext_council.engine.setup.preflight import ModelUse, model_uses
from dreamcontext_council.engine.setup.preflight import check as check_providers
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.errors import (
    Interrupted,
    ProviderError,
    ProviderUnavailable,
    UsageError,
)
from dreamcontext_council.folder.paths import Root, require_root, root_for_new
from dreamcontext_council.rules.roster import PersonaSpec, check_roster_size, load_roster
from dreamcontext_council.rules.run_settings import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_WINDOW,
    MODEL_FIELDS,
    RunSettings,
)

SCRIPTED_NOTICE = (
    "No API key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY): running on the built-in scripted "
    "provider, an offline deterministic stand-in that shows the whole flow. It is not a model."
)
SCRIPTED_SOME_NOTICE = (
    "Some calls go to the built-in scripted provider (model `scripted`): an offline "
    "deterministic stand-in, not a model."
)
AUTO_COUNT = 4


def _provider_set(request: Launch) -> ProviderSet:
    concurrency = (
        {name: request.concurrency for name in ("anthropic", "openai", "command", "scripted")}
        if request.concurrency
        else {}
    )
    base_urls = {"openai": request.base_url} if request.base_url else {}
    settings = ProviderSettings(
        timeout_s=request.timeout if request.timeout is not None else DEFAULT_TIMEOUT,
        max_retries=request.retries if request.retries is not None else DEFAULT_RETRIES,
        concurrency=concurrency,
        base_urls=base_urls,
    )
    return ProviderSet(settings, env=request.env)


async def launch(
    request: Launch, echo: Callable[[str], None], shared: ProviderSet | None = None
) -> dict[str, Any]:
    """Create the debate if asked, check the ground, then run it; returns a summary.

    With `shared`, calls go through those providers (their per-provider limits hold
    across every debate using them) and they stay open for the caller to close.
    """
    from dreamcontext_council.engine.prompting.attachments import attachment_paths
    from dreamcontext_council.rules.grounding import check_attachments, preflight

    if bool(request.debate_id) == bool(request.topic):
        raise UsageError(
            'Pass either a debate id or --topic "…" (not both): `dreamcontext council run --topic "…"`.'
        )
    if request.debate_id and request.attach:
        raise UsageError("--attach goes with --topic; attach files when the debate is created.")
    only = _only(request)
    prices = load_prices(request.prices)
    attachments = check_attachments(request.attach)
    roster: list[PersonaSpec] | None = None
    options: list[dict[str, str]] = []
    if request.topic:
        topic = convene.check_topic(request.topic)
        options = convene.parse_options(request.options_spec)
        if request.personas_spec != "auto":
            roster = load_roster(request.personas_spec)
            check_roster_size(roster, f"--personas {request.personas_spec}")
        if not request.yes:
            preflight(topic, attached=bool(attachments))
    files: DebateFiles | None = None
    made: str | None = None  # the debate this run made, taken back if refused before round 1
    root: Root
    if request.debate_id:
        root = require_root(request.root)
        files = DebateFiles(root, request.debate_id)
        debate = files.debate()
        # A link out of the debate among the attachments stops the run before any call.
        attached = attachment_paths(files)
        # The guard stands before the first call; a debate already under way is resumed.
        fresh = debate.current_round == 0 and not files.paths.usage.exists()
        if fresh and not request.yes and not request.resynthesize:
            preflight(
                debate.section("Question") or debate.topic,
                attached=bool(debate.meta.get("attachments") or attached),
                debate_id=debate.id,
            )
    # One pre-flight before anything is written: consent, keys, programs, servers.
    named = _named_commands(request)
    named_url = request.base_url  # else the folder's own, which needs consent (preflight)
    previous = remembered.recorded(files)
    tools_plan = _research(request, files, previous)
    request = remembered.settle(request, previous)
    if tools_plan is not None or request.no_tools:  # else what was recorded stays recorded
        request = replace(request, tools=str(tools_plan.path) if tools_plan else None)
    uses = model_uses(request, files, roster, previous)
    if only is not None:
        uses = [u for u in uses if u.who in {f"persona {slug}" for slug in only}]
    would_fail = check_providers(request, files, uses, named, named_url)
    providers = shared or _provider_set(request)
    if tools_plan is not None and not request.resynthesize:
        would_fail = _tool_less(providers, uses, would_fail, dry_run=request.dry_run)
    models = [parse_model(use.model) for use in uses]
    if request.dry_run:
        from dreamcontext_council.engine.setup.estimate import estimate_run

        result = estimate_run(request, files, roster, prices, previous)
        if would_fail:
            result["would_fail"] = would_fail
            result["message"] += f"\nWould fail: {would_fail}"
        return result
    if any(m.provider == "scripted" for m in models) and not request.quiet:
        # "No API key" only when that is why: a key is set and a persona chose scripted.
        offline = parse_model(default_model(request.env)).provider == "scripted"
        echo(SCRIPTED_NOTICE if offline else SCRIPTED_SOME_NOTICE)
    if files is not None:
        consent.allow_commands(files, named, request.env)
        consent.allow_base_url(files, named_url, request.env)
        if tools_plan is not None:
            research.allow(files, tools_plan, request.env)
        remembered.record(files, request, previous, RUN_LOCK_NAME, only)
    try:
        if files is None:
            assert request.topic is not None
            root, created = root_for_new(request.root)
            if created and not request.quiet:
                echo(f"Created {root.path}.")
            debate = convene.new_debate(
                root,
                request.topic,
                rounds=request.rounds,
                options=options,
                interrupt=request.interrupt,
                personas=roster,
                attachments=attachments,
                research=bool(request.tools),
            )
            files, made = DebateFiles(root, debate.id), debate.id
            if not request.quiet:
                echo(f"Debate {debate.id} created in {files.paths.folder}")
            if request.on_created is not None:
                request.on_created(debate.id)
            if request.personas_spec == "auto":
                with _resumable(files.id), convene.taken_back_if_refused(root, made):
                    await _auto_personas(root, files, request, providers, prices, echo)
            # Naming the roster file or the command on the command line was the consent.
            consent.allow_commands(
                files, [*named, *(c.command for c in consent.folder_commands(files))], request.env
            )
            consent.allow_base_url(files, named_url, request.env)
            if tools_plan is not None:
                research.allow(files, tools_plan, request.env)
            remembered.record(files, request, previous, RUN_LOCK_NAME)
        progress = request.progress or make_progress(quiet=request.quiet, tty=request.tty)
        run_options = RunOptions(
            model=request.model,
            check_model=request.check_model,
            synth_model=request.synth_model,
            compact=request.compact,
            early_stop=request.early_stop,
            baseline=request.baseline,
            baseline_model=request.baseline_model,
            max_cost=request.max_cost,
            max_calls=request.max_calls,
            promote=request.promote,
            resynthesize=request.resynthesize,
            prices=prices,
            env=request.env,
            max_answer_kb=request.max_answer_kb or DEFAULT_MAX_ANSWER_KB,
            only=only,
            cancelled_as=request.cancelled_as,
            shared_budget=request.shared_budget,
        )
        from dreamcontext_council.engine.prompting.synthesis_input import CompressionSettings

        runner = CouncilRun(root, files.id, run_options, providers, progress)
        runner.compression = CompressionSettings(
            gate_chars=request.gate, window_chars=request.window or DEFAULT_WINDOW
        )
        progress.start()
        try:
            with _resumable(files.id):
                async with AsyncExitStack() as tool_servers:
                    if tools_plan is not None and _debating(files, request):
                        with convene.taken_back_if_refused(root, made):
                            runner.research = await research.start_session(
                                tool_servers,
                                tools_plan,
                                root,
                                files.id,
                                progress,
                                max_calls=request.max_tool_calls or 0,
                                timeout_s=request.timeout or DEFAULT_TIMEOUT,
                                env=request.env,
                            )
                    outcome = await runner.run()
        finally:
            progress.stop()
    finally:
        if shared is None:
            await providers.aclose()
    return {
        "id": outcome.debate_id,
        "stopped": outcome.stopped,
        "message": outcome.message,
        "reason": outcome.reason,
        "calls": outcome.calls,
        "cost_usd": round(outcome.cost, 6),
    }


def _research(
    request: Launch, files: DebateFiles | None, previous: RunSettings
) -> research.ResearchPlan | None:
    """The research tools of this run, checked and consented to before anything is written.

    A resynthesis asks no persona: it starts no tool server and needs no consent."""
    if request.no_tools:
        if request.tools:
            raise UsageError("--tools and --no-tools say opposite things; pass one of them.")
        return None
    if request.resynthesize and not request.tools:
        return None
    chosen = research.plan(request.tools, previous.tools, files.id if files else None)
    if chosen is not None:
        research.require_consent(files, chosen, request.env)
    return chosen


def _tool_less(
    providers: ProviderSet, uses: list[ModelUse], would_fail: str | None, *, dry_run: bool
) -> str | None:
    """Refuse (or, for a dry run, report) a persona model that cannot call tools."""
    personas = [u.model for u in uses if u.who.startswith(("persona ", "the personas"))]
    try:
        research.refuse_tool_less(providers, personas)
    except ProviderError as problem:
        if not dry_run:
            raise ProviderUnavailable(str(problem)) from None
        return f"{would_fail}; {problem}" if would_fail else str(problem)
    return would_fail


def _debating(files: DebateFiles, request: Launch) -> bool:
    """Whether persona turns may be left to run (not a resynthesis, not past the rounds)."""
    phase = files.debate().status.phase
    return not request.resynthesize and phase not in ("synthesizing", "complete")


def _only(request: Launch) -> list[str] | None:
    """The personas `--only` names, checked against the debate before anything is written."""
    if request.only is None:
        return None
    if not request.debate_id:
        raise UsageError(
            "--only goes with a debate id: `dreamcontext council run <id> --only a,b`."
        )
    for flag, given in (
        ("--dry-run", request.dry_run),
        ("--resynthesize", request.resynthesize),
        ("--promote", request.promote),
    ):
        if given:
            raise UsageError(f"--only answers personas of a running round; drop {flag}.")
    slugs = parse_only(request.only)
    only_round(DebateFiles(require_root(request.root), request.debate_id), slugs)
    return slugs


def _named_commands(request: Launch) -> set[str]:
    """The command lines the user named this time: in model flags and `--allow-command`.

    Called before `remembered.settle`, so a model the folder recorded is not among them."""
    models = (getattr(request, name) for name in MODEL_FIELDS)
    return consent.named_commands(models, request.allow_commands)


@contextmanager
def _resumable(debate_id: str) -> Iterator[None]:
    """Ctrl-C cancels the run at its next await; say how to go on instead of "Aborted."."""
    try:
        yield
    except asyncio.CancelledError:
        # Answers being saved when the signal came are finished first (see RoundRunner).
        raise Interrupted(
            f"Stopped by Ctrl-C; every answer already given is saved. Run `dreamcontext "
            f"council run {debate_id}` to go on from where it stopped."
        ) from None


async def _auto_personas(
    root: Root,
    files: DebateFiles,
    request: Launch,
    providers: ProviderSet,
    prices: Any,
    echo: Callable[[str], None],
) -> None:
    """`--personas auto`: the orchestrator model writes topic-specific personas.

    Their models come from the user, never from the answer: a `model` in it is dropped.
    """
    from dreamcontext_council.engine.model_calls.accounting import Ledger, with_outcome
    from dreamcontext_council.engine.model_calls.caller import Caller
    from dreamcontext_council.engine.model_calls.progress import QuietProgress
    from dreamcontext_council.engine.prompting import prompts
    from dreamcontext_council.rules.roster import parse_roster

    debate = files.debate()
    spec = parse_model(request.check_model or request.model or default_model(request.env))
    caller = Caller(
        providers,
        Ledger(
            files.paths.usage,
            prices,
            request.max_cost,
            request.max_calls,
            within=files.root.path,
        ),
        QuietProgress(),
    )
    prompt = prompts.personas_prompt(debate.topic, debate.options, AUTO_COUNT)
    completion, line = await caller.ask(
        spec, prompt, persona=ORCHESTRATOR_CALLER, round=0, phase="persona-generation"
    )
    text = completion.text.strip()
    start, end = text.find("["), text.rfind("]")
    try:
        data = json.loads(text[start : end + 1]) if start >= 0 else None
    except ValueError:
        data = None
    try:
        if not isinstance(data, list):
            raise UsageError(
                "The model did not return a JSON list of personas for --personas auto; run again or pass a preset."
            )
        roster = parse_roster(json.dumps(data), "--personas auto")
        dropped = [p.slug for p in roster if p.model]
        if dropped and not request.quiet:
            echo(
                f"--personas auto: ignored the model the answer named for {', '.join(dropped)}; "
                "models come only from --model, a preset or a roster file."
            )
        for persona in roster:
            convene.create_agent(root, files.id, replace(persona, model=""))
    except Exception as exc:
        await caller.append(with_outcome(line, "failed", str(exc)))
        raise
    await caller.append(line)  # `ok` once the personas are on disk
