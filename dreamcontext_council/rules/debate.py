"""debate.md: the frontmatter state machine and the three body sections."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from dreamcontext_council.errors import FormatError, StateError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.limits import MAX_ROUNDS
from dreamcontext_council.rules.markdown import find_section, sections

if TYPE_CHECKING:
    from dreamcontext_council.rules.run_settings import RunSettings

RUN_KEY = "run"
"""The frontmatter key of how `council run` last ran the debate (rules/run_settings.py)."""

_STATUS = r"round_(\d+)_(running|complete)"  # compiled by the first round status read


def bounded_round(digits: str) -> int | None:
    """The round that ASCII `digits` name when it is 1 to MAX_ROUNDS; None otherwise.

    Checked before int() so a file cannot hand a reader a number too large to use."""
    if not (digits.isascii() and digits.isdigit()) or len(digits.lstrip("0")) > 2:
        return None
    number = int(digits)
    return number if 1 <= number <= MAX_ROUNDS else None


def parse_round(digits: str, where: str, what: str = "round") -> int:
    """A round number read from a file; FormatError unless it is 1 to MAX_ROUNDS."""
    number = bounded_round(digits)
    if number is None:
        shown = digits if len(digits) <= 12 else digits[:12] + "…"
        raise FormatError(
            f"{where}: {what} '{shown}' is not a round from 1 to {MAX_ROUNDS}; fix or remove it."
        )
    return number


class Status(NamedTuple):
    """A parsed status: phase is created, running, complete_round, synthesizing or complete."""

    phase: str
    round: int

    @classmethod
    def parse(cls, text: str) -> Status:
        if text in ("created", "synthesizing", "complete"):
            return cls(text, 0)
        match = re.fullmatch(_STATUS, text)
        if not match:
            raise FormatError(
                f"status '{text}' is not one of created, round_N_running, round_N_complete, "
                "synthesizing, complete; fix it in debate.md."
            )
        number = bounded_round(match.group(1))
        if number is None:
            raise FormatError(
                f"status '{text[:40]}' names a round outside 1 to {MAX_ROUNDS}; fix it in debate.md."
            )
        phase = "running" if match.group(2) == "running" else "round_complete"
        return cls(phase, number)

    def __str__(self) -> str:
        if self.phase == "running":
            return f"round_{self.round}_running"
        if self.phase == "round_complete":
            return f"round_{self.round}_complete"
        return self.phase


@dataclass
class Debate:
    """debate.md in memory; unknown frontmatter keys are kept as they are."""

    meta: dict[str, Any]
    body: str

    @property
    def id(self) -> str:
        return str(self.meta["id"])

    @property
    def topic(self) -> str:
        return str(self.meta["topic"])

    @property
    def status(self) -> Status:
        return Status.parse(str(self.meta["status"]))

    @property
    def rounds_planned(self) -> int:
        return int(self.meta["rounds_planned"])

    @property
    def current_round(self) -> int:
        return int(self.meta.get("current_round") or 0)

    @property
    def personas(self) -> list[str]:
        return list(self.meta.get("personas") or [])

    @property
    def options(self) -> list[dict[str, str]]:
        return [
            {**o, "key": str(o["key"]), "label": str(o["label"])}
            for o in self.meta.get("options") or []
        ]

    @property
    def interrupt(self) -> bool:
        return bool(self.meta.get("interrupt_between_rounds"))

    @property
    def promoted(self) -> str | None:
        value = self.meta.get("promoted_to_knowledge")
        return str(value) if value else None

    @property
    def flags(self) -> list[str]:
        return [str(f) for f in self.meta.get("flags") or []]

    @property
    def run_settings(self) -> RunSettings:
        """How `council run` last ran this debate (`run:`), empty before its first run."""
        from dreamcontext_council.rules.run_settings import parse_run_settings

        return parse_run_settings(self.meta.get(RUN_KEY))

    def section(self, title: str) -> str:
        """The text of a `##` body section, '' when it is absent."""
        found = find_section(self.body, 2, title)
        return found.body if found else ""

    def facts(self) -> list[str]:
        """The bullets of Constraints & Known Facts."""
        text = self.section("Constraints & Known Facts")
        return [line[2:].strip() for line in text.split("\n") if line.startswith("- ")]


def parse_debate(text: str, where: str = "debate.md") -> Debate:
    """Parse and check debate.md; a FormatError says which field is wrong."""
    meta, body = frontmatter_io.parse(text, where)
    for key in ("id", "topic", "status", "rounds_planned"):
        if key not in meta:
            raise FormatError(f"{where} has no '{key}' in its frontmatter; restore it.")
    for key in ("rounds_planned", "current_round"):
        if key in meta and (not isinstance(meta[key], int) or isinstance(meta[key], bool)):
            if key == "current_round" and meta[key] is None:
                continue  # read as 0
            raise FormatError(f"{where}: '{key}' must be a whole number, not {meta[key]!r}.")
    check_rounds(meta, where)
    personas = meta.get("personas") or []
    if not isinstance(personas, list) or not all(isinstance(p, str) for p in personas):
        raise FormatError(f"{where}: 'personas' must be a list of slugs.")
    options = meta.get("options") or []
    if not isinstance(options, list) or not all(
        isinstance(o, dict) and _scalar(o.get("key")) and _scalar(o.get("label")) for o in options
    ):
        raise FormatError(f"{where}: 'options' must be a list of {{key, label}} entries.")
    if meta.get(RUN_KEY) is not None:  # a debate never run (or the Node tool's) has none
        from dreamcontext_council.rules.run_settings import check_run_shape

        check_run_shape(meta[RUN_KEY], where)
    meta["topic"] = str(meta["topic"])
    return Debate(meta, body)


def check_rounds(meta: dict[str, Any], where: str) -> None:
    """The status is a state of the machine, and its round, current_round and rounds_planned
    fit together: 1 <= rounds_planned <= MAX_ROUNDS, 0 <= current_round <= rounds_planned, and
    a round status names a round from 1 to rounds_planned."""
    try:
        status = Status.parse(str(meta["status"]))
    except FormatError as exc:
        raise FormatError(f"{where}: 'status' is invalid: {exc}") from None
    planned = meta["rounds_planned"]
    if not 1 <= planned <= MAX_ROUNDS:
        raise FormatError(
            f"{where}: 'rounds_planned' is {planned}; a debate plans 1 to {MAX_ROUNDS} rounds. "
            "Fix it in debate.md."
        )
    current = meta.get("current_round") or 0
    if not 0 <= current <= planned:
        raise FormatError(
            f"{where}: 'current_round' is {current}; it must be from 0 to rounds_planned "
            f"({planned}). Fix it in debate.md."
        )
    if status.phase in ("running", "round_complete") and not 1 <= status.round <= planned:
        raise FormatError(
            f"{where}: 'status' is {status}, but rounds run from 1 to rounds_planned "
            f"({planned}). Fix it in debate.md."
        )


def _scalar(value: Any) -> bool:
    # A key or label may be written unquoted (`key: 1`); it is read as text.
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def render_debate(debate: Debate) -> str:
    """debate.md text; key order as read, so rewriting causes no churn."""
    return frontmatter_io.render(debate.meta, debate.body)


def append_fact(body: str, bullet: str) -> str:
    """Add a `- ...` bullet at the end of Constraints & Known Facts (or create the section)."""
    lines = body.split("\n")
    found = next(
        (s for s in sections(body, 2) if s.title.casefold() == "constraints & known facts"), None
    )
    if found is None:
        question = find_section(body, 2, "Question")
        at = question.end if question else len(lines)
        block = ["## Constraints & Known Facts", "", bullet, ""]
        return "\n".join([*lines[:at], *block, *lines[at:]])
    last = found.end - 1
    while last > found.start and not lines[last].strip():
        last -= 1
    insert = [bullet] if lines[last].startswith("- ") else ["", bullet]
    tail = lines[last + 1 :]
    if (tail and tail[0].strip()) or not tail:
        insert.append("")
    return "\n".join([*lines[: last + 1], *insert, *tail])


def require_status(debate: Debate, *allowed: str, action: str, hint: str) -> None:
    """Raise StateError unless the status is one of `allowed` (status strings)."""
    status = str(debate.status)
    if status not in allowed:
        raise StateError(f"Cannot {action}: {debate.id} is {status}. {hint}")
