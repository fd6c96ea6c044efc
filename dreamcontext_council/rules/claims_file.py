"""claims.json as the readers take it: checked field by field, one line when it is wrong.

The engine writes `{"claims": [...], "dropped": [...], "flags": [...]}` (docs/format.md); a
hand-written or older ledger may give a dropped claim a `reason`, a claim's `research` as the
notes' names, or a flag as a line of text. Anything else of the wrong type (a number where a
list of slugs belongs, a list where a round belongs) is a FormatError naming the field, so a
reader shows that line instead of the ledger and the rest of the debate as usual.
"""

from __future__ import annotations

import json
import math
from typing import Any

from dreamcontext_council.errors import FormatError
from dreamcontext_council.rules.debate import MAX_ROUNDS

_TEXT_FIELDS = ("id", "claim", "text", "proposer", "label", "reason", "why")
_NAME_LISTS = ("supporters", "challengers", "notes")
_FLAG_COUNTS = ("claims_challenged", "total")


def parse_claims_file(text: str, where: str = "claims.json") -> dict[str, Any]:
    """The ledger as a dict of `claims`, `dropped` and `flags` lists; FormatError otherwise."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _refused(where, f"is not valid JSON ({exc})".split("\n")[0]) from None
    if not isinstance(data, dict):
        raise _refused(where, f"holds {_kind(data)}, not an object of claims, dropped and flags")
    for key in ("claims", "dropped"):
        for i, item in enumerate(_list(data, key, where)):
            _check_claim(item, f"{key}[{i}]", where)
    for i, item in enumerate(_list(data, "flags", where)):
        _check_flag(item, f"flags[{i}]", where)
    return data


def _list(data: dict[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _refused(where, f"'{key}' is {_kind(value)}, not a list")
    return value


def _check_claim(item: Any, at: str, where: str) -> None:
    if isinstance(item, str):
        return  # a dropped claim written as its text
    if not isinstance(item, dict):
        raise _refused(where, f"{at} is {_kind(item)}, not a claim object")
    for name in _TEXT_FIELDS:
        if name in item and not _scalar(item[name]):
            raise _refused(where, f"{at}.{name} is {_kind(item[name])}, not text")
    number = item.get("round")
    if number is not None and not (_whole(number) and 1 <= number <= MAX_ROUNDS):
        shown = number if _whole(number) else _kind(number)
        raise _refused(where, f"{at}.round is {shown}, not a round from 1 to {MAX_ROUNDS}")
    for name in _NAME_LISTS:
        if name in item and not _names(item[name]):
            raise _refused(where, f"{at}.{name} is {_kind(item[name])}, not a list of names")
    research = item.get("research")
    if research is not None and not (isinstance(research, bool) or _names(research)):
        raise _refused(where, f"{at}.research is {_kind(research)}, not true, false or names")


def _check_flag(item: Any, at: str, where: str) -> None:
    if isinstance(item, str):
        return  # a flag written as its line
    if not isinstance(item, dict) or not isinstance(item.get("persona"), str):
        raise _refused(where, f"{at} is not a flag naming its persona")
    share = item.get("share", 0)
    if isinstance(share, bool) or not isinstance(share, int | float) or not math.isfinite(share):
        raise _refused(where, f"{at}.share is {_kind(share)}, not a number")
    for name in _FLAG_COUNTS:
        if name in item and not (_whole(item[name]) and 0 <= item[name] <= 10**9):
            raise _refused(where, f"{at}.{name} is {_kind(item[name])}, not a count")


def _scalar(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _names(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    )


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _refused(where: str, problem: str) -> FormatError:
    return FormatError(f"{where}: {problem}; fix or remove {where}.")
