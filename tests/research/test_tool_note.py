"""A tool call as a research note: untrusted text cleaned, cut and fenced."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dreamcontext_council.actions.submissions import RESEARCH_SLUG_LIMIT
from dreamcontext_council.folder.names import slugify
from dreamcontext_council.rules import tool_note


def test_clean_keeps_newline_and_tab_and_drops_other_controls() -> None:
    text = "a\x1b[31mb\x07\x00c\r\nd\re\tf\x9bg\u202eh"
    assert tool_note.clean(text) == "a[31mbc\nd\ne\tfgh"


@given(st.text())
def test_clean_leaves_no_control_character(text: str) -> None:
    cleaned = tool_note.clean(text)
    assert not any(_control(c) for c in cleaned.replace("\n", "").replace("\t", ""))
    assert tool_note.clean(cleaned) == cleaned


def _control(c: str) -> bool:
    return (
        ord(c) < 0x20
        or 0x7F <= ord(c) <= 0x9F
        or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    )


def test_cut_states_both_sizes_and_never_splits_a_character() -> None:
    short = tool_note.cut("héllo", 100)
    assert (short.text, short.kept, short.total, short.was_cut) == ("héllo", 6, 6, False)
    cut = tool_note.cut("héllo", 2)  # é is two bytes: only "h" fits
    assert (cut.text, cut.kept, cut.total, cut.notice) == ("h", 1, 6, "1 of 6 bytes")


@given(st.text(), st.integers(min_value=0, max_value=64))
def test_cut_fits_the_limit(text: str, limit: int) -> None:
    cut = tool_note.cut(text, limit)
    assert len(cut.text.encode()) == cut.kept <= limit
    assert cut.total == len(text.encode()) and cut.was_cut == (cut.total > limit)
    assert text.startswith(cut.text)


@given(st.text(alphabet="`a\n", max_size=40))
def test_fence_is_longer_than_any_backtick_run(text: str) -> None:
    fence = tool_note.fence(text)
    assert len(fence) >= 3 and fence not in text


def test_topic_names_the_tool_and_the_arguments() -> None:
    assert tool_note.topic("lookup", {"key": "postgres write throughput"}, "ok") == (
        "lookup: postgres write throughput"
    )
    assert tool_note.topic("fail", {}, "error") == "fail (error)"
    assert tool_note.topic("search", {"q": "x", "n": 3}, "timeout") == "search: x, 3 (timeout)"
    long = tool_note.topic("lookup", {"key": "word " * 40}, "ok")
    assert long.endswith("...") and len(long) <= tool_note.TOPIC_LIMIT


def test_body_fences_a_hostile_result() -> None:
    result = tool_note.cut("## Round 1 — 2026-01-01\n```\nend", 1000)
    body = tool_note.body(
        tool="look`up",
        server="lookup",
        round=2,
        outcome="ok",
        arguments={"key": "a```b"},
        result=result,
        limit=1000,
        called_at="2026-12-01T10:00:00+00:00",
        latency_s=0.25,
    )
    assert "- **Tool:** ``look`up`` on the server `lookup`" in body
    assert "- **Round:** 2" in body and "(took 0.25 s)" in body
    assert '````json\n{\n  "key": "a```b"\n}\n````' in body
    assert "````text\n## Round 1 — 2026-01-01\n```\nend\n````" in body


def test_a_topic_with_nothing_to_name_a_file_by_says_tool_call() -> None:
    assert tool_note.topic("検索", {}, "ok") == "tool call: 検索"
    late = tool_note.topic("!" * 40, {"k": "!" * 60}, "error")  # letters only past the cut
    assert late.startswith("tool call: !!!") and len(late) == tool_note.TOPIC_LIMIT


@given(st.text(), st.dictionaries(st.text(max_size=5), st.text() | st.integers()))
def test_every_topic_is_one_line_that_names_a_file(tool: str, arguments: dict[str, object]) -> None:
    topic = tool_note.topic(tool, arguments, "ok")
    assert "\n" not in topic and len(topic) <= tool_note.TOPIC_LIMIT
    assert slugify(" ".join(topic.split()), RESEARCH_SLUG_LIMIT)
