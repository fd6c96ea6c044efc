"""What a driver could not merge, in one line: which record, and what each side did to it.

Called only after a driver gave up (returned None), to tell the person resolving the merge
what actually conflicts: the same verdict recorded two ways, an entry one side removed (a
revert, say) and the other changed, or a log one side rewrote instead of appending to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.merge.reviews import review_disagreements
from dreamcontext_council.rules.report import parse_report
from dreamcontext_council.rules.reviews import parse_reviews
from dreamcontext_council.rules.verdicts import parse_verdicts

_SIDES = ("ours", "theirs")


def why_conflicted(kind: str, base: str, ours: str, theirs: str) -> str:
    """The one sentence (no trailing period) saying what the two sides did that conflicts."""
    explain = _EXPLAIN.get(kind)
    try:
        reason = explain(base, ours, theirs) if explain is not None else None
    except FormatError:
        reason = None
    if reason is not None:
        return reason
    for side, text in zip(_SIDES, (ours, theirs), strict=True):
        if _unreadable(kind, text):
            return f"{side} is not a {kind} file this tool can read (conflict markers left in it?)"
    return "both sides changed the same record"


def settled_choices(kind: str, base: str, ours: str, theirs: str) -> list[str]:
    """After a merge the driver completed: one sentence (no trailing period) per record both
    sides wrote differently that it settled by its rule rather than by keeping both."""
    if kind == "reviews":
        return review_disagreements(base, ours, theirs)
    return []


def _clash(
    what: Callable[[Any], str],
    base: Mapping[Any, Any],
    ours: Mapping[Any, Any],
    theirs: Mapping[Any, Any],
) -> str | None:
    missing = object()
    for key in [
        *ours,
        *(k for k in theirs if k not in ours),
        *(k for k in base if k not in ours and k not in theirs),
    ]:
        old, mine, other = (side.get(key, missing) for side in (base, ours, theirs))
        if mine in (other, old) or other == old:
            continue
        name = what(key)
        if mine is missing or other is missing:
            gone, kept = ("ours", "theirs") if mine is missing else ("theirs", "ours")
            return f"{gone} removed {name} (a revert?) and {kept} changed it"
        if old is missing:
            return f"both sides added {name}, differently"
        return f"both sides changed {name}, differently"
    return None


def _verdicts(base: str, ours: str, theirs: str) -> str | None:
    sides = [parse_verdicts(text) for text in (base, ours, theirs)]
    timed: list[dict[Any, Any]] = [
        {(n, slug): v for n, votes in side.rounds.items() for slug, v in votes.items()}
        for side in sides
    ]
    untimed = [{key: v._replace(at="") for key, v in side.items()} for side in timed]
    found = _clash(lambda key: f"{key[1]}'s round {key[0]} verdict", *untimed)
    if found is not None:
        return found
    options: list[dict[Any, Any]] = [{o["key"]: o for o in side.options} for side in sides]
    found = _clash(lambda key: f"option {key}", *options)
    if found is not None:
        return found
    if _clash(str, *timed) is not None:
        return "both sides recorded the same verdict at different times"
    return None


def _report(base: str, ours: str, theirs: str) -> str | None:
    keyed = [
        {e.round: e for e in parse_report(text)} if text.strip() else {}
        for text in (base, ours, theirs)
    ]
    return _clash(lambda number: f"the round {number} entry", *keyed)


def _debate(base: str, ours: str, theirs: str) -> str | None:
    parsed = [frontmatter_io.parse(text, "debate.md") for text in (base, ours, theirs)]
    found = _clash(lambda key: f"the field {key}", *(meta for meta, _ in parsed))
    if found is not None:
        return found
    old, mine, other = (body for _, body in parsed)
    if mine != other and mine != old and other != old:
        return (
            "both sides changed the body of debate.md (its facts or directives) in the same place"
        )
    return None


def _appended(name: str) -> Callable[[str, str, str], str | None]:
    def explain(base: str, ours: str, theirs: str) -> str | None:
        for side, text in zip(_SIDES, (ours, theirs), strict=True):
            if not text.startswith(base.rstrip("\n")):
                return (
                    f"{side} removed or changed lines {name} had in common (a revert or an "
                    "edit), so the two sides cannot be joined by their appended entries"
                )
        return None

    return explain


def _unreadable(kind: str, text: str) -> bool:
    try:
        if kind == "verdicts":
            parse_verdicts(text)
        elif kind == "report" and text.strip():
            parse_report(text)
        elif kind == "debate":
            frontmatter_io.parse(text, "debate.md")
        elif kind == "reviews":
            parse_reviews(text)
    except FormatError:
        return True
    return False


_EXPLAIN: dict[str, Callable[[str, str, str], str | None]] = {
    "verdicts": _verdicts,
    "report": _report,
    "debate": _debate,
    "round-log": _appended("round-log.md"),
    "usage": _appended("usage.jsonl"),
}
