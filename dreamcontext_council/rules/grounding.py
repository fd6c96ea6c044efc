"""Grounding and pre-flight: attachments are checked, and a question that cannot be debated stops the run."""

from __future__ import annotations

import re
from pathlib import Path

from dreamcontext_council.errors import UsageError

MAX_ATTACHMENT_BYTES = 512 * 1024

_PLACEHOLDERS = [
    (
        re.compile(r"\[(?:describe|insert|your|add|fill|paste|todo|tbd)\b[^\]]*\]", re.I),
        "a [bracketed] placeholder",
    ),
    (
        re.compile(r"<[^<>\n]*\b(?:here|your|describe|insert|paste)\b[^<>\n]*>", re.I),
        "an <angle-bracket> placeholder",
    ),
    (re.compile(r"\bTODO\b|\bTBD\b|\bFIXME\b|\bXXX\b"), "a TODO marker"),
    (
        re.compile(r"\{\{[^{}]*\}\}|\{\s*(?:[a-z_]+(?:\s+[a-z_]+)*|\.\.\.|…)\s*\}"),
        "a {template} placeholder",
    ),
    (re.compile(r"lorem ipsum", re.I), "lorem ipsum filler"),
]
_ARTIFACT = re.compile(
    r"\b(?:this|the attached|attached|the following|the above|my|our)\s+"
    r"(?:design|document|doc|code|diff|patch|pr|pull request|plan|proposal|spec|specification|rfc|migration plan|architecture|draft|file)s?\b",
    re.I,
)
_DEICTIC = re.compile(r"\b(?:this|the attached|attached|the following|the above)\s+", re.I)


def preflight(question: str, *, attached: bool) -> None:
    """Stop before any call when the question cannot be debated as written (`--yes` skips this)."""
    for pattern, what in _PLACEHOLDERS:
        found = pattern.search(question)
        if found:
            raise UsageError(
                f"The question still holds {what} ({found.group(0)!r}); fill it in, or pass --yes "
                "to run anyway. Nothing was spent."
            )
    if not attached:
        found = _ARTIFACT.search(question)
        if found and _DEICTIC.match(found.group(0)):
            raise UsageError(
                f"The question refers to {found.group(0)!r} but nothing is attached, so every persona "
                "would have to invent it. Attach it with --attach FILE, paste it into the question, or "
                "pass --yes to run anyway. Nothing was spent."
            )


def check_attachments(paths: list[str]) -> list[Path]:
    """Existing, UTF-8 text files under the size limit with distinct names; refused before any write."""
    checked: list[Path] = []
    names: set[str] = set()
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.is_file():
            raise UsageError(f"Attachment {raw} does not exist or is not a file; check the path.")
        size = path.stat().st_size
        if size > MAX_ATTACHMENT_BYTES:
            raise UsageError(
                f"Attachment {raw} is {size:,} bytes; the limit is {MAX_ATTACHMENT_BYTES:,}. Attach the "
                "relevant part instead."
            )
        data = path.read_bytes()
        if b"\x00" in data:
            raise UsageError(
                f"Attachment {raw} is a binary file; attach text (markdown, code, a diff)."
            )
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(
                f"Attachment {raw} is not UTF-8 text; convert it first (for example with iconv)."
            ) from None
        if path.name in names or path.name.startswith("."):
            raise UsageError(f"Attachment name {path.name} is repeated or hidden; rename the file.")
        names.add(path.name)
        checked.append(path)
    return checked
