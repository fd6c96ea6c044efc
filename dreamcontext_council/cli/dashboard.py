"""Viewing commands: `serve` (the live dashboard), `watch` (the board in a terminal), `export`."""

from __future__ import annotations

from pathlib import Path

import click

from dreamcontext_council.cli.base import (
    chosen_debate,
    current_root,
    echo,
    optional_debate_id,
    read_debate,
    root_option,
    warn,
)


def register(cli: click.Group, council: click.Group) -> None:
    """Add serve, watch and export to the `council` group."""
    for command in (serve, watch, export):
        council.add_command(command)


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; a loopback one unless --allow-remote.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a --host other machines can reach (no login: they read every debate).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the dashboard in a browser.")
@click.option(
    "--read-only",
    is_flag=True,
    help="Only show: no asking, answering, stopping or resuming from the page.",
)
@click.option(
    "--allow-command",
    "allow_commands",
    multiple=True,
    metavar="COMMAND",
    help="Let a roster file named from the page run this `command:` program (repeatable).",
)
@click.option("--base-url", help="Server URL for the openai provider in every run the page starts.")
@root_option
def serve(
    port: int,
    host: str,
    allow_remote: bool,
    open_browser: bool,
    read_only: bool,
    allow_commands: tuple[str, ...],
    base_url: str | None,
) -> None:
    """The live dashboard in a browser: debates, boards, transcripts and reports,
    updated as the files change; stop it with Ctrl-C.

    On loopback (the default) the page also asks the council, answers a person's seat,
    and stops or resumes a run. The address printed holds a token made at each start:
    only a browser that opened it may change anything (docs/security.md). --read-only,
    or a --host other machines reach, only shows.

    \b
    Examples:
      dreamcontext council serve --port 8765 --open
      dreamcontext council serve --read-only
    """
    from dreamcontext_council.dashboard.server import serve as run_server
    from dreamcontext_council.dashboard.write_path import WriteAccess

    root = current_root()
    write = None
    if not read_only:
        write = WriteAccess(allow_commands=frozenset(allow_commands), base_url=base_url)
    run_server(
        root,
        host=host,
        port=port,
        open_browser=open_browser,
        announce=lambda url: echo(
            f"Council dashboard for {root.path} at {url}\nPress Ctrl-C to stop."
        ),
        allow_remote=allow_remote,
        warn=warn,
        write=write,
    )


@click.command()
@optional_debate_id
@root_option
def watch(debate_id: str | None) -> None:
    """The board in the terminal, redrawn when the debate's files change; Ctrl-C stops.

    On a terminal, the calls in progress show below the board with the characters
    received so far and their seconds. When the output is not a terminal, each board
    the debate's record changes is printed once. Without an id (or with @last) it
    watches the newest debate, named on stderr.

    \b
    Examples:
      dreamcontext council watch
      dreamcontext council watch council_AbC12345
    """
    from rich.console import Console

    from dreamcontext_council.dashboard.watch import watch_board

    chosen = chosen_debate(debate_id)
    watch_board(current_root(), chosen, Console(), write=lambda text: echo(text, nl=False))


@click.command()
@optional_debate_id
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "json", "md"]),
    help="html: one page, no scripts or network; json: docs/export-schema.json; "
    "md: one markdown document [default: from the -o file's extension].",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Write to this file (`-` for standard output) instead of <id>.<format> in the "
    "current folder; its extension (.html, .json, .md) says the format when --format "
    "does not.",
)
@root_option
def export(debate_id: str | None, fmt: str | None, output: Path | None) -> None:
    """One self-contained file of the whole debate.

    Without -o it writes <id>.html (.json, .md) in the current folder, replacing the
    one an earlier export of the debate left there, and prints its path. Without an id
    (or with @last) it exports the newest debate, named on stderr.

    \b
    Examples:
      dreamcontext council export -o decision.md
      dreamcontext council export council_AbC12345 --format html
      dreamcontext council export council_AbC12345 --format json -o - | jq .verdicts
    """
    from dreamcontext_council.folder.storage import atomic_write_text
    from dreamcontext_council.views.export import export_debate
    from dreamcontext_council.views.export_target import STDOUT, check_output, export_format

    fmt = export_format(fmt, output)
    if output is not None and output != STDOUT:
        check_output(output)  # before the debate is read: one line, nothing made
    snapshot = read_debate(debate_id)
    text = export_debate(snapshot, fmt)
    if output == STDOUT:
        echo(text, nl=False)
        return
    size = f"{fmt}, {len(text.encode('utf-8')):,} bytes"
    if output is not None:
        output.write_text(text, encoding="utf-8", newline="\n")  # `-o`: the user named it
        echo(f"Wrote {output} ({size}).")
        return
    # The name is ours: a link there is refused (LinkOut), never followed.
    target = Path.cwd() / f"{snapshot.debate.id}.{fmt}"
    replaced = target.exists()
    atomic_write_text(target, text, within=Path.cwd())
    echo(f"Wrote {target} ({size}{'; replaced the earlier export' if replaced else ''}).")
