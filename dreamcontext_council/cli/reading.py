"""Reading commands: summaries, board, timeline, list, show, prompt, live clear."""

from __future__ import annotations

import click

from dreamcontext_council.cli.base import (
    ROUND_NUMBER,
    chosen_debate,
    current_root,
    echo,
    emit,
    explicit_root,
    json_option,
    optional_debate_id,
    read_debate,
    root_option,
    warn,
)
from dreamcontext_council.cli.completion import complete_debate_id, complete_persona

# Each command imports only what it reads with: these commands are the ones people and
# agents run most, and a cold start pays for every module it loads.


def register_reading(council: click.Group) -> None:
    """Add the reading commands to the `council` group."""
    for command in (summaries, board, timeline, list_debates, show, prompt, live):
        council.add_command(command)


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("number", type=ROUND_NUMBER)
@root_option
@json_option
def summaries(debate_id: str, number: int, as_json: bool) -> None:
    """Executive summaries of round N, each with a stance/conviction/shift line.

    \b
    Example:
      dreamcontext council summaries council_AbC12345 1
    """
    from dreamcontext_council.views.summaries import render_summaries, summaries_data

    snapshot = read_debate(debate_id)
    emit(summaries_data(snapshot, number), as_json, lambda: render_summaries(snapshot, number))


@click.command()
@optional_debate_id
@click.option(
    "--round",
    "number",
    type=ROUND_NUMBER,
    help="Show this round (default: the latest with verdicts).",
)
@click.option("--plain", is_flag=True, help="Plain text without colour.")
@root_option
@json_option
def board(debate_id: str | None, number: int | None, plain: bool, as_json: bool) -> None:
    """The chamber board: convergence meter, one row per persona, options tally.

    Without an id (or with @last) it shows the newest debate, named on stderr.

    \b
    Examples:
      dreamcontext council board
      dreamcontext council board council_AbC12345 --round 1 --plain
    """
    from dreamcontext_council.views.board import board_figures, fitted_width, render_board
    from dreamcontext_council.views.board_extras import board_extra_data, board_extra_lines
    from dreamcontext_council.views.terminal import terminal_columns

    snapshot = read_debate(debate_id)
    data = board_figures(snapshot, number).to_json() | board_extra_data(snapshot)
    width = fitted_width(terminal_columns())
    emit(data, as_json, lambda: render_board(snapshot, number, board_extra_lines(snapshot), width))


@click.command()
@optional_debate_id
@root_option
@json_option
def timeline(debate_id: str | None, as_json: bool) -> None:
    """Per-round stance and conviction table with convergence.

    Without an id (or with @last) it shows the newest debate, named on stderr.

    \b
    Examples:
      dreamcontext council timeline
      dreamcontext council timeline council_AbC12345 --json
    """
    from dreamcontext_council.views.timeline import render_timeline, timeline_data

    snapshot = read_debate(debate_id)
    emit(timeline_data(snapshot), as_json, lambda: render_timeline(snapshot))


@click.command("list")
@click.option("--active", "mode", flag_value="active", help="Debates still in progress.")
@click.option(
    "--unpromoted", "mode", flag_value="unpromoted", help="Complete debates not yet promoted."
)
@click.option("--all", "mode", flag_value="all", help="Every debate.")
@click.option(
    "--evals",
    "with_evals",
    is_flag=True,
    help="Also list the debates `council eval` made (left out by default).",
)
@root_option
@json_option
def list_debates(mode: str | None, with_evals: bool, as_json: bool) -> None:
    """Debates, newest first: the 10 most recent unless --all (or --active, --unpromoted).

    Each debate takes a few lines within 80 columns: its id, status, round and day; its
    topic; a complete debate's verdict (`verdict: Migrate now (A) · medium`) or how its
    run stands. --json lists the same debates, each whole (`verdict`, `run`).

    The debates an eval made, one per question, are left out unless --evals is given;
    each eval's page on the dashboard links its questions' debates.

    \b
    Examples:
      dreamcontext council list
      dreamcontext council list --all
    """
    from dreamcontext_council.actions.decisions import with_decisions
    from dreamcontext_council.actions.index import load_index
    from dreamcontext_council.actions.run_state import with_run_states
    from dreamcontext_council.views import listing
    from dreamcontext_council.views.eval_names import eval_debates

    chosen = mode or "recent"
    root = current_root()
    entries = load_index(root)
    left_out = 0
    if not with_evals:
        entries, left_out = listing.without_evals(entries, eval_debates(root))
    listed = listing.filter_debates(entries, chosen)
    more = len(entries) - len(listed) if chosen == "recent" else 0
    listed = with_decisions(root, with_run_states(root, listed))
    for entry in listed:
        if entry.get("conflicted"):
            warn(f"{entry['conflicted']} Listed from what the file still says.")
    emit(listed, as_json, lambda: listing.render_list(listed, chosen, left_out, more))


