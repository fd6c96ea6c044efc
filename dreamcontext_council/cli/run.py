"""`council run`: the automated debate, on real providers or the offline scripted one."""

from __future__ import annotations

import asyncio
import os
import sys

import click

from dreamcontext_council.cli.base import (
    echo,
    emit,
    explicit_root,
    is_terminal,
    json_option,
    root_option,
)
from dreamcontext_council.cli.completion import complete_debate_id
from dreamcontext_council.cli.ranges import flag_range


def register(cli: click.Group, council: click.Group) -> None:
    """Add `run` to the council group."""
    council.add_command(run)


@click.command()
@click.argument("debate_id", required=False, shell_complete=complete_debate_id)
@click.option("--topic", help="Create a debate with this question and run it.")
@click.option(
    "--personas",
    "personas_spec",
    help="Preset (cognitive, engineering), roster file (docs/personas.md), or auto (with --topic) "
    "[default: DREAMCONTEXT_PERSONAS, a council.toml, else cognitive].",
)
@click.option(
    "--options", "options_spec", help='Registered options for a new debate, as "A=…,B=…".'
)
@click.option(
    "--rounds",
    type=click.IntRange(1, 10),
    help="Rounds planned for a new debate (default 3; 2 with --attach).",
)
@click.option(
    "--interrupt", is_flag=True, help="Pause for an interlude between rounds (new debate)."
)
@click.option(
    "--attach",
    "attach",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A file the council must read (repeatable).",
)
@click.option("--compact", is_flag=True, help="Stop after round 2 without a convergence check.")
@click.option(
    "--early-stop",
    is_flag=True,
    help="End the debating without the convergence check once two rounds in a row reach 90%.",
)
@click.option(
    "--no-warm",
    is_flag=True,
    help="Start every round-1 call at once; by default, with a large brief (attachments), "
    "one call per model starts first and the rest once it answers, to read its prompt cache.",
)
@click.option(
    "--baseline",
    is_flag=True,
    help="Before round 1, have one model answer alone (baseline.md), to compare with the verdict.",
)
@click.option(
    "--baseline-model", help="Model for the --baseline solo answer (default: the synthesis model)."
)
@click.option(
    "--model",
    help="Model for personas that name none (default: recorded, DREAMCONTEXT_MODEL, a "
    "council.toml, else from the keys set, else scripted).",
)
@click.option(
    "--allow-command",
    "allow_commands",
    multiple=True,
    metavar="COMMAND",
    help="Let this debate run a persona's `command:` program (repeatable); remembered.",
)
@click.option(
    "--check-model",
    help="Model for the convergence check (default: --synth-model, else --model).",
)
@click.option("--synth-model", help="Model for the synthesizer (default: --model).")
@click.option(
    "--base-url", help="Server URL for the openai provider (any OpenAI-compatible server)."
)
@click.option(
    "--anthropic-base-url",
    help="Server URL for the anthropic provider (a proxy or gateway); wins over ANTHROPIC_BASE_URL.",
)
@click.option(
    "--timeout",
    type=flag_range("timeout"),
    help="Seconds per call before it is retried (default: recorded, else 120).",
)
@click.option(
    "--retries",
    type=flag_range("retries"),
    help="Retries per call on 429, 5xx, timeouts (default: recorded, else 4).",
)
@click.option(
    "--concurrency", type=flag_range("concurrency"), help="Most calls in flight per provider."
)
@click.option(
    "--max-cost",
    type=flag_range("max_cost"),
    help="Stop before spending more than this many dollars in this run.",
)
@click.option(
    "--max-calls",
    type=flag_range("max_calls"),
    help="Stop before making more than this many calls in this run.",
)
@click.option(
    "--prices",
    type=click.Path(dir_okay=False),
    help="JSON price table overriding the built-in one.",
)
@click.option(
    "--gate",
    type=flag_range("gate"),
    help="Compression gate in characters (default 0.6 × --window).",
)
@click.option(
    "--window",
    type=flag_range("window"),
    help="Synthesizer window in characters (default: recorded, else 100000).",
)
@click.option(
    "--max-answer-kb",
    type=flag_range("max_answer_kb"),
    help="Cut a model answer longer than this many KB (the whole answer is kept beside it) "
    "[default: recorded, else 200].",
)
@click.option(
    "--tools",
    type=click.Path(dir_okay=False),
    help='MCP servers personas may call, as {"mcpServers": {name: {command, args, env, '
    "allow}}} (docs/mcp.md); remembered. Needs anthropic: or openai: persona models.",
)
@click.option(
    "--no-tools",
    is_flag=True,
    help="Go on without the research tools this debate recorded (forgets its tools file).",
)
@click.option(
    "--max-tool-calls",
    type=flag_range("max_tool_calls"),
    help="Tool calls per persona per round with --tools [default: recorded, else 4].",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the planned calls and an estimated cost; call nothing."
)
@click.option(
    "--resynthesize",
    is_flag=True,
    help="Run synthesis again from the stored answers (no debater is called).",
)
@click.option(
    "--promote", is_flag=True, help="Promote the verdict to a knowledge doc when complete."
)
@click.option(
    "--only",
    metavar="SLUG,SLUG",
    help="Answer only these personas' pending calls in the running round, then stop.",
)
@click.option(
    "--human",
    "humans",
    multiple=True,
    metavar="SLUG",
    help="Seat a person as this persona (repeatable): no model is called for it; each round "
    "the run waits for its entry (`verdict` and `report append`, or $EDITOR on a terminal). "
    "A slug the council lacks adds a seat; remembered.",
)
@click.option(
    "--human-timeout",
    type=flag_range("human_timeout"),
    metavar="SECONDS",
    help="Wait this long for a person's entry each round, then go on without it "
    "[default: recorded, else as long as it takes].",
)
@click.option("--yes", is_flag=True, help="Skip the pre-flight guard on the question.")
@click.option("--quiet", is_flag=True, help="Print only the final result.")
@root_option
@json_option
def run(
    debate_id: str | None,
    topic: str | None,
    personas_spec: str | None,
    options_spec: str | None,
    rounds: int | None,
    interrupt: bool,
    attach: tuple[str, ...],
    compact: bool,
    early_stop: bool,
    no_warm: bool,
    baseline: bool,
    baseline_model: str | None,
    model: str | None,
    allow_commands: tuple[str, ...],
    check_model: str | None,
    synth_model: str | None,
    base_url: str | None,
    anthropic_base_url: str | None,
    timeout: float | None,
    retries: int | None,
    concurrency: int | None,
    max_cost: float | None,
    max_calls: int | None,
    prices: str | None,
    gate: int | None,
    window: int | None,
    max_answer_kb: int | None,
    tools: str | None,
    no_tools: bool,
    max_tool_calls: int | None,
    dry_run: bool,
    resynthesize: bool,
    promote: bool,
    only: str | None,
    humans: tuple[str, ...],
    human_timeout: float | None,
    yes: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Drive a debate to its final report, calling models; resumes where it stopped.

    `run <id>` resumes that debate, `run @last` the newest one. With neither an id nor
    --topic, `run` resumes the one debate whose run stopped (a limit, a failure, Ctrl-C),
    naming it on stderr; when none or several did, it asks for an id or a topic.

    With no API key set, it runs on the built-in scripted provider: an offline,
    deterministic stand-in that shows the whole flow (it is not a model).

    A debate remembers how it was run (models, --base-url, limits, window): `run <id>`
    goes on with them; an option given again replaces the recorded one.
    Before anything is written, every model is checked (key, program on PATH, server
    answering); a problem stops the run with exit 2, and --dry-run names it.

    A `command:` model found in a debate folder (a persona's `model:`) runs only if
    you named it this time (--model, --allow-command) or allowed it before for this
    folder; otherwise `run` stops with exit 2 before any call. So does a --max-cost
    over a model with no known price (pass --prices FILE, or use --max-calls), and a
    server URL (--base-url, OPENAI_BASE_URL) with no --model naming what to call.

    A run that stops before the end (a limit, a failing provider) exits with its own
    code, not 0 (see Exit codes in docs/cli-reference.md); --json then says `stopped`
    and `reason`. A complete run ends with the Verdict and its confidence.

    \b
    Examples:
      dreamcontext council run --topic "Should we migrate the session store to Postgres?" \\
        --options "A=Migrate now,B=Stay on Redis"
      dreamcontext council run council_AbC12345 --synth-model opus --max-cost 2
      dreamcontext council run @last --max-calls 20
      OPENAI_BASE_URL=http://localhost:11434/v1 dreamcontext council run --topic "Should we cache sessions in Redis?" --model openai:llama3.1
      dreamcontext council run council_AbC12345 --only risk-auditor,growth-cfo
      dreamcontext council run --topic "Should we rewrite the billing service?" --human alice
    """
    from dreamcontext_council.engine.setup.launch import STOPS, launch, stopped_result
    from dreamcontext_council.engine.setup.request import Launch
    from dreamcontext_council.errors import EXIT_STOPPED, EXIT_USAGE, Interrupted, RunStopped

    if topic is None:
        debate_id = _resumed(debate_id)
    request = Launch(
        debate_id=debate_id,
        topic=topic,
        personas_spec=personas_spec,
        options_spec=options_spec,
        rounds=rounds,
        interrupt=interrupt,
        attach=list(attach),
        compact=compact,
        early_stop=early_stop,
        warm=not no_warm,
        baseline=baseline or baseline_model is not None,
        baseline_model=baseline_model,
        model=model,
        allow_commands=list(allow_commands),
        check_model=check_model,
        synth_model=synth_model,
        base_url=base_url,
        anthropic_base_url=anthropic_base_url,
        timeout=timeout,
        retries=retries,
        concurrency=concurrency,
        max_cost=max_cost,
        max_calls=max_calls,
        prices=prices,
        gate=gate,
        window=window,
        max_answer_kb=max_answer_kb,
        tools=tools,
        no_tools=no_tools,
        max_tool_calls=max_tool_calls,
        dry_run=dry_run,
        resynthesize=resynthesize,
        promote=promote,
        only=only,
        humans=list(humans),
        human_timeout=human_timeout,
        yes=yes,
        quiet=quiet,
        root=explicit_root(),
        tty=is_terminal() and not as_json,
        env=dict(os.environ),
    )
    try:
        result = asyncio.run(launch(request, echo=lambda line: echo(line, err=True)))
    except (RunStopped, Interrupted) as stop:
        if as_json:  # the error line goes to stderr as for any error; stdout says why
            emit(stopped_result(stop), as_json, "")
        raise
    if not (quiet or as_json) and result.get("stopped") in ("complete", "interlude"):
        echo(_board(result["id"]), err=True)
    if not (quiet or as_json) and result.get("stopped") == "complete":
        debate = result["id"]
        echo(
            f"Next: `dreamcontext council report show {debate}`, `dreamcontext council serve`, "
            f"`dreamcontext council export {debate} --format html` (writes {debate}.html)",
            err=True,
        )
    emit(result, as_json, result["message"] + ("\n" + result["id"] if result.get("id") else ""))
    if result.get("would_fail"):
        sys.exit(EXIT_USAGE)  # a dry run whose real run would stop at pre-flight
    if result.get("stopped") in STOPS:
        sys.exit(EXIT_STOPPED)  # stopped by a limit: resumable, but not done


def _resumed(debate_id: str | None) -> str | None:
    """The debate `run` goes on with when no --topic is given: the one named; for `@last`
    the newest; with no id, the one debate whose run stopped (None when there is none, and
    the run asks for an id or a topic). The debate chosen is named on stderr."""
    from dreamcontext_council.actions.newest import LAST, debate_to_resume
    from dreamcontext_council.cli.base import chosen_debate, say_chosen
    from dreamcontext_council.folder.paths import find_root

    if debate_id == LAST:
        return chosen_debate(debate_id)
    if debate_id is not None:
        return debate_id
    chosen = debate_to_resume(find_root(explicit_root()))
    if chosen is None:
        return None
    say_chosen(chosen.line("the one run that stopped"))
    return chosen.id


def _board(debate_id: str) -> str:
    from dreamcontext_council.actions.snapshot import load_snapshot
    from dreamcontext_council.folder.paths import require_root
    from dreamcontext_council.views.board import fitted_width, render_board
    from dreamcontext_council.views.board_extras import board_extra_lines
    from dreamcontext_council.views.terminal import terminal_columns

    snapshot = load_snapshot(require_root(explicit_root()), debate_id)
    width = fitted_width(terminal_columns())
    return render_board(snapshot, None, board_extra_lines(snapshot), width)
