"""The `dreamcontext` command line: a thin layer that parses arguments and calls the library."""

from __future__ import annotations

import gc
import sys

import click

from dreamcontext_council.cli.lazy import CommandModules, LazyGroup

# Each module is imported only when one of its commands runs (see cli/lazy.py), so reading
# a board never loads the engine, the provider SDKs or the dashboard.
MODULES = CommandModules()
MODULES.add(
    "dreamcontext_council.cli.orchestrator",
    {
        "council": (
            "new",
            "create",
            "agent",
            "round",
            "inject",
            "question",
            "synthesize",
            "complete",
            "promote",
        )
    },
    "register_orchestrator",
    one_group="council",
)
MODULES.add(
    "dreamcontext_council.cli.persona",
    {"council": ("round-context", "verdict", "report", "research")},
    "register_persona",
    one_group="council",
)
MODULES.add(
    "dreamcontext_council.cli.check",
    {"council": ("check",)},
    "register_check",
    one_group="council",
)
MODULES.add(
    "dreamcontext_council.cli.reading",
    {"council": ("summaries", "board", "timeline", "list", "show", "prompt", "live")},
    "register_reading",
    one_group="council",
)
MODULES.add(
    "dreamcontext_council.cli.git",
    {"council": ("git-setup", "merge-driver")},
    "register_git",
    one_group="council",
)
# Commands of later layers register themselves when their modules exist.
MODULES.add("dreamcontext_council.cli.run", {"council": ("run",)})
MODULES.add("dreamcontext_council.cli.dashboard", {"council": ("serve", "watch", "export")})
MODULES.add("dreamcontext_council.cli.install", {"cli": ("install-skill",)})
MODULES.add("dreamcontext_council.cli.doctor", {"council": ("doctor",)})
MODULES.add("dreamcontext_council.cli.mcp", {"council": ("mcp",)})
MODULES.add("dreamcontext_council.cli.eval", {"council": ("eval",)})


@click.group(
    cls=LazyGroup,
    modules=MODULES,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="dreamcontext-council", prog_name="dreamcontext")
def cli() -> None:
    """Hold a council: personas debate a hard decision in rounds, and a clean
    synthesizer writes a decision report that keeps the dissent.

    \b
    Examples:
      dreamcontext council run --topic "Should we migrate the session store to Postgres?"
      dreamcontext council show          # the newest debate: no id to type

    \b
    Shell completion (commands, options, debate ids): add your shell's line
    to its startup file, then open a new shell.
      eval "$(_DREAMCONTEXT_COMPLETE=bash_source dreamcontext)"   # ~/.bashrc
      eval "$(_DREAMCONTEXT_COMPLETE=zsh_source dreamcontext)"    # ~/.zshrc
      _DREAMCONTEXT_COMPLETE=fish_source dreamcontext | source    # fish config
    """


@cli.group(cls=LazyGroup, modules=MODULES)
def council() -> None:
    """Create, run, read and promote debates (see `dreamcontext council COMMAND --help`).

    \b
    Example:
      dreamcontext council new "Should we adopt Rust?" --options "A=Adopt,B=Stay"
    """


def main() -> None:
    """Console-script entry point."""
    try:
        sys.exit(cli.main(prog_name="dreamcontext", standalone_mode=True))
    finally:
        # The process ends here: what is still alive is left out of the collection the
        # interpreter makes on its way out, a tenth of a reading command's time. Every file
        # is written and closed by then; nothing waits on a collector's finalizer.
        gc.freeze()
