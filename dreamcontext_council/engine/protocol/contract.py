"""What a persona must return: report sections plus a verdict block. Pure parsing."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.markdown import headings, normalize_title, sections
from dreamcontext_council.rules.report import clean_entry_body, missing_sections
from dreamcontext_council.rules.reviews import review_score
from dreamcontext_council.rules.verdicts import parse_conviction, resolve_stance

_BLOCK = re.compile(
    r"^[ ]{0,3}(`{3,}|~{3,})[ \t]*verdict[ \t]*\n(.*?)\n[ ]{0,3}\1[ \t]*$", re.S | re.M | re.I
)
_FIELDS = ("stance", "conviction", "headline", "concession")


@dataclass(frozen=True)
class VerdictBlock:
    """`stance` is the option key; `stance_text` is the stance as the persona wrote it,
    which becomes the label when it names a new option."""

    stance: str
    conviction: int
    headline: str
    concession: str | None
    stance_text: str = ""


@dataclass(frozen=True)
class PersonaAnswer:
    """A persona's answer split into the report entry and the verdict."""

    body: str
    verdict: VerdictBlock
    # Text was left out of the body: chatter before the first heading or after the verdict.
    trimmed: bool = False


class ContractError(ValueError):
    """The answer breaks the contract; the message is quoted back in the repair request."""


def has_verdict_block(text: str) -> bool:
    """Whether the answer holds a ```verdict block (a model's answer, or an entry given whole)."""
    return _BLOCK.search(text) is not None


def _fields(block: str) -> dict[str, str]:
    values: dict[str, str] = {}
    current: str | None = None
    for line in block.split("\n"):
        key, sep, value = line.partition(":")
        name = key.strip().strip("*-` ").lower()
        if sep and name in _FIELDS:
            current = name
            values[name] = value.strip()
        elif current and line.strip():
            values[current] += " " + line.strip()
    return values


def parse_persona_answer(
    text: str,
    registered: list[dict[str, str]],
    known: list[dict[str, str]],
    *,
    cross_examines: str | None = None,
) -> PersonaAnswer:
    """Split an answer into its report body and verdict; ContractError says what is wrong.

    With ``cross_examines`` (the peer a round-2 persona was assigned), the answer must
    also hold a `### Cross-examination` section ending in `Score: N/10`."""
    matches = list(_BLOCK.finditer(text))
    if not matches:
        raise ContractError("the answer has no ```verdict block at the end.")
    block = matches[-1]
    values = _fields(block.group(2))
    missing = [f for f in ("stance", "conviction", "headline") if not values.get(f)]
    if missing:
        raise ContractError(f"the verdict block lacks {', '.join(missing)}.")
    try:
        conviction = parse_conviction(values["conviction"].rstrip("%").strip())
        stance_text = values["stance"].strip("*` ")
        stance, _ = resolve_stance(stance_text, registered, known)
    except UsageError as exc:
        raise ContractError(str(exc)) from None
    body, trimmed = _entry_text(text[: block.start()], text[block.end() :])
    try:
        # A model's stray `##` or `Title\n---` is demoted to ###, not a paid repair: stored,
        # it could not pass for an entry heading of report.md.
        body, _ = clean_entry_body(body, demote=True)
    except UsageError as exc:
        raise ContractError(str(exc)) from None
    absent = missing_sections(body)
    if absent:
        raise ContractError(
            "the report lacks the section(s) " + ", ".join(f"### {s}" for s in absent) + "."
        )
    if cross_examines is not None and review_score(_cross_examination(body)) is None:
        raise ContractError(
            f"the answer has no ### Cross-examination of {cross_examines} ending in `Score: N/10`."
        )
    concession = values.get("concession", "").strip()
    if concession.lower() in ("none", "n/a", "-", ""):
        concession = ""
    return PersonaAnswer(
        body,
        VerdictBlock(
            stance,
            conviction,
            " ".join(values["headline"].split()),
            concession or None,
            stance_text,
        ),
        trimmed,
    )


def _entry_text(before: str, after: str) -> tuple[str, bool]:
    """The report entry: what stands from the first heading up to the verdict block.

    A model's "Sure! Here is my analysis" before the sections, or "Let me know if…" after
    the verdict, is not part of the entry; True when such text was left out."""
    lines = before.strip("\n").split("\n")
    marks = headings(lines)
    start = marks[0].line if marks else 0
    dropped = "\n".join(lines[:start]).strip() or after.strip()
    return "\n".join(lines[start:]).strip(), bool(dropped)


def _cross_examination(body: str) -> str | None:
    wanted = normalize_title("Cross-examination")
    found = [s.body for s in sections(body, 3) if normalize_title(s.title) == wanted]
    return found[0] if found else None
