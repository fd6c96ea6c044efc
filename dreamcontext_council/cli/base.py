"""What every command shares: error translation, --root, --json output, bodies from stdin,
and `echo`, the one way a command prints (control characters in model text shown, not obeyed)."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.paths import Root, require_root

if TYPE_CHECKING:
    from dreamcontext_council.actions.snapshot import DebateSnapshot
from dreamcontext_council.rules.limits import MAX_ROUNDS
from dreamcontext_council.views.terminal import cut_to, printable, printable_json

F = TypeVar("F", bound=Callable[..., Any])
# A round number on the command line: a debate has at most MAX_ROUNDS rounds.
ROUND_NUMBER = click.IntRange(1, MAX_ROUNDS)
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
NAMED_WIDTH = 80  # the stderr line naming the debate chosen for a command, topic cut to fit


class CouncilGroup(click.Group):
    """Turns library errors into one plain line on stderr and the right exit code."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Like click's, but a usage error is one line naming the --help to read."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:  # a group alone: its help
            echo(exc.format_message(), err=True)
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            # click's parser raises some errors (an option without its value) without the
            # command's context: the command line itself says which command it was.
            path = exc.ctx.command_path if exc.ctx else self._command_path(args, prog_name)
            said = exc.format_message().rstrip(".")
            echo(f"Error: {said} (see `{path} --help`).", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            echo("Aborted.", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def _command_path(self, args: Sequence[str] | None, prog_name: str | None) -> str:
        """`dreamcontext council run`: the command names that open `args`."""
        words = [prog_name or self.name or "dreamcontext"]
        command: click.Command = self
        context = click.Context(self)
        for arg in sys.argv[1:] if args is None else args:
            if not isinstance(command, click.Group) or arg.startswith("-"):
                break
            found = command.get_command(context, arg)
            if found is None:
                break
            words.append(arg)
            command = found
        return " ".join(words)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Bytes that are not UTF-8 arrive as lone surrogates and could never be written.
        for arg in args:
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:
                shown = os.fsencode(arg).decode("ascii", "backslashreplace")
                echo(
                    f"Error: the argument '{shown}' is not UTF-8 text; pass it in UTF-8.",
                    err=True,
                )
                ctx.exit(2)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CouncilError as exc:
            echo(f"Error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            then = " Free some space and run it again." if exc.errno in _NO_SPACE else ""
            echo(f"Error: {exc.strerror or exc}{where}; nothing was changed.{then}", err=True)
            ctx.exit(1)


def _keep_root(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value:
        ctx.meta["council.root"] = value
    return value


def root_option(func: F) -> F:
    """`--root PATH`: the `_dream_context/` to use (else DREAMCONTEXT_ROOT, else the nearest)."""
    return click.option(
        "--root",
        type=click.Path(file_okay=False),
        expose_value=False,
        callback=_keep_root,
        help="The _dream_context/ folder to use (default: DREAMCONTEXT_ROOT or the nearest).",
    )(func)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")(func)


def explicit_root() -> str | None:
    return click.get_current_context().meta.get("council.root")


def current_root() -> Root:
    """The root for commands that need an existing one."""
    return require_root(explicit_root())


def echo(message: str, *, err: bool = False, nl: bool = True) -> None:
    """Print a line to stdout (or stderr): every command's output goes through here, so a
    model's escape sequences, carriage returns and bidi overrides are shown, never obeyed."""
    click.echo(printable(message), err=err, nl=nl)


def optional_debate_id(func: F) -> F:
    """`[ID]`: a debate id, `@last`, or nothing (the newest debate under the root)."""
    from dreamcontext_council.cli.completion import complete_debate_id

    return click.argument(
        "debate_id", required=False, metavar="[ID]", shell_complete=complete_debate_id
    )(func)


def chosen_debate(debate_id: str | None) -> str:
    """The id a command works on: the one given, else (none, or `@last`) the newest debate
    under the root, named in one line on stderr."""
    if debate_id is not None and not debate_id.startswith("@"):
        return debate_id  # named: nothing to choose (and actions.newest is not loaded)
    from dreamcontext_council.actions.newest import choose_debate

    chosen = choose_debate(current_root(), debate_id)
    if chosen.chosen_for_you:
        say_chosen(chosen.line())
    return chosen.id


def say_chosen(line: str) -> None:
    """The line naming the debate a command chose, on stderr within 80 columns."""
    echo(cut_to(printable(line), NAMED_WIDTH), err=True)


def read_debate(debate_id: str | None) -> DebateSnapshot:
    """A debate for a read command (None or `@last`: the newest, see `chosen_debate`): a
    file holding git conflict markers is left out and named in one line on stderr each, and
    the rest of the debate is shown."""
    from dreamcontext_council.actions.snapshot import load_snapshot

    snapshot = load_snapshot(current_root(), chosen_debate(debate_id), around_conflicts=True)
    for line in snapshot.conflicts:
        warn(f"{line} Shown without it.")
    return snapshot


def emit(data: Any, as_json: bool, text: str | Callable[[], str]) -> None:
    """Print `data` as JSON or the human text."""
    if as_json:
        echo(printable_json(json.dumps(data, indent=2, ensure_ascii=False)))
    else:
        rendered = text() if callable(text) else text
        echo(rendered.rstrip("\n"))


def warn(message: str) -> None:
    echo(f"Warning: {message}", err=True)


def read_stdin_bytes(body: str | None) -> bytes | None:
    """Stdin bytes when no --body was given and stdin is not a terminal."""
    if body is not None:
        return None
    stream = sys.stdin
    if stream is None or stream.isatty():
        return None
    return stream.buffer.read()


def is_terminal() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
