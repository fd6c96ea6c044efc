"""Debates in git: `git-setup`, and the hidden `merge-driver` git calls during a merge."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dreamcontext_council.cli.base import echo, emit, explicit_root, json_option, root_option


def register_git(council: click.Group) -> None:
    """Add `git-setup` and `merge-driver` to the `council` group."""
    council.add_command(git_setup)
    council.add_command(merge_driver)


@click.command("git-setup")
@root_option
@json_option
def git_setup(as_json: bool) -> None:
    """Make this git repository merge debates without conflicts.

    Writes _dream_context/.gitattributes (commit it) and registers the council's merge
    drivers in the repository's own git config (run it once in every clone). Running
    it again changes nothing.

    \b
    Example:
      dreamcontext council git-setup
    """
    from dreamcontext_council.actions.git_setup import git_setup as set_up
    from dreamcontext_council.folder.paths import ROOT_NAME, Root, find_root

    # Not created here: a folder that is not in git is refused with nothing written.
    root = find_root(explicit_root()) or Root((Path.cwd() / ROOT_NAME).resolve())
    result = set_up(root)
    lines = [f"Git repository: {result.repository}"]
    if result.registered:
        lines.append(f"Registered merge drivers: {', '.join(result.registered)}")
    if result.added_attributes:
        lines.append(
            f"Wrote {len(result.added_attributes)} line(s) to {result.attributes}; commit it."
        )
    if not result.changed:
        lines.append("Already set up; nothing changed.")
    lines.append(
        f"The drivers run {result.program}; after moving or deleting that environment, run "
        "`dreamcontext council git-setup` again in each clone (until then git merges those "
        "files line by line, conflicts marked)."
    )
    emit(
        {
            "repository": str(result.repository),
            "attributes": str(result.attributes),
            "added_attributes": result.added_attributes,
            "registered": result.registered,
            "program": result.program,
        },
        as_json,
        "\n".join(lines),
    )


@click.command("merge-driver", hidden=True)
@click.argument(
    "kind",
    type=click.Choice(
        ["index", "verdicts", "debate", "round-log", "usage", "report", "context", "reviews"]
    ),  # the kinds of merge/driver.py's DRIVERS (a test keeps them in step)
)
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path", required=False)
def merge_driver(kind: str, base: Path, ours: Path, theirs: Path, path: str | None) -> None:
    """Merge three versions of a council file into OURS; PATH is the file's path in the
    repository (git runs this; exit 3: a conflict marked)."""
    from dreamcontext_council.merge.driver import CONFLICT_MARKED, is_council_file, merge_file

    ours_file = path is None or is_council_file(kind, path)
    try:  # read before the merge: a conflict is written into OURS
        texts = [file.read_bytes().decode("utf-8") for file in (base, ours, theirs)]
    except (OSError, UnicodeDecodeError):
        texts = None
    merged = merge_file(kind, base, ours, theirs, path)
    if merged and ours_file and texts:
        from dreamcontext_council.merge.explain import settled_choices

        for line in settled_choices(kind, *texts):
            echo(f"council {kind} merge: {line}.", err=True)
    if not merged:
        if ours_file:
            from dreamcontext_council.merge.explain import why_conflicted

            why = why_conflicted(kind, *texts) if texts else "a side is not UTF-8 text"
            echo(f"council {kind} merge: {why}; conflict marked.", err=True)
        sys.exit(CONFLICT_MARKED)
