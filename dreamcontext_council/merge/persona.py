"""context-and-persona.md: the frontmatter field by field, and what both sides added to the body
(queued directives, a round's cross-context panel, critiques received)."""

from __future__ import annotations

import re

from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.merge import Conflict, merge_keyed, unchanged_side
from dreamcontext_council.merge.debate import BodyMerge
from dreamcontext_council.merge.logs import When, merge_appended
from dreamcontext_council.rules.debate import bounded_round
from dreamcontext_council.rules.markdown import normalize_title, sections
from dreamcontext_council.rules.persona import PersonaContext, parse_context

_DIRECTIVES = re.compile(r"round (\d+) directives")

WHERE = "context-and-persona.md"


def merge_context(
    base: str, ours: str, theirs: str, merge_body: BodyMerge | None = None
) -> str | None:
    """A persona's context file, three ways.

    Each frontmatter field merges on its own (a change on one side wins; changed both ways
    it is a conflict). The body: when each side only added what the commands add (see
    `merge_directives`), the ancestor's body with both sides' additions, by the round they
    are for; otherwise `merge_body` merges it, if given. None
    on a conflict, or when a side or the result is not a context file.
    """
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    try:
        (old, old_body), (mine, my_body), (other, other_body) = (
            frontmatter_io.parse(text, WHERE) for text in (base, ours, theirs)
        )
        meta = merge_keyed(old, mine, other)
    except (Conflict, FormatError):
        return None
    body = unchanged_side(old_body, my_body, other_body)
    if body is None:
        body = merge_directives(old_body, my_body, other_body)
    if body is None and merge_body is not None:
        body = merge_body(old_body, my_body, other_body)
    if body is None:
        return None
    text = frontmatter_io.render(meta, body)
    try:
        parse_context(text)
    except FormatError:
        return None
    return text


def merge_directives(base: str, ours: str, theirs: str) -> str | None:
    """The body when each side only added to it what the commands add since the ancestor
    (directives a `question` or a round start queued, a round's cross-context panel, the
    critiques a persona received): the ancestor's body with both sides' additions, by the
    round they are for, a round's directives before its sections (one both sides added, once).
    None when a side changed anything else, or both added a different section under one
    heading (git then merges the lines)."""
    added = [_added(base, side) for side in (ours, theirs)]
    mine, other = added
    if mine is None or other is None:
        return None
    merged = merge_appended([], mine, [d for d in other if d not in mine], _round_order)
    if merged is None:
        return None
    headings = [item.split("\n", 1)[0] for item in merged if item[7] == _SECTION]
    if len(headings) != len(set(headings)):
        return None  # one round's panel (or critiques) written two ways
    return _replayed(base, merged)


# An addition is `<round, 6 digits> <kind> <text>`: a directive's text, or a section's
# heading, a newline and its body. Directives sort before sections of the same round.
_DIRECTIVE, _SECTION = "d", "s"
_APPENDED = (
    re.compile(r"round (\d+) cross context loaded"),
    re.compile(r"round (\d+) critiques received"),
)


def _added(base: str, side: str) -> list[str] | None:
    """What `side` added to `base`, in its order (as `_item` texts); None when `side` is not
    `base` with directives and appended sections added."""
    old = _context(base)
    known = {normalize_title(s.title) for s in sections(base, 2)}
    taken: dict[int, int] = {}
    items = []
    for section in sections(side, 2):
        title = normalize_title(section.title)
        found = _DIRECTIVES.fullmatch(title)
        number = bounded_round(found.group(1)) if found else None
        if number is not None:
            listed = [ln[2:].strip() for ln in section.body.split("\n") if ln.startswith("- ")]
            before = old.directives(number)[taken.get(number, 0) :]
            kept = listed[: len(before)]
            if kept != before[: len(kept)]:
                return None
            taken[number] = taken.get(number, 0) + len(kept)
            items += [_item(number, _DIRECTIVE, d) for d in listed[len(kept) :]]
            continue
        number = _appended_round(title)
        if number is not None and title not in known:
            items.append(_item(number, _SECTION, f"{section.title}\n{section.body}"))
    return items if _replayed(base, items) == side.strip("\n") else None


def _appended_round(title: str) -> int | None:
    for pattern in _APPENDED:
        found = pattern.fullmatch(title)
        if found:
            return bounded_round(found.group(1))
    return None


def _replayed(body: str, items: list[str]) -> str:
    context = _context(body)
    for item in items:
        number, kind, text = int(item[:6]), item[7], item[9:]
        if kind == _DIRECTIVE:
            context.add_directive(number, text)
        else:
            heading, _, section = text.partition("\n")
            context.append_section(heading, section)
    return context.body.strip("\n")


def _context(body: str) -> PersonaContext:
    return PersonaContext(name="", model="", aspects=[], round_entries=0, body=body)


def _item(number: int, kind: str, text: str) -> str:
    return f"{number:06d} {kind} {text}"


def _round_order(item: str) -> tuple[When, str]:
    return (item[:6], ""), ""
