"""verdicts.json: options and one verdict per (round, persona)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dreamcontext_council.errors import FormatError, UsageError
from dreamcontext_council.folder.names import slugify
from dreamcontext_council.rules.debate import parse_round

STANCE_KEY_LIMIT = 24


class Verdict(NamedTuple):
    """One persona's stance in one round."""

    stance: str
    conviction: int
    headline: str
    concession: str | None = None
    at: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "stance": self.stance,
            "conviction": self.conviction,
            "headline": self.headline,
        }
        if self.concession:
            data["concession"] = self.concession
        data["at"] = self.at
        return data


@dataclass
class Verdicts:
    """The whole verdict record of a debate."""

    options: list[dict[str, str]] = field(default_factory=list)
    rounds: dict[int, dict[str, Verdict]] = field(default_factory=dict)

    def round(self, number: int) -> dict[str, Verdict]:
        return self.rounds.get(number, {})

    def label(self, key: str) -> str:
        return next((o["label"] for o in self.options if o["key"] == key), key)

    def last_round(self) -> int:
        return max((r for r, v in self.rounds.items() if v), default=0)


def parse_verdicts(text: str, where: str = "verdicts.json") -> Verdicts:
    """Parse verdicts.json strictly; an empty file reads as no options and no rounds."""
    if not text.strip():
        return Verdicts()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"{where} is not valid JSON ({exc.msg} at line {exc.lineno}); fix or restore it "
            "from git before recording verdicts."
        ) from exc
    if not isinstance(data, dict):
        raise FormatError(f"{where} must hold an object with 'options' and 'rounds'.")
    options = data.get("options") or []
    rounds = data.get("rounds") or {}
    if not isinstance(options, list) or not isinstance(rounds, dict):
        raise FormatError(f"{where}: 'options' must be a list and 'rounds' an object.")
    parsed = Verdicts(
        [{"key": str(o["key"]), "label": str(o["label"])} for o in _checked(options, where)]
    )
    for number, by_persona in rounds.items():
        if not isinstance(by_persona, dict):
            raise FormatError(f"{where}: round '{number}' is not a round number with verdicts.")
        parsed.rounds[parse_round(number, where)] = {
            slug: _verdict(entry, f"{where} round {number} {slug}")
            for slug, entry in by_persona.items()
        }
    return parsed


def _checked(options: list[Any], where: str) -> list[dict[str, Any]]:
    for option in options:
        if not isinstance(option, dict) or "key" not in option or "label" not in option:
            raise FormatError(f"{where}: every option needs a 'key' and a 'label'.")
    return options


def _verdict(entry: Any, where: str) -> Verdict:
    if not isinstance(entry, dict) or "stance" not in entry:
        raise FormatError(f"{where}: a verdict needs at least a 'stance'.")
    conviction = entry.get("conviction", 0)
    if (
        not isinstance(conviction, int | float)
        or isinstance(conviction, bool)
        or not math.isfinite(conviction)
        or not 0 <= conviction <= 100
    ):
        raise FormatError(
            f"{where}: 'conviction' is {conviction!r}; it must be a number from 0 to 100. "
            "Fix or restore it from git."
        )
    concession = entry.get("concession")
    return Verdict(
        stance=str(entry["stance"]),
        conviction=int(conviction),
        headline=str(entry.get("headline", "")),
        concession=str(concession) if concession else None,
        at=str(entry.get("at", "")),
    )


def render_verdicts(verdicts: Verdicts) -> str:
    """verdicts.json text: options, then rounds in numeric order."""
    data = {
        "options": verdicts.options,
        "rounds": {
            str(number): {slug: v.to_json() for slug, v in verdicts.rounds[number].items()}
            for number in sorted(verdicts.rounds)
        },
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def parse_conviction(value: str | int) -> int:
    """A conviction 0-100; anything else is a UsageError that says so."""
    try:
        number = int(str(value).strip())
    except ValueError:
        raise UsageError(
            f"Conviction must be a whole number from 0 to 100, not '{value}'."
        ) from None
    if not 0 <= number <= 100:
        raise UsageError(f"Conviction must be from 0 to 100, not {number}.")
    return number


def resolve_stance(
    stance: str, registered: list[dict[str, str]], known: list[dict[str, str]]
) -> tuple[str, dict[str, str] | None]:
    """The option key a stance names, and the option to add when it is new.

    With registered options the stance must name one (key or label, any case). Without,
    a new stance becomes an option: key = slug cut to 24 characters, label = the text.
    """
    text = stance.strip()
    if not text:
        raise UsageError("The stance is empty; pass --stance with an option key.")
    if registered:
        for option in registered:
            if text.casefold() in (option["key"].casefold(), option["label"].casefold()):
                return option["key"], None
        keys = ", ".join(f"{o['key']} ({o['label']})" for o in registered)
        raise UsageError(f"Stance '{text}' is not an option of this debate; use one of: {keys}.")
    for option in known:
        if text.casefold() in (option["key"].casefold(), option["label"].casefold()):
            return option["key"], None
    key = slugify(text, STANCE_KEY_LIMIT) or text[:STANCE_KEY_LIMIT]
    return key, {"key": key, "label": text}


def recorded_order(votes: dict[str, Verdict]) -> list[str]:
    """The personas of one round's verdicts in the order they were recorded (`at`, then the
    slug): what a merge writes, and what a prompt lists, whatever order a file was left in."""
    return sorted(votes, key=lambda slug: (votes[slug].at or "", slug))
