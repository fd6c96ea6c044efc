"""From the `run` command's options to a finished (or paused) run.

`launch` checks the request and resolves it into the run's plan (engine/setup/plan.py);
`run_plan` asks consent, runs the pre-flight, prints the estimate of a `--dry-run` or
records the plan in debate.md, then runs it. Nothing after `_planned` reads the request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Iterator
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
from dreamcontext_council.engine.protocol.only import only_round, parse_only
from dreamcontext_council.engine.protocol.plan import RunPlan
from dreamcontext_council.engine.protocol.run import RUN_LOCK_NAME, CouncilRun
from dreamcontext_council.engine.providers import consent
from dreamcontext_council.engine.providers.models import default_model, parse_model
from dreamcontext_council.engine.providers.registry import ProviderSet
from dreamcontext_council.engine.research import session as research
from dreamcontext_council.engine.setup import remembered
from dreamcontext_council.engine.setup.plan import defaults_for, personas_setting, resolve
from dreamcontext_council.engine.setup.preflight import ModelUse, model_uses
from dreamcontext_council.engine.setup.preflight import check as check_providers
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.errors import (
    Interrupted,
    ProviderError,
    ProviderUnavailable,
    RunStopped,
    UsageError,
)
from dreamcontext_council.folder.names import check_slug
from dreamcontext_council.folder.paths import Root, require_root, root_for_new
from dreamcontext_council.rules.roster import (
    PersonaSpec,
    check_roster_size,
    load_roster,
    with_persons,
)
from dreamcontext_council.rules.run_settings import DEFAULT_TIMEOUT

SCRIPTED_NOTICE = (
    "No API key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY): running on the built-in scripted "
    "provider, an offline deterministic stand-in that shows the whole flow. It is not a model."
)
SCRIPTED_SOME_NOTICE = (
    "Some calls go to the built-in scripted provider (model `scripted`): an offline "
    "deterministic stand-in, not a model."
)
AUTO_COUNT = 4
# How a run stops before the end (resumable): a limit, a failure, Ctrl-C. A result's
# `stopped` is one of these or where it ended: complete, interlude, answered, dry-run.
STOPS = ("budget", "failure", "interrupted")


async def launch(
    request: Launch, echo: Callable[[str], None], shared: ProviderSet | None = None
) -> dict[str, Any]:
    """Create the debate if asked, check the ground, then run it; returns a summary.

    With `shared`, calls go through those providers (their per-provider limits hold
    across every debate using them) and they stay open for the caller to close.
    """
    plan, files = _planned(request)
    return await run_plan(plan, files, echo, shared)


def _planned(request: Launch) -> tuple[RunPlan, DebateFiles | None]:
    """The request checked and resolved into the run's plan, before anything is written;
    with the debate a resume runs (None: the plan makes a new one)."""
    from dreamcontext_council.engine.prompting.attachments import attachment_paths
    from dreamcontext_council.rules.grounding import check_attachments, preflight

    if request.topic is not None and not request.topic.strip() and not request.debate_id:
        raise UsageError(
            "--topic is empty; pass the question to debate, as in `dreamcontext council run "
            '--topic "Should we …?"`.'
        )
    if bool(request.debate_id) == bool(request.topic):
        raise UsageError(
            'Pass either a debate id or --topic "…" (not both): `dreamcontext council run --topic "…"`.'
        )
    if request.debate_id and request.attach:
        raise UsageError("--attach goes with --topic; attach files when the debate is created.")
    only = _only(request)
    for slug in request.humans:
        check_slug(slug, "--human slug")
    defaults = defaults_for(request, None)
    prices = load_prices(request.prices)
    attachments = check_attachments(request.attach)
    roster: list[PersonaSpec] | None = None
    options: list[dict[str, str]] = []
    if request.topic:
        topic = convene.check_topic(request.topic)
        options = convene.parse_options(request.options_spec)
        spec, source = personas_setting(request, defaults)
        if spec != "auto":
            try:
                roster = with_persons(load_roster(spec), request.humans)
            except UsageError as wrong:  # DREAMCONTEXT_PERSONAS: say which setting it was
                if source == "--personas":
                    raise
                raise UsageError(f"{source}: {wrong}") from None
            check_roster_size(roster, f"--personas {spec}" if source == "--personas" else source)
        if not request.yes:
            preflight(topic, attached=bool(attachments))
    files: DebateFiles | None = None
    if request.debate_id:
        files = DebateFiles(require_root(request.root), request.debate_id)
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
    plan = resolve(
        request,
        files,
        roster,
        remembered.recorded(files),
        prices=prices,
        only=only,
        options=options,
        attachments=attachments,
        defaults=defaults,
    )
    return plan, files


async def run_plan(
    plan: RunPlan,
    files: DebateFiles | None,
    echo: Callable[[str], None],
    shared: ProviderSet | None = None,
) -> dict[str, Any]:
    """Consent, pre-flight, the estimate or the record, then the run: all read `plan`."""
    # One pre-flight before anything is written: consent, keys, programs, servers.
    trust = consent.FolderTrust(files, plan.env) if files is not None else None
    tools_plan = plan.research.plan
    if tools_plan is not None:
        research.require_consent(files, tools_plan, plan.env, trust)
    uses = model_uses(plan, files)
    would_fail = check_providers(plan, files, uses, trust)
    providers = shared or ProviderSet(plan.provider_settings(), env=plan.env)
    if would_fail is None:  # one request per server: is the key taken?
        would_fail = await _keys_taken(providers, uses, plan.flags.dry_run, shared is None)
    if tools_plan is not None and not plan.flags.resynthesize:
        would_fail = _tool_less(providers, uses, would_fail, dry_run=plan.flags.dry_run)
    models = [parse_model(use.model) for use in uses]
    if plan.flags.dry_run:
        from dreamcontext_council.engine.setup.estimate import estimate_run

        if shared is None:
            await providers.aclose()  # the key check's clients

        result = estimate_run(plan, files)
        if would_fail:
            result["would_fail"] = would_fail
            result["message"] += f"\nWould fail: {would_fail}"
        return result
    if files is not None:
        _refuse_spent_budget(files, plan)
    if any(m.provider == "scripted" for m in models) and not plan.quiet:
        # "No API key" only when that is why: a key is set and a persona chose scripted.
        offline = parse_model(default_model(plan.env)).provider == "scripted"
        echo(SCRIPTED_NOTICE if offline else SCRIPTED_SOME_NOTICE)
    named = plan.consent.commands
    if files is not None:
        _allow(files, plan, named)
        remembered.record(files, plan, RUN_LOCK_NAME)
    made: str | None = None  # the debate this run made, taken back if refused before round 1
    try:
        if files is None:
            files, made = await _new_debate(plan, providers, echo)
            # Naming the roster file or the command on the command line was the consent.
            _allow(files, plan, {*named, *(c.command for c in consent.folder_commands(files))})
            remembered.record(files, plan, RUN_LOCK_NAME)
        root = files.root
        progress = plan.progress or make_progress(quiet=plan.quiet, tty=plan.tty)
        runner = CouncilRun(root, files.id, plan, providers, progress)
        progress.start()
        try:
            with _resumable(files.id):
                async with AsyncExitStack() as tool_servers:
                    if tools_plan is not None and _debating(files, plan):
                        with convene.taken_back_if_refused(root, made):
                            runner.research = await research.start_session(
                                tool_servers,
                                tools_plan,
                                root,
                                files.id,
                                progress,
                                max_calls=plan.limits.max_tool_calls or 0,
                                timeout_s=plan.limits.timeout or DEFAULT_TIMEOUT,
                                env=plan.env,
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
        "verdict": outcome.verdict,
    }


async def _keys_taken(
    providers: ProviderSet, uses: list[ModelUse], dry_run: bool, owned: bool
) -> str | None:
    """The key check of the pre-flight (engine/setup/key_preflight.py): the line of a
    `--dry-run`, else `ProviderUnavailable` (the providers closed when this run made them)."""
    from dreamcontext_council.engine.setup.key_preflight import refused_keys

    refused = await refused_keys(uses, providers)
    if refused is None or dry_run:
        return refused
    if owned:
        await providers.aclose()
    raise ProviderUnavailable(refused)


def stopped_result(stop: RunStopped | Interrupted) -> dict[str, Any]:
    """What a run that stopped by raising says, in the shape of `launch`'s result."""
    reason = stop.reason if isinstance(stop, RunStopped) else "interrupted by Ctrl-C"
    return {
        "id": stop.debate_id,
        "stopped": "failure" if isinstance(stop, RunStopped) else "interrupted",
        "message": str(stop),
        "reason": reason,
    }


