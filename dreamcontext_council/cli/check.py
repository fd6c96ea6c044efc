"""The convergence check by hand: `council check`, the page `run` sends its check model and
the orchestrator's answer recorded as `run` records its check's."""

from __future__ import annotations

import click

from dreamcontext_council.cli.base import ROUND_NUMBER, current_root, emit, json_option, root_option
from dreamcontext_council.cli.completion import complete_debate_id
from dreamcontext_council.errors import UsageError


def register_check(council: click.Group) -> None:
    """Add `check` to the `council` group."""
    council.add_command(check)


@click.command()
@click.argument("debate_id", shell_complete=complete_debate_id)
@click.argument("number", type=ROUND_NUMBER)
@click.option(
    "--answer",
    type=click.Choice(["CONTINUE", "CONVERGED", "DEADLOCKED", "STOP"], case_sensitive=False),
    help="Record the check's answer; only CONTINUE debates another round (STOP: end the "
    "debating for the reason given with --reason).",
)
@click.option("--reason", help="Why, in one line (recorded with --answer).")
@root_option
@json_option
def check(
    debate_id: str, number: int, answer: str | None, reason: str | None, as_json: bool
) -> None:
    """The convergence check after round N: print what `run` asks its check model, or
    record the answer with --answer.

    The page is the check's system prompt and message as `run` sends them: the round-1
    perspectives, the round-2 critiques, where each persona stands and what is still
    unanswered. --answer writes the decision to round-log.md as `run` writes its check's.

    \b
    Examples:
      dreamcontext council check council_AbC12345 2
      dreamcontext council check council_AbC12345 2 --answer CONTINUE \\
        --reason "the rollback critique is still unanswered"
    """
    from dreamcontext_council.engine.protocol import by_hand

    if answer is None:
        if reason is not None:
            raise UsageError("--reason goes with --answer; give both to record the check.")
        page = by_hand.check_page(current_root(), debate_id, number)
        emit({"debate": debate_id, "round": number, "page": page}, as_json, page.rstrip("\n"))
        return
    recorded = by_hand.record_check_answer(current_root(), debate_id, number, answer, reason)
    then = (
        f"start it with `dreamcontext council round start {debate_id} {number + 1}`"
        if recorded.another_round
        else f"run `dreamcontext council synthesize {debate_id}`"
    )
    verb = "recorded" if recorded.changed else "was already recorded"
    going = "another round" if recorded.another_round else "synthesis"
    emit(
        recorded.__dict__ | {"debate": debate_id},
        as_json,
        f"Check after round {number} {verb}: {recorded.answer} → {going}; {then}.",
    )
