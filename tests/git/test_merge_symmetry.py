"""The drivers as pure functions, merged both ways: reviews.json keeps every score and
settles one recorded two ways alike; keys new on both sides come out in one order."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dreamcontext_council.merge import merge_keyed, merge_list
from dreamcontext_council.merge.reviews import merge_reviews, review_disagreements

CRITICS = ("risk-auditor", "growth-cfo", "user-advocate", "ops-lead")
review = st.fixed_dictionaries(
    {
        "target": st.sampled_from(CRITICS),
        "score": st.one_of(st.none(), st.integers(1, 10).map(float)),
    }
)
reviews = st.dictionaries(st.tuples(st.integers(2, 4), st.sampled_from(CRITICS)), review)


def _text(by_key: dict[tuple[int, str], Any]) -> str:
    rounds: dict[str, dict[str, Any]] = {}
    for (number, critic), value in by_key.items():
        rounds.setdefault(str(number), {})[critic] = value
    return json.dumps({"rounds": rounds}, indent=2) + "\n"


def _flat(text: str) -> dict[tuple[int, str], Any]:
    data = json.loads(text)["rounds"]
    return {(int(n), c): r for n, by in data.items() for c, r in by.items()}


@given(reviews, reviews, reviews)
def test_reviews_merge_to_every_score_the_same_both_ways(
    base: dict[tuple[int, str], Any],
    ours_added: dict[tuple[int, str], Any],
    theirs_added: dict[tuple[int, str], Any],
) -> None:
    ours, theirs = {**base, **ours_added}, {**base, **theirs_added}
    texts = [_text(x) for x in (base, ours, theirs)]

    merged = merge_reviews(*texts)
    swapped = merge_reviews(texts[0], texts[2], texts[1])

    assert merged is not None and merged == swapped
    flat = _flat(merged)
    assert set(flat) == set(ours) | set(theirs)
    said = review_disagreements(*texts)
    clashes = [
        k
        for k in ours
        if k in theirs and ours[k] != theirs[k] and base.get(k) not in (ours[k], theirs[k])
    ]
    assert len(said) == len(clashes)
    for key in clashes:
        assert flat[key] in (ours[key], theirs[key])


def test_reviews_that_are_not_reviews_are_left_to_git() -> None:
    base = '{"rounds": {}}\n'
    assert (
        merge_reviews(base, '{"rounds": {"2": {"a": {"target": "b", "score": 3}}}}', "[1]") is None
    )
    assert merge_reviews(base, '{"rounds": {"x": {}}}', '{"rounds": {"2": {}}}') is None


keys = st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=5)


@given(keys, keys, keys)
def test_keys_and_items_new_on_both_sides_come_out_in_one_order(
    base: list[str], ours_new: list[str], theirs_new: list[str]
) -> None:
    ours = base + [k for k in ours_new if k not in base]
    theirs = base + [k for k in theirs_new if k not in base]

    def as_map(names: list[str]) -> dict[str, int]:
        return {k: 1 for k in names}

    merged = merge_keyed(as_map(base), as_map(ours), as_map(theirs))

    assert list(merged) == list(merge_keyed(as_map(base), as_map(theirs), as_map(ours)))
    assert merge_list(base, ours, theirs) == merge_list(base, theirs, ours)
    assert list(merged)[: len(base)] == base
    if not (set(ours) & set(theirs)) - set(base):  # no key new on both sides
        for side in (ours, theirs):  # each side's new keys keep their order
            new = [k for k in side if k not in base]
            assert [k for k in merged if k in new] == new
