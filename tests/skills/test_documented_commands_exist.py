"""Every `dreamcontext …` command the skill pack and the docs name must exist in the CLI."""

from __future__ import annotations

import click
import pytest

from dreamcontext_council.cli import cli

from .pack_commands import (
    PACK_DIR,
    PackCommand,
    Problem,
    all_commands,
    check_command,
    documented_files,
)


def _problems() -> list[Problem]:
    problems = []
    for path in documented_files():
        for command in all_commands(path):
            problem = check_command(cli, command)
            if problem:
                problems.append(problem)
    return problems


def test_pack_and_docs_name_only_commands_and_options_the_cli_has() -> None:
    real = [p for p in _problems() if not p.pending]
    assert not real, "unknown commands or options:\n" + "\n".join(map(str, real))


def test_commands_still_being_built_are_reported() -> None:
    pending = [p for p in _problems() if p.pending]
    assert not pending, "named in the docs but not built yet:\n" + "\n".join(map(str, pending))


def test_the_pack_names_commands_at_all() -> None:
    named = [c for p in sorted(PACK_DIR.rglob("*.md")) for c in all_commands(p)]
    assert len(named) > 30


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("dreamcontext council nosuch <id>", "has no command `nosuch`"),
        ("dreamcontext council round start <id> <N> --fast", "has no option `--fast`"),
        ("dreamcontext council board <id> [--colour]", "has no option `--colour`"),
    ],
)
def test_the_checker_catches_what_does_not_exist(line: str, message: str) -> None:
    command = PackCommand(PACK_DIR / "x.md", 1, "", line, inline="[" in line)
    problem = check_command(cli, command)
    assert problem is not None and message in problem.message


def test_the_checker_reports_commands_not_built_yet() -> None:
    group = click.Group("dreamcontext", commands={"council": click.Group("council")})
    problem = check_command(
        group, PackCommand(PACK_DIR / "x.md", 1, "", "dreamcontext council run <id>")
    )
    assert problem is not None and problem.pending and "not built yet" in problem.message


def test_the_checker_accepts_real_lines() -> None:
    for line in (
        "dreamcontext council round end <id> <N> --excuse <slug>",
        'dreamcontext council new "<question>" [--rounds <rounds>] [--interrupt]',
        "dreamcontext install-skill --packs council --target <dir> --uninstall",
        "dreamcontext council --help",
    ):
        command = PackCommand(PACK_DIR / "x.md", 1, "", line, inline="[" in line)
        assert check_command(cli, command) is None, line
