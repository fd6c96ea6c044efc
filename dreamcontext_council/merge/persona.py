"""context-and-persona.md: the frontmatter field by field, and the directives both sides queued."""

from __future__ import annotations

from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.merge import Conflict, merge_keyed, unchanged_side
from dreamcontext_council.merge.debate import BodyMerge
from dreamcontext_council.merge.logs import When, merge_appended
from dreamcontext_council.rules.persona import PersonaContext, directive_rounds, parse_context

WHERE = "context-and-persona.md"


def merge_context(
    base: str, ours: str, theirs: str, merge_body: BodyMerge | None = None
) -> str | None:
    """A persona's context file, three ways.

    Each frontmatter field merges on its own (a change on one side wins; changed both ways
    it is a conflict). The body: when each side only queued directives (`question`, a
    steelman swap) since the ancestor, the ancestor's body with both sides' directives,
    by the round that must answer them; otherwise `merge_body` merges it, if given. None
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
    """The body when each side only queued directives since the ancestor: the ancestor's
    body with both sides' new directives, by round (one both queued for a round, once).
    None when a side changed anything else (git then merges the lines)."""
    added = [_queued(base, side) for side in (ours, theirs)]
    mine, other = added
    if mine is None or other is None:
        return None
    merged = merge_appended([], mine, [d for d in other if d not in mine], _round_order)
    return None if merged is None else _replayed(base, merged)


def _queued(base: str, side: str) -> list[str] | None:
    """The directives `side` queued since `base`, in the order that rewrites `base` into
    `side` (as `_item` texts); None when `side` is not `base` with directives added."""
    old, new = _context(base), _context(side)
    items = []
    for number in directive_rounds(side):
        before, after = old.directives(number), new.directives(number)
        if after[: len(before)] != before:
            return None
        items += [_item(number, directive) for directive in after[len(before) :]]
    return items if _replayed(base, items) == side.strip("\n") else None


def _replayed(body: str, items: list[str]) -> str:
    context = _context(body)
    for item in items:
        number, directive = item.split(" ", 1)
        context.add_directive(int(number), directive)
    return context.body.strip("\n")


def _context(body: str) -> PersonaContext:
    return PersonaContext(name="", model="", aspects=[], round_entries=0, body=body)


def _item(number: int, directive: str) -> str:
    return f"{number:06d} {directive}"


def _round_order(item: str) -> tuple[When, str]:
    return (item.split(" ", 1)[0], ""), ""
