"""Ids and slugs: single safe path segments, checked before any file is touched."""

from __future__ import annotations

import re

from dreamcontext_council.errors import UsageError

# `council_` + 8 characters of nanoid's default alphabet: every id the Node tool writes.
# Never `.` or `/`, and never a leading `-` (the prefix comes first), so an accepted id is
# one safe path segment and a CLI argument that no option parser takes for an option.
_ID = re.compile(r"council_[A-Za-z0-9_-]{8}")
_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def new_debate_id() -> str:
    """A fresh `council_` + 8 alphanumerics id (letters and digits only, as ids have always
    been made here; `check_debate_id` also accepts the Node tool's `_` and `-`)."""
    import secrets  # only commands that create something pay for its import

    return "council_" + "".join(secrets.choice(_ALPHABET) for _ in range(8))


def new_knowledge_id() -> str:
    """A fresh `know_` + 8 chars id for a knowledge doc."""
    import secrets

    return "know_" + "".join(secrets.choice(_ALPHABET + "_-") for _ in range(8))


def check_debate_id(value: str) -> str:
    """Return the id if it is `council_` + 8 of `A-Za-z0-9_-`, else raise UsageError.

    The one check of a debate id: the CLI, the library, the dashboard's routes and the MCP
    tools all go through it (folder/paths.py `Root.debate`)."""
    if not _ID.fullmatch(value):
        raise UsageError(
            f"{_show(value)} is not a debate id; ids look like council_AbC12345 or "
            "council_9pQyBr_M "
            "(run `dreamcontext council list` to see them)."
        )
    return value


def check_slug(value: str, what: str = "persona slug") -> str:
    """Return the slug if it is lowercase letters, digits and dashes, else raise UsageError."""
    if not _SLUG.fullmatch(value):
        raise UsageError(
            f"{_show(value)} is not a valid {what}; use lowercase letters, digits and dashes "
            "(for example risk-auditor)."
        )
    return value


def slugify(text: str, limit: int) -> str:
    """Lowercase ASCII words joined by dashes, cut to `limit` characters."""
    import unicodedata  # a C extension: loaded by the commands that make a slug of text

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:limit].strip("-")


def _show(value: str) -> str:
    # repr() keeps NUL and control characters visible and on one line.
    return repr(value) if any(not c.isprintable() for c in value) else f"'{value}'"