def _refuse_spent_budget(files: DebateFiles, plan: RunPlan) -> None:
    """A resume whose --max-calls allows no call stops here, before it writes a prompt
    record for a call it would never make (the limit is recorded, so it holds on every
    resume and every clone until a run raises it)."""
    debate = files.debate()
    if plan.limits.max_calls != 0 or (
        debate.status.phase == "complete" and not plan.flags.resynthesize
    ):
        return
    where = "recorded by an earlier run" if plan.previous.max_calls == 0 else "given"
    raise UsageError(
        f"{files.id} has no model call left: --max-calls 0 ({where}) allows none; run "
        f"`dreamcontext council run {files.id} --max-calls N` with N above 0 to go on."
    )


def _allow(files: DebateFiles, plan: RunPlan, commands: Iterable[str]) -> None:
    """Record in the trust file what the user named this time, for this folder."""
    consent.allow_commands(files, commands, plan.env)
    consent.allow_base_url(files, plan.consent.base_url, plan.env)
    consent.allow_base_url(files, plan.consent.anthropic_base_url, plan.env)
    if plan.research.plan is not None:
        research.allow(files, plan.research.plan, plan.env)


async def _new_debate(
    plan: RunPlan, providers: ProviderSet, echo: Callable[[str], None]
) -> tuple[DebateFiles, str]:
    """Make the debate of a `--topic` run, and its personas for `--personas auto`."""
    new = plan.new
    assert new is not None, "a plan without a debate id makes one"
    root, created = root_for_new(plan.root)
    if created and not plan.quiet:
        echo(f"Created {root.path}.")
    debate = convene.new_debate(
        root,
        new.topic,
        rounds=new.rounds,
        options=[dict(o) for o in new.options],
        interrupt=new.interrupt,
        personas=list(new.roster) if new.roster is not None else None,
        attachments=list(new.attachments),
        research=bool(plan.research.tools),
    )
    files = DebateFiles(root, debate.id)
    if not plan.quiet:
        echo(f"Debate {debate.id} created in {files.paths.folder}")
    if plan.on_created is not None:
        plan.on_created(debate.id)
    if plan.seats.auto:
        with _resumable(files.id), convene.taken_back_if_refused(root, debate.id):
            await _auto_personas(root, files, plan, providers, echo)
    return files, debate.id


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


def _debating(files: DebateFiles, plan: RunPlan) -> bool:
    """Whether persona turns may be left to run (not a resynthesis, not past the rounds)."""
    phase = files.debate().status.phase
    return not plan.flags.resynthesize and phase not in ("synthesizing", "complete")


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


@contextmanager
def _resumable(debate_id: str) -> Iterator[None]:
    """Ctrl-C cancels the run at its next await; say how to go on instead of "Aborted."."""
    try:
        yield
    except asyncio.CancelledError:
        # Answers being saved when the signal came are finished first (see RoundRunner).
        raise Interrupted(
            f"Stopped by Ctrl-C; every answer already given is saved. Run `dreamcontext "
            f"council run {debate_id}` to go on from where it stopped.",
            debate_id,
        ) from None


async def _auto_personas(
    root: Root,
    files: DebateFiles,
    plan: RunPlan,
    providers: ProviderSet,
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
    spec = parse_model(plan.seats.check())
    limits = plan.limits
    caller = Caller(
        providers,
        Ledger(
            files.paths.usage,
            limits.prices,
            limits.max_cost,
            limits.max_calls,
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
        if dropped and not plan.quiet:
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
