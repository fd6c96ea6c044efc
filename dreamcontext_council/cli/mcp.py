"""`council mcp`: the council as an MCP server over stdio, for coding agents."""

from __future__ import annotations

import click

from dreamcontext_council.cli.base import explicit_root, root_option
from dreamcontext_council.council_mcp.catalog import catalog_text


def register(cli: click.Group, council: click.Group) -> None:
    """Add `mcp` to the council group."""
    council.add_command(mcp)


@click.command(epilog=catalog_text())
@click.option(
    "--allow-command",
    "allow_commands",
    multiple=True,
    metavar="COMMAND",
    help="Let debates started through MCP run this `command:` model (repeatable).",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Log every request (tool calls, model calls over HTTP) to stderr; "
    "without it the server writes only warnings and errors there.",
)
@root_option
def mcp(allow_commands: tuple[str, ...], verbose: bool) -> None:
    """Serve the council to an MCP client (Claude Code, Claude Desktop, Cursor) over stdio.

    The tools call the same library as these commands; a run started through MCP goes
    on inside the server process. A `command:` model an agent names runs only if it is
    allowed here with --allow-command (a model named by the agent is not your consent).
    See docs/mcp.md.

    \b
    Example:
      dreamcontext install-skill --packs council --mcp
      dreamcontext council mcp --root path/to/project
    """
    import anyio

    from dreamcontext_council.council_mcp.server import serve
    from dreamcontext_council.council_mcp.starting import ServerSettings
    from dreamcontext_council.engine.providers.consent import allowed_form

    settings = ServerSettings(
        root=explicit_root(),
        allow_commands={allowed_form(c) for c in allow_commands if c},
        verbose=verbose,
    )
    anyio.run(serve, settings)
