"""The library's own exceptions, and the exit codes the CLI turns them into in one place."""

from __future__ import annotations

# Every exit code of `dreamcontext`; docs/cli-reference.md prints EXIT_CODES.
EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
# The merge driver's "merged, a conflict left marked in the file" (merge/driver.py).
EXIT_CONFLICT_MARKED = 3
EXIT_STOPPED = 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a process stopped by Ctrl-C

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (
        EXIT_DONE,
        "Done. For `run`: the debate is complete, paused at an interlude, `--only` "
        "answered, or a `--dry-run` found nothing in the way.",
    ),
    (
        EXIT_FAILED,
        "The operation failed (a missing debate, a file that does not parse, a "
        "status that does not allow it, `doctor` finding problems); nothing half-written.",
    ),
    (
        EXIT_USAGE,
        "Bad usage: a wrong option or value, or a `run` that cannot start (pre-flight: "
        "a missing or refused key, a missing program or server, a refused `command:` "
        "model, a `--max-cost` that cannot be enforced, no model named for a server URL); "
        "nothing was written. A "
        "`--dry-run` that finds such a problem exits 2 too.",
    ),
    (
        EXIT_CONFLICT_MARKED,
        "`merge-driver` only: merged, with a conflict left marked in the file for git to report.",
    ),
    (
        EXIT_STOPPED,
        "`run` or `eval` stopped before the end: a `--max-cost` or `--max-calls` "
        "limit, a provider failing, every persona failing. The folder is whole; run the same "
        "command again to resume. `run --json` prints `stopped` (budget, failure, interrupted) "
        "and `reason`.",
    ),
    (
        EXIT_INTERRUPTED,
        "`run` stopped by Ctrl-C; what is on disk is whole and resumable (`run --json` "
        "prints `stopped: interrupted`).",
    ),
)


class CouncilError(Exception):
    """A failed operation: the message says what is wrong and what to run instead."""

    exit_code = EXIT_FAILED


class UsageError(CouncilError):
    """Bad input from the caller (an unsafe id, a stance that is not an option, ...)."""

    exit_code = EXIT_USAGE


class ConsentRequired(UsageError):
    """A debate folder names a program to run that the user has not allowed; nothing ran."""


class ProviderUnavailable(UsageError):
    """A model of the run cannot be called now (no key, no program, no server); nothing ran."""


class NotFoundError(CouncilError):
    """A debate, persona, root or file that does not exist."""


class StateError(CouncilError):
    """The debate's status does not allow the command."""


class FormatError(CouncilError):
    """A file on disk does not parse; nothing was written."""


class LinkOut(CouncilError):
    """A file or folder a command would write is a link (out of the root); nothing was written."""


class EncodingError(FormatError, ValueError):
    """A file that is not UTF-8 text; still a ValueError, like the decode error it replaces."""


class ProviderError(CouncilError):
    """A model provider failed in a way that retrying will not fix."""


class Interrupted(CouncilError):
    """The user stopped the command (Ctrl-C); what is on disk is whole and can be resumed.

    `debate_id` is the debate the stopped run drove, when it had one."""

    exit_code = EXIT_INTERRUPTED

    def __init__(self, message: str, debate_id: str | None = None) -> None:
        super().__init__(message)
        self.debate_id = debate_id


class RunStopped(CouncilError):
    """A `council run` stopped before the debate was done; the folder is whole and resumable.

    `reason` is the few words the debate's status shows: `stopped: <reason>, resume with …`;
    `debate_id` is the debate it drove, when known.
    """

    exit_code = EXIT_STOPPED

    def __init__(self, message: str, reason: str, debate_id: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.debate_id = debate_id
