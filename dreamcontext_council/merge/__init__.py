"""Three-way merges of a debate's files, so branches that each moved a debate on merge cleanly.

Every driver is a pure function of the three versions of one file (the common ancestor,
ours, theirs) that returns the merged text, or None when the versions really disagree:
the caller then hands the file to git's own line merge, which marks the conflict. A side
that did not change the file always yields the other side unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MISSING: Any = object()

# The three versions in, the merged text out; None: a real conflict.
Driver = Callable[[str, str, str], "str | None"]


class Conflict(Exception):
    """The two sides changed the same thing in different ways."""


def unchanged_side(base: str, ours: str, theirs: str) -> str | None:
    """The merge when one side left the file as it was (or both made the same change)."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return None


def merge_value(base: V, ours: V, theirs: V, resolve: Callable[[V, V], V] | None = None) -> V:
    """One value, three ways: a change on one side wins; two different changes are resolved
    by `resolve`, or raise Conflict without one."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    if resolve is None:
        raise Conflict
    return resolve(ours, theirs)


def merge_keyed(
    base: dict[K, V],
    ours: dict[K, V],
    theirs: dict[K, V],
    resolve: Callable[[K, V, V, V], V] | None = None,
) -> dict[K, V]:
    """A union by key, three ways: keys added on either side are kept, a key removed on one
    side and untouched on the other goes, and a value changed on both sides goes to
    `resolve(key, base, ours, theirs)` (MISSING stands for an absent side) or raises Conflict.

    Keys keep the ancestor's order, then come the keys each side added, each side's in its
    own order, the side whose new keys sort first (by repr) first: merging A into B gives
    the same order as merging B into A.
    """
    merged: dict[K, V] = {}
    for key in _ordered_keys(base, ours, theirs):
        old = base.get(key, MISSING)
        value = merge_value(
            old,
            ours.get(key, MISSING),
            theirs.get(key, MISSING),
            None if resolve is None else _bound(resolve, key, old),
        )
        if value is not MISSING:
            merged[key] = value
    return merged


def _bound(resolve: Callable[[K, V, V, V], V], key: K, old: V) -> Callable[[V, V], V]:
    return lambda ours, theirs: resolve(key, old, ours, theirs)


def merge_list(base: list[V], ours: list[V], theirs: list[V]) -> list[V]:
    """A union of list items as a set, three ways: the ancestor's items in its order, then
    each side's new items in its order (in the order `merge_keyed` gives keys)."""
    keyed = merge_keyed(
        {_key(v): v for v in base}, {_key(v): v for v in ours}, {_key(v): v for v in theirs}
    )
    return list(keyed.values())


def _key(value: Any) -> Hashable:
    return repr(value)


def _ordered_keys(base: Iterable[K], ours: Iterable[K], theirs: Iterable[K]) -> list[K]:
    keys = list(dict.fromkeys(base))
    seen = set(keys)
    mine = [k for k in dict.fromkeys(ours) if k not in seen]
    other = [k for k in dict.fromkeys(theirs) if k not in seen]
    first, second = sorted((mine, other), key=lambda side: [repr(k) for k in side])
    keys += first
    seen.update(first)
    keys.extend(k for k in second if k not in seen)
    return keys
