"""report.md: a persona's round entries, both sides' new entries kept, newest round first."""

from __future__ import annotations

from dreamcontext_council.errors import FormatError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.merge import Conflict, merge_keyed, unchanged_side
from dreamcontext_council.rules.report import RoundEntry, parse_report


def merge_report(base: str, ours: str, theirs: str) -> str | None:
    """The union of the entries by round; a round both sides wrote differently is a conflict.

    The frontmatter keeps its fields (each merged three ways) and counts the rounds again.
    None on a conflict, or when a side is not a report.
    """
    same = unchanged_side(base, ours, theirs)
    if same is not None:
        return same
    try:
        old, mine, other = (_read(text) for text in (base, ours, theirs))
        entries = merge_keyed(old[1], mine[1], other[1])
        meta = merge_keyed(old[0], mine[0], other[0])
    except (Conflict, FormatError):
        return None
    ordered = sorted(entries.values(), key=lambda e: -e.round)
    meta = {**meta, "rounds_completed": len(ordered)}
    return frontmatter_io.render(meta, "\n".join(e.render() for e in ordered))


def _read(text: str) -> tuple[dict[str, object], dict[int, RoundEntry]]:
    meta, _ = frontmatter_io.parse(text, "report.md")
    meta.pop("rounds_completed", None)  # counted again from the merged entries
    entries = parse_report(text) if text.strip() else []
    return meta, {e.round: e for e in entries}
