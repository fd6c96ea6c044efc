"""`dreamcontext install-skill`: put the council skill pack where coding agents find it."""

from __future__ import annotations

from pathlib import Path

import click

from dreamcontext_council import skills
from dreamcontext_council.cli.base import emit, json_option, warn


def register(cli: click.Group, council: click.Group) -> None:
    """Add `install-skill` to the top-level group."""
    cli.add_command(install_skill)


@click.command("install-skill")
@click.option(
    "--packs",
    default="council",
    show_default=True,
    help="Comma-separated skill packs to install or remove.",
)
@click.option(
    "--target",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The project folder; files go under its .claude/.",
)
@click.option("--uninstall", is_flag=True, help="Remove the files these packs installed.")
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite files in the way that were not installed by this command or were changed.",
)
@json_option
def install_skill(packs: str, target: Path, uninstall: bool, force: bool, as_json: bool) -> None:
    """Install a skill pack into .claude/skills/ and its agents into .claude/agents/.

    What was installed is recorded in .claude/.dreamcontext-skills.json, so
    installing again upgrades in place and --uninstall removes exactly those files
    (a file you changed since is kept, with a warning).

    \b
    Example:
      dreamcontext install-skill --packs council --target path/to/project
    """
    names = packs.split(",")
    if uninstall:
        removed = skills.uninstall_packs(target, names)
        for relative in removed.kept_modified:
            warn(f"kept {removed.claude_dir / relative}: it was changed after it was installed.")
        lines = [f"Removed {len(removed.removed)} file(s) from {removed.claude_dir}."]
        lines += [f"  {relative}" for relative in removed.removed]
        lines += [f"{pack} was not installed there." for pack in removed.not_installed]
        emit(
            {
                "target": str(removed.claude_dir),
                "removed": removed.removed,
                "kept_modified": removed.kept_modified,
                "not_installed": removed.not_installed,
            },
            as_json,
            "\n".join(lines),
        )
        return
    result = skills.install_packs(target, names, force=force)
    lines = [f"Installed {', '.join(result.packs)} into {result.claude_dir}:"]
    lines += [f"  {relative}" for relative in result.written]
    if result.unchanged:
        lines.append(f"  ({len(result.unchanged)} file(s) already up to date)")
    emit(
        {
            "target": str(result.claude_dir),
            "packs": result.packs,
            "written": result.written,
            "unchanged": result.unchanged,
        },
        as_json,
        "\n".join(lines),
    )
