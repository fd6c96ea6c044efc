"""The CLI reference (docs/cli-reference.md), generated from the click commands.

Run `python scripts/gen_cli_reference.py` (or `python -m dreamcontext_council.cli.reference`)
after changing a command; a test fails when the checked-in page differs from this output.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from dreamcontext_council.cli.base import echo
from dreamcontext_council.errors import EXIT_CODES
from dreamcontext_council.folder.storage import atomic_write_text

HELP_WIDTH = 88
REFERENCE_PATH = Path("docs") / "cli-reference.md"

_PREAMBLE = """\
# CLI reference

Every `dreamcontext` command with its `--help`. This page is generated from the code by
`python scripts/gen_cli_reference.py`; do not edit it by hand (a test fails when it drifts).

Every command that reads or changes a debate also takes `--root PATH` (else the
`DREAMCONTEXT_ROOT` variable, else the nearest `_dream_context/` folder). Errors are one
line on stderr.

`show`, `board`, `timeline`, `report show`, `export` and `watch` take the debate's id or
leave it out: no id, or `@last`, means the newest debate under the root, named in one line
on stderr (`summaries` and `prompt` take `@last` too). `run @last` goes on with the newest
debate; the bare `run` resumes the one debate whose run stopped. Commands that write a
persona's answer always need the id.
"""


def exit_code_table() -> str:
    """The exit codes, from `errors.EXIT_CODES`: the one list the commands exit with."""
    rows = ["## Exit codes", "", "| code | meaning |", "|---|---|"]
    rows += [f"| {code} | {meaning} |" for code, meaning in EXIT_CODES]
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class Entry:
    """One command in the tree, with its context (for usage lines) and its alias target."""

    path: tuple[str, ...]
    context: click.Context
    alias_of: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return " ".join(self.path)


def walk(root: click.Command, prog: str = "dreamcontext") -> list[Entry]:
    """Every command under `root`, depth first, subcommands in name order.

    A command registered under two names is described once, under its own name
    (e.g. `new`); the other name (e.g. `create`) is listed as its alias.
    """
    found: list[tuple[tuple[str, ...], click.Context]] = []

    def visit(command: click.Command, context: click.Context, path: tuple[str, ...]) -> None:
        found.append((path, context))
        if isinstance(command, click.Group):
            for name in sorted(command.list_commands(context)):
                sub = command.get_command(context, name)
                if sub is not None and not sub.hidden:
                    visit(sub, _context(sub, name, context), (*path, name))

    visit(root, _context(root, prog, None), (prog,))
    canonical: dict[int, tuple[str, ...]] = {}
    for path, context in found:
        key = id(context.command)
        if key not in canonical or path[-1] == context.command.name:
            canonical[key] = path
    return [
        Entry(
            path,
            context,
            None if canonical[id(context.command)] == path else canonical[id(context.command)],
        )
        for path, context in found
    ]


def _context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    # The command's own settings (e.g. `-h` as a help option) apply, as when it runs.
    settings = {
        **command.context_settings,
        "terminal_width": HELP_WIDTH,
        "max_content_width": HELP_WIDTH,
    }
    return click.Context(command, info_name=name, parent=parent, **settings)


def _anchor(path: tuple[str, ...]) -> str:
    return "-".join(path)


def render_reference(root: click.Command) -> str:
    """The whole markdown page: a contents list, then each command's help."""
    entries = walk(root)
    lines = [_PREAMBLE, exit_code_table(), "## Commands", ""]
    for entry in entries:
        depth = "  " * (len(entry.path) - 1)
        short = entry.context.command.get_short_help_str(limit=120)
        short = short.replace("<", "&lt;").replace(">", "&gt;")
        summary = f"alias of `{' '.join(entry.alias_of)}`" if entry.alias_of else short
        lines.append(f"{depth}- [`{entry.name}`](#{_anchor(entry.path)}): {summary}")
    lines.append("")
    for entry in entries:
        lines.append(f'<a id="{_anchor(entry.path)}"></a>')
        lines.append("")
        lines.append(f"## `{entry.name}`")
        lines.append("")
        if entry.alias_of:
            target = " ".join(entry.alias_of)
            lines.append(f"An alias of [`{target}`](#{_anchor(entry.alias_of)}).")
            lines.append("")
            continue
        lines.append("```text")
        lines.append(entry.context.command.get_help(entry.context).rstrip())
        lines.append("```")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the reference to docs/cli-reference.md under the current folder (or the path given)."""
    from dreamcontext_council.cli import cli

    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else REFERENCE_PATH
    atomic_write_text(target, render_reference(cli), within=None)  # the path given, or the docs
    echo(f"Wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
