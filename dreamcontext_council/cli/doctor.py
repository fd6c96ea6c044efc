"""`council doctor`: what a hand-resolved git merge left out of step, and repairing it."""

from __future__ import annotations

import sys

import click

from dreamcontext_council.cli.base import current_root, emit, json_option, root_option
from dreamcontext_council.cli.completion import complete_debate_id


def register(cli: click.Group, council: click.Group) -> None:
    """Add `doctor` to the council group."""
    council.add_command(doctor)


@click.command()
@click.argument("debate_ids", nargs=-1, metavar="[DEBATE_ID]...", shell_complete=complete_debate_id)
@click.option("--repair", is_flag=True, help="Repair what can be repaired from the files.")
@root_option
@json_option
def doctor(debate_ids: tuple[str, ...], repair: bool, as_json: bool) -> None:
    """Check debates after a git merge: index.json, round_entries, status, and the verdicts,
    log lines and usage the round entries vouch for; exit 1 if any is off.

    The files that hold the record win: index.json is rebuilt from the debate folders, a
    persona's round_entries recounted from its report, a status behind round-log.md moved
    forward to it, a verdict a kept side dropped, or one that contradicts the entry that
    stands, restored whole from the side of the merge that holds it (else from what the
    entry states, or the persona named to give it again), and a dropped or stale
    submission line logged.
    Conflict markers, an entry holding two answers, lost usage lines and files that do not
    parse are only reported, each with the commands that resolve it.

    \b
    Examples:
      dreamcontext council doctor
      dreamcontext council doctor --repair
    """
    from dreamcontext_council.actions.doctor import examine

    root = current_root()
    findings = examine(root, list(debate_ids) or None, repair=repair)
    left = [f for f in findings if not f.repaired]

    def text() -> str:
        if not findings:
            return "Every debate is in step with its files."
        lines = [f.line() for f in findings]
        if any(f.repairable for f in left):
            lines.append("Run `dreamcontext council doctor --repair` to repair them.")
        return "\n".join(lines)

    emit([f.to_json() for f in findings], as_json, text)
    if left:
        sys.exit(1)
