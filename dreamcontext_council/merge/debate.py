"""debate.md: the frontmatter merged field by field, the body merged as text."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from functools import reduce
from typing import Any

from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.merge import MISSING, Conflict, merge_keyed, merge_list, unchanged_side
from dreamcontext_council.merge.logs import When, merge_appended
from dreamcontext_council.rules.debate import Status, append_fact, parse_debate
from dreamcontext_council.rules.markdown import find_section

# The body's three versions in, the merged body out (None: a conflict).
BodyMerge = Callable[[str, str, str], "str | None"]

_PHASES = ("running", "round_complete")
_FACTS = "Constraints & Known Facts"
# An injected fact names the round it was injected in: `- **[Interlude R<n>]** <fact>`.
_FACT_ROUND = re.compile(r"- \*\*\[Interlude R(\d{1,6})\]\*\*")


def status_rank(text: str) -> tuple[int, ...]:
    """Where a status lies on the state machine: a later state ranks higher."""
    try:
        status = Status.parse(text)
    except FormatError:
        return (-1,)
    if status.phase in ("running", "round_complete"):
        return (1, status.round, _PHASES.index(status.phase))
    return ({"created": 0, "synthesizing": 2, "complete": 3}[status.phase],)


def merge_debate(
    base: str, ours: str, theirs: str, merge_body: BodyMerge | None = None
) -> str | None:
    """debate.md, three ways.

    Each frontmatter field merges on its own: a change on one side wins; when both changed
    it, `status` takes the later state of the machine, the round counts the larger, a field
    ending in `_at` the later time, and lists (personas, options, flags) the union. Any
    other field changed both ways is a conflict, and so is a body both sides changed
    unless `merge_body` merges it. None on a conflict, or when the result would not be a
    valid debate.md.
    """
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    try:
        old, mine, other = (parse_debate(text) for text in (base, ours, theirs))
    except FormatError:
        return None
    body = unchanged_side(old.body, mine.body, other.body)
    if body is None and merge_body is not None:
        body = merge_body(old.body, mine.body, other.body)
    if body is None:
        return None
    try:
        meta = merge_keyed(old.meta, mine.meta, other.meta, _later_field)
        text = frontmatter_io.render(meta, body)
        parse_debate(text)  # the state machine still holds: status, rounds, current_round
    except (Conflict, FormatError):
        return None
    return text


def _later_field(key: str, base: Any, ours: Any, theirs: Any) -> Any:
    if ours is MISSING or theirs is MISSING:
        raise Conflict  # one side removed a field the other changed
    if key == "status":
        return max(ours, theirs, key=lambda s: status_rank(str(s)))
    if key in ("current_round", "rounds_planned") and _whole(ours) and _whole(theirs):
        return max(ours, theirs)
    if key.endswith("_at") and type(ours) is type(theirs) and isinstance(ours, str | dt.date):
        return max(ours, theirs)  # ISO text, or a date YAML read unquoted
    if isinstance(ours, list) and isinstance(theirs, list):
        return merge_list(base if isinstance(base, list) else [], ours, theirs)
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return merge_keyed(base if isinstance(base, dict) else {}, ours, theirs, _later_field)
    raise Conflict


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def merge_facts(base: str, ours: str, theirs: str) -> str | None:
    """The body of debate.md when each side only added facts (`inject`) since the ancestor:
    the ancestor's body with both sides' new fact bullets, by the round they were injected
    in. A fact added on both sides in the same round is kept once (`inject` writes a fact
    once). None when a side changed anything else (git then merges the lines).
    """
    old = _fact_bullets(base)
    added = []
    for side in (ours, theirs):
        bullets = _fact_bullets(side)
        new = bullets[len(old) :]
        if bullets[: len(old)] != old or reduce(append_fact, new, base) != side:
            return None
        added.append(new)
    mine, other = added
    merged = merge_appended([], mine, [b for b in other if b not in mine], _fact_order)
    return None if merged is None else reduce(append_fact, merged, base)


def _fact_bullets(body: str) -> list[str]:
    found = find_section(body, 2, _FACTS)
    lines = found.body.split("\n") if found else []
    return [line for line in lines if line.startswith("- ")]


def _fact_order(bullet: str) -> tuple[When, str]:
    found = _FACT_ROUND.match(bullet)
    return ((found.group(1).zfill(6), "") if found else ("", "")), ""
