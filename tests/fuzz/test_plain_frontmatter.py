"""The plain-subset frontmatter reader answers exactly as PyYAML does, or not at all.

`frontmatter_io.plain_block` lets commands read the usual frontmatter without importing
PyYAML. Wherever it returns a dict, PyYAML's safe loader must return the same dict (dates as
text, as the format keeps them); wherever PyYAML refuses a block, it must return None.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.frontmatter_io import _plain, dump_meta, plain_block

from .conftest import PROFILE
from .strategies import KEYS, YAML_ODDITIES, yaml_block


def pyyaml(block: str) -> Any:
    try:
        data = yaml.load(block, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
        return "refused"
    if not isinstance(data, dict):
        return {}  # frontmatter_io.parse reads a block that is not a map as no frontmatter
    return {key: _plain(value) for key, value in data.items()}


text_values = st.one_of(
    st.text(max_size=30),
    st.sampled_from(YAML_ODDITIES),
    st.sampled_from(["", " ", "a: b", "a #b", "it's", "'q'", "x:", "é", "2026-11-30", "007"]),
)
scalars = st.one_of(
    text_values,
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
)
metas = st.dictionaries(
    st.one_of(st.sampled_from(KEYS), st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)),
    st.one_of(
        scalars,
        st.lists(text_values, max_size=4),
        st.lists(st.fixed_dictionaries({"key": text_values, "label": text_values}), max_size=3),
        st.dictionaries(st.sampled_from(KEYS), scalars, max_size=5),
    ),
    max_size=8,
)


@settings(settings.get_profile(PROFILE))
@given(metas)
def test_what_we_write_reads_back_the_same_with_or_without_pyyaml(meta: dict[str, Any]) -> None:
    block = dump_meta(meta)
    fast = plain_block(block)
    if fast is not None:
        assert fast == pyyaml(block), block


@settings(settings.get_profile(PROFILE))
@given(metas, metas)
def test_entries_written_once_and_reused_give_pyyamls_whole_document(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    # The second document shares entries with the first (same key, value sometimes equal).
    second = {**second, **{k: v for i, (k, v) in enumerate(first.items()) if i % 2}}
    for meta in (first, second, first):
        assert dump_meta(meta) == frontmatter_io._dump(meta)


def test_a_last_value_ending_in_a_kept_line_break_closes_the_document_as_pyyaml_does() -> None:
    for meta in (
        {"id": "\n"},
        {"a": "x\n\n", "b": 1},
        {"a": 1, "b": "x\n\n"},
        {"_": "...\n", "id": None},  # a value's last line that reads like the marker
        {"a": "...\n"},
    ):
        block = dump_meta(meta)
        assert block == frontmatter_io._dump(meta), meta
        assert yaml.safe_load(block) == meta
    assert dump_meta({"a": "x\n\n", "b": 1}).count("...") == 0  # not inside the document


def test_entries_that_only_look_alike_are_not_confused() -> None:
    for value in (1, True, "1", 1.0, "true", None, "null", [], [1], ["1"], {"a": 1}):
        meta = {"key": value, "other": copy.deepcopy(value)}
        assert dump_meta(meta) == frontmatter_io._dump(meta), value


def test_one_object_under_two_keys_is_written_out_twice_not_as_an_alias() -> None:
    options = [{"key": "A", "label": "Migrate now"}]
    block = dump_meta({"options": options, "registered": options})
    assert "&" not in block and "*" not in block
    assert yaml.safe_load(block) == {"options": options, "registered": options}


@settings(settings.get_profile(PROFILE))
@given(st.one_of(yaml_block(), st.text(max_size=200)))
def test_any_block_reads_as_pyyaml_reads_it_or_goes_to_pyyaml(block: str) -> None:
    fast = plain_block(block)
    if fast is not None:
        assert fast == pyyaml(block), block


def test_the_usual_files_are_read_without_pyyaml() -> None:
    debate = {
        "id": "council_AbC12345",
        "topic": "Should we migrate the session store from Redis to Postgres?",
        "status": "round_2_running",
        "rounds_planned": 3,
        "current_round": 2,
        "interrupt_between_rounds": False,
        "personas": ["risk-auditor", "growth-cfo"],
        "promoted_to_knowledge": None,
        "created_at": "2026-11-30",
        "updated_at": "2026-11-30",
        "options": [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay"}],
        "seed": 12345,
        "run": {"model": "openai:gpt-4o", "base_url": "http://127.0.0.1:8080/v1", "timeout": 120.0},
    }
    context = {"name": "risk-auditor", "model": "", "aspects": ["risk", "cost"], "round_entries": 1}
    report = {"persona": "risk-auditor", "rounds_completed": 2}
    for meta in (debate, context, report):
        assert plain_block(dump_meta(meta)) == meta


folded_lines = st.lists(
    st.one_of(
        st.text(max_size=20),
        st.sampled_from(["", " x", "\tx", "x ", "# c", "- i", "k: v", "'q'", "007", "x\x85y"]),
    ),
    min_size=0,
    max_size=4,
)


@settings(settings.get_profile(PROFILE))
@given(folded_lines, st.sampled_from(["", " ", "   "]), st.sampled_from(["", "\nnext: 1"]))
def test_a_folded_string_reads_as_pyyaml_reads_it_or_goes_to_pyyaml(
    lines: list[str], extra: str, after: str
) -> None:
    block = (
        "promoted_to_knowledge: >-\n"
        + "".join(f"  {extra if n % 2 else ''}{line}\n" for n, line in enumerate(lines))
        + after.lstrip("\n")
    )
    fast = plain_block(block)
    if fast is not None:
        assert fast == pyyaml(block), block


def test_the_node_tools_folded_path_is_read_without_pyyaml() -> None:
    block = (
        "id: council_lwVpZDlF\n"
        "promoted_to_knowledge: >-\n"
        "  knowledge/decision-should-we-migrate-the-session-store-from-redis-to-postgres.md\n"
        "created_at: '2026-11-30'\n"
    )
    path = "knowledge/decision-should-we-migrate-the-session-store-from-redis-to-postgres.md"
    assert (
        plain_block(block)
        == pyyaml(block)
        == {
            "id": "council_lwVpZDlF",
            "promoted_to_knowledge": path,
            "created_at": "2026-11-30",
        }
    )
