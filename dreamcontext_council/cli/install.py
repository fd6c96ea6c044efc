"""`dreamcontext install-skill`: put the council skill pack where coding agents find it."""

from __future__ import annotations

from pathlib import Path

import click

from dreamcontext_council import skills
from dreamcontext_council.cli.base import emit, json_option, warn
from dreamcontext_council.council_mcp import client_config


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
@click.option(
    "--mcp",
    "with_mcp",
    is_flag=True,
    help="Also add the council MCP server to the project's .mcp.json (Claude Code).",
)
@click.option("--uninstall", is_flag=True, help="Remove the files these packs installed.")
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite files in the way that were not installed by this command or were changed.",
)
@click.option(
    "--git-setup",
    "set_up_git",
    is_flag=True,
    help="Also run `dreamcontext council git-setup` for the project's git repository.",
)
@json_option
def install_skill(
    packs: str,
    target: Path,
    with_mcp: bool,
    uninstall: bool,
    force: bool,
    set_up_git: bool,
    as_json: bool,
) -> None:
    """Install a skill pack into .claude/skills/ and its agents into .claude/agents/.

    What was installed is recorded in .claude/.dreamcontext-skills.json, so
    installing again upgrades in place and --uninstall removes exactly those files
    (a file you changed since is kept, with a warning).

    --mcp also adds `dreamcontext council mcp` to the project's .mcp.json, merged with
    the servers already there (an entry of that name you changed is kept unless --force);
    with --uninstall it takes that entry out again. See docs/mcp.md.

    \b
    In a git repository it offers `dreamcontext council git-setup`, which makes
    branches merge debates without conflicts; --git-setup runs it.

    \b
    Examples:
      dreamcontext install-skill --packs council --target path/to/project
      dreamcontext install-skill --packs council --mcp
      dreamcontext install-skill --packs council --target path/to/project --git-setup
    """
    names = packs.split(",")
    if uninstall:
        removed = skills.uninstall_packs(target, names)
        for relative in removed.kept_modified:
            warn(f"kept {removed.claude_dir / relative}: it was changed after it was installed.")
        lines = [f"Removed {len(removed.removed)} file(s) from {removed.claude_dir}."]
        lines += [f"  {relative}" for relative in removed.removed]
        lines += [f"{pack} was not installed there." for pack in removed.not_installed]
        mcp_change = client_config.remove_server(target) if with_mcp else None
        if mcp_change is not None:
            lines.append(_mcp_line(mcp_change))
        emit(
            {
                "target": str(removed.claude_dir),
                "removed": removed.removed,
                "kept_modified": removed.kept_modified,
                "not_installed": removed.not_installed,
            }
            | _mcp_json(mcp_change),
            as_json,
            "\n".join(lines),
        )
        return
    if with_mcp:
        client_config.check_config(target)  # a broken .mcp.json stops before any file is written
    result = skills.install_packs(target, names, force=force)
    lines = [f"Installed {', '.join(result.packs)} into {result.claude_dir}:"]
    lines += [f"  {relative}" for relative in result.written]
    if result.unchanged:
        lines.append(f"  ({len(result.unchanged)} file(s) already up to date)")
    git = _offer_git_setup(target, set_up_git)
    if git:
        lines.append(git)
    mcp_change = client_config.add_server(target, force=force) if with_mcp else None
    if mcp_change is not None:
        lines.append(_mcp_line(mcp_change))
    emit(
        {
            "target": str(result.claude_dir),
            "packs": result.packs,
            "written": result.written,
            "unchanged": result.unchanged,
            "git_setup": git,
        }
        | _mcp_json(mcp_change),
        as_json,
        "\n".join(lines),
    )


def _offer_git_setup(target: Path, run: bool) -> str | None:
    """Run git-setup for the project, or a line offering it when the project is in git."""
    from dreamcontext_council.actions import git_setup
    from dreamcontext_council.folder.paths import ROOT_NAME, Root, find_root

    root = find_root(cwd=target) or Root((target / ROOT_NAME).resolve())
    if run:
        done = git_setup.git_setup(root)
        return f"Git merge drivers set up in {done.repository}; commit {done.attributes}."
    if git_setup.repository_of(target) is None or git_setup.is_set_up(root):
        return None
    return (
        "This project is a git repository: run `dreamcontext council git-setup` (or "
        "install-skill --git-setup) so branches merge debates without conflicts."
    )


_MCP_OUTCOMES = {
    "added": "Added the council MCP server to {path}.",
    "replaced": "Replaced the council MCP server entry in {path}.",
    "unchanged": "The council MCP server is already in {path}.",
    "kept": "Kept your own council MCP server entry in {path} (pass --force to replace it).",
    "removed": "Removed the council MCP server from {path}.",
    "absent": "The council MCP server was not in {path}.",
}


def _mcp_line(change: client_config.ConfigChange) -> str:
    line = _MCP_OUTCOMES[change.outcome].format(path=change.path)
    if change.command and change.command != client_config.COMMAND:
        line += (
            f" `{client_config.COMMAND}` is not on PATH, so it runs {change.command}; "
            "run install-skill --mcp --force again after moving this installation."
        )
    return line


def _mcp_json(change: client_config.ConfigChange | None) -> dict[str, str]:
    if change is None:
        return {}
    return {"mcp_config": str(change.path), "mcp": change.outcome}