@click.command()
@optional_debate_id
@click.option("--log", "with_log", is_flag=True, help="Print the round log below.")
@root_option
@json_option
def show(debate_id: str | None, with_log: bool, as_json: bool) -> None:
    """Where a debate stands: status, verdict, each persona's stance, usage, what runs now.

    Without an id (or with @last) it shows the newest debate, named on stderr. While
    `council run` asks models, the calls in flight show with the characters received so
    far and their seconds (`in_flight` in --json). --log adds the round log; --json
    always holds it (`round_log`).

    \b
    Examples:
      dreamcontext council show
      dreamcontext council show council_AbC12345 --log
    """
    from dreamcontext_council.views import listing

    snapshot = read_debate(debate_id)
    emit(
        listing.show_data(snapshot),
        as_json,
        lambda: listing.render_show(snapshot, log=with_log),
    )


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("slug", shell_complete=complete_persona)
@click.argument("number", type=ROUND_NUMBER)
@click.option(
    "--part",
    type=click.Choice(["system", "user"]),
    help="Print only this part of the round's call (of its repair with --repair).",
)
@click.option("--repair", is_flag=True, help="With --part: the repair call, not the first.")
@root_option
@json_option
def prompt(
    debate_id: str, slug: str, number: int, part: str | None, repair: bool, as_json: bool
) -> None:
    """The exact prompt `council run` sent a persona's model in round N: system, then user.

    A repair call, when the answer broke the contract, follows the round's call. --json
    gives the texts exactly; in text, control characters are shown escaped.

    \b
    Example:
      dreamcontext council prompt council_AbC12345 risk-auditor 2
      dreamcontext council prompt council_AbC12345 risk-auditor 2 --part user > user.md
    """
    from dreamcontext_council.actions.received import sent_prompts
    from dreamcontext_council.errors import NotFoundError
    from dreamcontext_council.views.sent_prompt import render_sent_prompt, sent_prompt_data

    debate_id = chosen_debate(debate_id)  # `@last`: the newest
    calls = sent_prompts(current_root(), debate_id, slug, number)
    if part is None:
        data = sent_prompt_data(debate_id, slug, number, calls)
        emit(data, as_json, lambda: render_sent_prompt(slug, number, calls))
        return
    chosen = [c for c in calls if (c.phase == "repair") == repair]
    if not chosen:
        raise NotFoundError(
            f"{slug}'s answer in round {number} of {debate_id} needed no repair; "
            "leave out --repair."
        )
    call = chosen[-1] if repair else chosen[0]
    text = call.system if part == "system" else call.user
    if as_json:
        emit({"phase": call.phase, part: text}, as_json, text)
    else:
        echo(text, nl=False)  # as sent, to the last byte


@click.group()
def live() -> None:
    """The live chamber file tmp/.council-live.json."""


@live.command("clear")
@root_option
def live_clear() -> None:
    """Delete the live file.

    \b
    Example:
      dreamcontext council live clear
    """
    from dreamcontext_council.folder.live import clear_live
    from dreamcontext_council.folder.paths import find_root

    root = find_root(explicit_root())
    removed = bool(root) and clear_live(root.live_file, within=root.path)  # type: ignore[union-attr]
    echo("Live file removed." if removed else "No live file.")
