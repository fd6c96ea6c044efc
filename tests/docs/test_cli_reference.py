"""docs/cli-reference.md is generated from the click commands and must not drift from them."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from dreamcontext_council.cli import cli
from dreamcontext_council.cli.reference import main, render_reference, walk

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "cli-reference.md"


def test_cli_reference_matches_the_code() -> None:
    assert REFERENCE.is_file(), (
        "docs/cli-reference.md is missing; run python scripts/gen_cli_reference.py"
    )
    current = REFERENCE.read_text(encoding="utf-8")
    assert current == render_reference(cli), (
        "docs/cli-reference.md is out of date; run python scripts/gen_cli_reference.py"
    )


def test_every_command_has_a_section() -> None:
    text = render_reference(cli)
    for entry in walk(cli):
        assert f"## `{entry.name}`" in text
    assert "## `dreamcontext council round start`" in text
    assert "## `dreamcontext install-skill`" in text


def test_an_alias_is_described_once() -> None:
    text = render_reference(cli)
    assert "An alias of [`dreamcontext council new`]" in text
    assert text.count("Usage: dreamcontext council new ") == 1


def test_the_generator_writes_the_page(tmp_path: Path) -> None:
    target = tmp_path / "ref.md"
    assert main([str(target)]) == 0
    assert target.read_text(encoding="utf-8") == render_reference(cli)


def test_the_page_does_not_depend_on_the_terminal(monkeypatch) -> None:
    @click.group()
    def tool() -> None:
        """A tool."""

    @tool.command()
    @click.option("--long-option-name", help="A help text long enough to wrap " * 4)
    def sub(long_option_name: str) -> None:
        """A subcommand."""

    monkeypatch.setenv("COLUMNS", "30")
    narrow = render_reference(tool)
    monkeypatch.setenv("COLUMNS", "200")
    assert render_reference(tool) == narrow


def test_the_page_does_not_depend_on_what_ran_before(tmp_path: Path) -> None:
    # click caches a command's help option the first time the command runs.
    before = render_reference(cli)
    CliRunner().invoke(cli, ["install-skill", "--target", str(tmp_path)])
    CliRunner().invoke(cli, ["council", "list", "--root", str(tmp_path)])
    assert render_reference(cli) == before
    assert "-h, --help" in before
