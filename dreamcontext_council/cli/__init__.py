"""The `dreamcontext` command line: a thin layer that parses arguments and calls the library."""

from __future__ import annotations

import sys

import click

from dreamcontext_council.cli.base import CouncilGroup
from dreamcontext_council.cli.orchestrator import register_orchestrator
from dreamcontext_council.cli.persona import register_persona
from dreamcontext_council.cli.reading import register_reading


@click.group(cls=CouncilGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dreamcontext-council", prog_name="dreamcontext")
def cli() -> None:
    """Hold a council: personas debate a hard decision in rounds, and a clean
    synthesizer writes a decision report that keeps the dissent.

    \b
    Example:
      dreamcontext council run --topic "Should we migrate the session store to Postgres?"
    """


@cli.group(cls=CouncilGroup)
def council() -> None:
    """Create, run, read and promote debates (see `dreamcontext council COMMAND --help`).

    \b
    Example:
      dreamcontext council new "Should we adopt Rust?" --options "A=Adopt,B=Stay"
    """


register_orchestrator(council)
register_persona(council)
register_reading(council)


def _register_optional() -> None:
    # Commands of later layers register themselves here when their modules exist.
    import importlib

    for name in ("run", "dashboard", "install"):
        try:
            module = importlib.import_module(f"dreamcontext_council.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"dreamcontext_council.cli.{name}":
                raise
            continue
        module.register(cli, council)


_register_optional()


def main() -> None:
    """Console-script entry point."""
    sys.exit(cli.main(prog_name="dreamcontext", standalone_mode=True))
