"""The library's own exceptions; the CLI turns them into exit codes in one place."""

from __future__ import annotations


class CouncilError(Exception):
    """A failed operation: the message says what is wrong and what to run instead."""

    exit_code = 1


class UsageError(CouncilError):
    """Bad input from the caller (an unsafe id, a stance that is not an option, ...)."""

    exit_code = 2


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
    """The user stopped the command (Ctrl-C); what is on disk is whole and can be resumed."""

    exit_code = 130


class RunStopped(CouncilError):
    """A `council run` stopped before the debate was done; the folder is whole and resumable.

    `reason` is the few words the debate's status shows: `stopped: <reason>, resume with …`.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
