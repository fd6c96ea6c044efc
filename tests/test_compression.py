"""Compression before synthesis: code survives, the marker is exact, the gate holds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamcontext_council.engine.prompting.compression import (
    compress_answer,
    compression_marker,
    extract_code_blocks,
    find_fenced_blocks,
    placeholder,
    restore_code_blocks,
)
from dreamcontext_council.engine.prompting.seating import (
    TIGHTER_LINES,
    Answer,
    Decision,
    compress_for_synthesis,
    seat_answers,
)

PROPERTY = settings(max_examples=200, deadline=None)
LONG_PROPERTY = settings(max_examples=100, deadline=None)  # each example is a long answer


def prose(count: int, start: int = 0, width: int = 50) -> list[str]:
    """Numbered filler lines that are not key lines."""
    return [f"line {n:03d} " + "x" * width for n in range(start, start + count)]


def doc(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def split_lines(text: str) -> list[str]:
    """Lines split on \\n only, each keeping its ending (as the compressor counts them)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def in_order(haystack: str, needles: list[str]) -> bool:
    """Every needle occurs in haystack, each after the previous one."""
    position = 0
    for needle in needles:
        found = haystack.find(needle, position)
        if found < 0:
            return False
        position = found + len(needle)
    return True


# --- fenced code -------------------------------------------------------------------


def test_backtick_and_tilde_fences_are_taken_out_verbatim() -> None:
    text = "intro\n```python\nx = 1\n```\nmiddle\n~~~\ny = 2\n~~~\nend\n"
    view, blocks = extract_code_blocks(text)
    assert blocks == ["```python\nx = 1\n```\n", "~~~\ny = 2\n~~~\n"]
    assert view == f"intro\n{placeholder(0)}\nmiddle\n{placeholder(1)}\nend\n"
    assert restore_code_blocks(view, blocks) == text


def test_backticks_inside_code_do_not_close_it() -> None:
    block = "```\nuse `x` and ``y``\n``` not a closing fence\n~~~\n```\n"
    view, blocks = extract_code_blocks("a\n" + block + "b\n")
    assert blocks == [block]
    assert view == f"a\n{placeholder(0)}\nb\n"


def test_fence_never_closed_runs_to_the_end() -> None:
    text = "before\n~~~~ sh\necho hi\n~~~\nstill code"
    view, blocks = extract_code_blocks(text)
    assert blocks == ["~~~~ sh\necho hi\n~~~\nstill code"]
    assert view == "before\n" + placeholder(0)
    (found,) = find_fenced_blocks(text)
    assert not found.closed
    assert found.info == "sh"
    assert found.body == "echo hi\n~~~\nstill code"


def test_shorter_fences_nest_inside_a_longer_one() -> None:
    block = "````markdown\n```python\nprint(1)\n```\n````\n"
    _, blocks = extract_code_blocks(block + "after\n")
    assert blocks == [block]


def test_closing_fence_may_be_longer_and_indented() -> None:
    _, blocks = extract_code_blocks("```\nx\n   `````  \nprose\n")
    assert blocks == ["```\nx\n   `````  \n"]


def test_what_is_not_a_fence() -> None:
    text = "    ```\nindented four\n    ```\n``` has `backtick` info\n``\n"
    view, blocks = extract_code_blocks(text)
    assert blocks == []
    assert view == text


def test_indented_up_to_three_spaces_is_a_fence() -> None:
    _, blocks = extract_code_blocks("   ```\ncode\n```\n")
    assert blocks == ["   ```\ncode\n```\n"]


def test_crlf_fences() -> None:
    text = "a\r\n```\r\ncode\r\n```\r\nb\r\n"
    view, blocks = extract_code_blocks(text)
    assert blocks == ["```\r\ncode\r\n```\r\n"]
    assert restore_code_blocks(view, blocks) == text


def test_prose_shaped_like_a_placeholder_cannot_be_confused() -> None:
    text = f"{placeholder(0)}\n```\ncode\n```\n"
    view, blocks = extract_code_blocks(text)
    assert blocks == [f"{placeholder(0)}\n", "```\ncode\n```\n"]
    assert restore_code_blocks(view, blocks) == text


def test_restore_refuses_a_placeholder_without_a_block() -> None:
    with pytest.raises(ValueError, match="code block 2"):
        restore_code_blocks(placeholder(2) + "\n", ["```\n```\n"])


def test_fenced_block_offsets() -> None:
    text = "x\n```claims\n[]\n```\ny\n"
    (block,) = find_fenced_blocks(text)
    assert text[block.start : block.end] == "```claims\n[]\n```\n"
    assert (block.info, block.body, block.closed) == ("claims", "[]\n", True)


# --- compress_answer -----------------------------------------------------------------


def test_short_answers_are_not_touched() -> None:
    text = doc(prose(25))
    assert compress_answer(text) == text


def test_first_15_and_last_10_lines_are_kept_around_one_marker() -> None:
    lines = prose(40)
    out = compress_answer(doc(lines)).splitlines()
    assert out[:15] == lines[:15]
    assert out[15] == "[... 15 lines compressed.]"
    assert out[16:] == lines[-10:]


def test_marker_names_up_to_three_key_lines() -> None:
    lines = prose(40)
    lines[16] = "## Risks"
    lines[18] = "- bullet point"
    lines[19] = "   ---"  # a thematic break, not a bullet
    lines[20] = "2) numbered **item**"
    lines[22] = "**Bold** conclusion"
    lines[24] = "* fourth key line is left out"
    out = compress_answer(doc(lines)).splitlines()
    assert out[15] == "[... 15 lines compressed. Key points: Risks; bullet point; numbered item]"


def test_key_lines_are_cut_to_60_characters() -> None:
    lines = prose(40)
    lines[16] = "# " + "h" * 60
    lines[17] = "- " + "b" * 61
    lines[18] = "1. " + "word " * 20
    out = compress_answer(doc(lines)).splitlines()
    keys = out[15].removeprefix("[... 15 lines compressed. Key points: ").removesuffix("]")
    first, second, third = keys.split("; ")
    assert first == "h" * 60
    assert second == "b" * 59 + "…"
    assert third.endswith("word…")
    assert all(len(key) <= 60 for key in (first, second, third))


def test_code_in_the_removed_middle_survives_after_the_marker() -> None:
    one = "```python\ndef f():\n    return 1\n```"
    two = "~~~\n" + "\n".join(prose(30, start=900)) + "\n~~~"
    lines = [*prose(20), one, *prose(10, start=20), two, *prose(20, start=30)]
    text = doc(lines)
    out = compress_answer(text)
    assert len(out) < len(text)
    out_lines = out.split("\n")
    assert out_lines[15] == "[... 25 lines compressed.]"
    assert out.split("\n", 16)[16].startswith(one + "\n" + two + "\n")
    assert out.endswith(doc(prose(10, start=40)))


def test_code_that_starts_in_the_head_is_kept_whole() -> None:
    block = "```\n" + "\n".join(prose(30, start=500)) + "\n```"
    text = doc([*prose(10), block, *prose(40, start=10)])
    out = compress_answer(text)
    assert block in out
    assert "[... 26 lines compressed.]" in out


def test_settings_are_options() -> None:
    lines = ["# Title", "a" * 80, "- point " + "p" * 80, "b" * 80, "c" * 80]
    out = compress_answer(doc(lines), head=1, tail=1, key_lines=1, key_width=10)
    assert out == "# Title\n[... 3 lines compressed. Key points: point ppp…]\n" + "c" * 80 + "\n"


def test_compression_that_would_not_save_anything_returns_the_input() -> None:
    text = doc(["a"] * 26)
    assert compress_answer(text) == text


def test_crlf_answer_keeps_its_line_endings() -> None:
    text = "\r\n".join(prose(40)) + "\r\n"
    out = compress_answer(text)
    assert "[... 15 lines compressed.]\r\n" in out
    assert compress_answer(out) == out


def test_compressing_a_compressed_view_changes_nothing() -> None:
    lines = prose(60)
    lines[30] = "### Heading"
    once = compress_answer(doc([*lines[:40], "```\ncode\n```", *lines[40:]]))
    assert compress_answer(once) == once


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        compress_answer("x", head=-1)
    with pytest.raises(ValueError):
        compress_answer("x", key_width=0)


def test_marker_shapes() -> None:
    assert compression_marker(7, []) == "[... 7 lines compressed.]"
    assert compression_marker(7, ["a", "b"]) == "[... 7 lines compressed. Key points: a; b]"


# --- seating and the gate ------------------------------------------------------------


def answer(
    persona: str, priority: int, chars: int, score: float | None = None, rnd: int = 1
) -> Answer:
    lines = prose(max(1, chars // 60), width=52)
    return Answer(persona, rnd, doc(lines), priority, score)


def test_seating_by_review_score_when_there_are_scores() -> None:
    answers = [
        answer("first", 0, 100, 10.0),
        answer("second", 1, 100, 17.0),
        answer("third", 2, 100, None),
        answer("fourth", 3, 100, 17.0),
    ]
    seated = [a.persona for a in seat_answers(answers)]
    assert seated == ["second", "fourth", "first", "third"]


def test_seating_by_roster_priority_without_scores() -> None:
    answers = [answer("c", 2, 100), answer("a", 0, 100, rnd=1), answer("a", 0, 100, rnd=2)]
    seated = [(a.persona, a.round) for a in seat_answers(answers)]
    # One voice per persona first: a's latest answer, then c's, then a's earlier one.
    assert seated == [("a", 2), ("c", 1), ("a", 1)]


def test_the_top_seats_go_to_the_reviewed_answers_of_two_personas() -> None:
    # Only the round-1 answers were reviewed (round 2 cross-examined them).
    answers = [
        answer("a", 0, 100, 6.0, rnd=1),
        answer("a", 0, 100, None, rnd=2),
        answer("b", 1, 100, 9.0, rnd=1),
        answer("b", 1, 100, None, rnd=2),
        answer("c", 2, 100, 6.0, rnd=1),
        answer("c", 2, 100, None, rnd=2),
        answer("d", 3, 100, None, rnd=2),  # joined late: nothing of it was reviewed
    ]
    seated = [(a.persona, a.round) for a in seat_answers(answers)]
    # By score, a tie by roster order; unreviewed personas after; then the second answers.
    assert seated == [("b", 1), ("a", 1), ("c", 1), ("d", 2), ("b", 2), ("a", 2), ("c", 2)]


def test_final_answers_take_the_seats_alternating_majority_and_dissent() -> None:
    def final(persona: str, priority: int, dissents: bool = False) -> Answer:
        text = answer(persona, priority, 3000).text
        return Answer(persona, 3, text, priority, None, final=True, dissents=dissents)

    # Round-1 answers carry the scores; the final (round-3) answers were written after them.
    answers = [
        answer("a", 0, 3000, 6.0, rnd=1),
        final("a", 0),
        answer("b", 1, 3000, 9.0, rnd=1),
        final("b", 1),
        answer("c", 2, 3000, 7.0, rnd=1),
        final("c", 2, dissents=True),
        answer("d", 3, 3000, 8.0, rnd=1),
        final("d", 3),
        final("e", 4, dissents=True),  # never reviewed
    ]
    seated = [(a.persona, a.round) for a in seat_answers(answers)]
    # Personas by their best review score (b 9, d 8, c 7, a 6, e none), the final answers
    # first, alternating from the side of the best (b, of the majority); then the earlier
    # answers in the order of those seats.
    assert seated == [
        ("b", 3), ("c", 3), ("d", 3), ("e", 3), ("a", 3),
        ("b", 1), ("c", 1), ("d", 1), ("a", 1),
    ]  # fmt: skip
    decided = compress_for_synthesis(answers, gate_chars=1)
    verbatim = [(i.answer.persona, i.answer.round) for i in decided.seated if not i.compressed]
    assert verbatim == [("b", 3), ("c", 3)]


def test_answers_under_the_gate_stay_as_they_are() -> None:
    answers = [answer("a", 0, 30_000), answer("b", 1, 20_000), answer("c", 2, 9_000)]
    total = sum(len(a.text) for a in answers)
    result = compress_for_synthesis(answers, gate_chars=total)
    assert not result.over_gate and result.under_gate_after
    assert all(item.decision is Decision.UNDER_GATE for item in result.answers)
    assert all(item.view_text == item.answer.text for item in result.answers)


def test_default_gate_is_60_percent_of_100_000() -> None:
    assert compress_for_synthesis([]).gate_chars == 60_000
    assert compress_for_synthesis([], window_chars=10_000, gate_ratio=0.5).gate_chars == 5_000
    assert compress_for_synthesis([], gate_chars=123, window_chars=1).gate_chars == 123


def test_over_the_gate_the_top_two_stay_verbatim() -> None:
    answers = [
        answer("a", 0, 25_000, 3.0),
        answer("b", 1, 25_000, 9.0),
        answer("c", 2, 25_000, 8.0),
        answer("d", 3, 25_000, 1.0),
    ]
    result = compress_for_synthesis(answers)
    assert result.over_gate and result.under_gate_after
    decisions = {item.answer.persona: (item.seat, item.decision) for item in result.answers}
    assert decisions == {
        "a": (3, Decision.COMPRESSED),
        "b": (1, Decision.VERBATIM_SEAT),
        "c": (2, Decision.VERBATIM_SEAT),
        "d": (4, Decision.COMPRESSED),
    }
    assert [item.answer.persona for item in result.seated] == ["b", "c", "a", "d"]
    assert result.view_chars == sum(item.view_chars for item in result.answers) < 60_000
    compressed = result.answers[0]
    assert compressed.compressed
    assert compressed.view_chars == len(compressed.view_text) < compressed.original_chars


def test_over_the_gate_the_views_fill_it_rather_than_undershoot() -> None:
    # Six answers of 12,000 characters (72,000 against the 60,000 gate): compressing every
    # answer below the verbatim seats to 25 lines would leave about 25,000 characters.
    code = "```python\ndef rollback(plan):\n    return plan.undo()\n```"
    text = doc([*prose(100), code, *prose(100, start=100)])
    answers = [Answer(f"p{i}", 1, text, i, 10.0 - i) for i in range(6)]
    assert 70_000 < sum(len(a.text) for a in answers) < 74_000

    result = compress_for_synthesis(answers)

    assert result.over_gate and result.under_gate_after
    assert 0.9 * 60_000 <= result.view_chars <= 60_000
    by_seat = [item.decision for item in result.seated]
    # The lowest seats give way first; the seats above them stay whole while the gate allows.
    assert by_seat[:2] == [Decision.VERBATIM_SEAT, Decision.VERBATIM_SEAT]
    assert by_seat[-1] is Decision.COMPRESSED and Decision.WHOLE in by_seat
    assert all(code in item.view_text for item in result.answers)
    filled = [item for item in result.answers if item.compressed and item.lines_kept != (15, 10)]
    assert len(filled) == 1 and filled[0].lines_kept is not None
    assert filled[0].lines_kept[0] > 15  # took back the lines that still fit


def test_the_widest_view_keeps_the_most_lines_that_fit() -> None:
    from dreamcontext_council.engine.prompting.compression import widest_view

    text = doc(prose(200))
    narrow = compress_answer(text)
    view, kept = widest_view(text, len(narrow) + 500) or ("", (0, 0))
    assert len(narrow) < len(view) <= len(narrow) + 500
    assert kept[0] > 15 and view == compress_answer(text, head=kept[0], tail=kept[1])
    wider = compress_answer(text, head=kept[0] + 1, tail=kept[1] + 1)
    assert len(wider) > len(narrow) + 500
    assert widest_view(text, len(narrow) - 1) is None


def test_the_strongest_minority_answer_keeps_a_verbatim_seat() -> None:
    # c backed B for three rounds, then flipped to the majority's A with nothing new: its
    # final answer is the majority's, but its round-3 answer held the minority longest.
    def said(persona: str, priority: int, rnd: int, minority: bool, conviction: int) -> Answer:
        text = doc(prose(200, start=priority * 1000 + rnd * 200))
        final = rnd == 4
        return Answer(
            persona, rnd, text, priority, None, final=final, minority=minority,
            conviction=conviction,
        )  # fmt: skip

    answers = [
        *(said("a", 0, r, False, 70) for r in (1, 2, 3, 4)),
        *(said("b", 1, r, False, 80) for r in (1, 2, 3, 4)),
        said("c", 2, 1, True, 60),
        said("c", 2, 2, True, 75),
        said("c", 2, 3, True, 55),
        said("c", 2, 4, False, 50),
    ]
    seated = [(a.persona, a.round) for a in seat_answers(answers)]
    assert seated[:2] == [("a", 4), ("c", 3)]
    result = compress_for_synthesis(answers, gate_chars=20_000)
    verbatim = {
        (i.answer.persona, i.answer.round)
        for i in result.answers
        if i.decision is Decision.VERBATIM_SEAT
    }
    assert verbatim == {("a", 4), ("c", 3)}
    # Without any minority answer, the seats are as before.
    agreed = [Answer(a.persona, a.round, a.text, a.priority, final=a.final) for a in answers]
    assert [(a.persona, a.round) for a in seat_answers(agreed)][:2] == [("a", 4), ("b", 4)]


def test_code_alone_over_the_gate_is_reported_not_cut() -> None:
    code = "```\n" + "\n".join(prose(200)) + "\n```\n"
    answers = [answer("a", 0, 100), answer("b", 1, 100), Answer("c", 1, code, 2)]
    result = compress_for_synthesis(answers, gate_chars=1_000)
    assert result.over_gate and not result.under_gate_after
    assert result.answers[2].decision is Decision.UNCHANGED
    assert result.answers[2].view_text == code


# --- properties ----------------------------------------------------------------------

fence_chars = st.sampled_from(["`", "~"])
# Whole tokens rather than single characters keep generation cheap; st.text below
# covers arbitrary characters.
token = st.sampled_from(
    [
        *["word", "`", "``", "```", "~~~", "#", "- ", "* ", "**", "1.", " ", "\t", "\r", "|"],
        *["é", "…", "[... 3 lines compressed.]", placeholder(0), "\ufdd0", "\x00"],
    ]
)
plain_line = st.lists(token, max_size=8).map("".join)
key_line = st.tuples(
    st.sampled_from(["# ", "## ", "- ", "* ", "+ ", "1. ", "12) ", "**", "  - "]), plain_line
).map("".join)


@st.composite
def fence_line(draw: st.DrawFn) -> str:
    indent = " " * draw(st.integers(0, 4))
    fence = draw(fence_chars) * draw(st.integers(2, 6))
    info = draw(st.sampled_from(["", "python", " sh", "claims", "x`y", "  "]))
    return indent + fence + info


@st.composite
def fenced_block(draw: st.DrawFn, closed: bool | None = None) -> str:
    char = draw(fence_chars)
    size = draw(st.integers(3, 5))
    body = draw(st.lists(plain_line | fence_line() | key_line, max_size=8))
    lines = [char * size + draw(st.sampled_from(["", "python", "claims"])), *body]
    if draw(st.integers(0, 4)) > 0 if closed is None else closed:  # mostly closed
        lines.append(char * draw(st.integers(size, size + 2)))
    return "\n".join(lines)


FILLERS = [
    "The migration can run in two phases without downtime",
    "Costs rise with the number of regions",
    "Nobody has measured the failover time under load, which matters most here",
    "Agreed",
    "This assumes the vendor keeps the current pricing for the next three years",
]
# A whole paragraph per draw keeps long answers cheap to generate.
paragraph = st.builds(
    lambda sentence, count: "\n".join(f"{sentence} ({n})" for n in range(count)),
    st.sampled_from(FILLERS),
    st.integers(1, 12),
)
part = paragraph | plain_line | key_line | fenced_block() | st.just("")
ending = st.sampled_from(["", "\n", "\r\n"])


@st.composite
def markdown(draw: st.DrawFn, min_parts: int = 0, max_parts: int = 30) -> str:
    """Prose, key lines and code; now and then one stray fence that may run to the end."""
    parts = draw(st.lists(part, min_size=min_parts, max_size=max_parts))
    if draw(st.integers(0, 4)) == 0:
        parts.insert(draw(st.integers(0, len(parts))), draw(fence_line()))
    return "\n".join(parts) + draw(ending)


markdown_text = markdown()
# Long enough that the default settings compress it most of the time.
long_markdown = markdown(min_parts=10, max_parts=25)
any_text = long_markdown | markdown_text | st.text(max_size=300)
settings_strategy = st.fixed_dictionaries(
    {
        "head": st.integers(0, 20),
        "tail": st.integers(0, 12),
        "key_lines": st.integers(0, 4),
        "key_width": st.integers(1, 70),
    }
)


@PROPERTY
@given(any_text)
def test_extract_and_restore_round_trip(text: str) -> None:
    view, blocks = extract_code_blocks(text)
    assert restore_code_blocks(view, blocks) == text


@PROPERTY
@given(any_text, settings_strategy)
def test_compression_never_alters_a_code_block(text: str, options: dict[str, int]) -> None:
    _, blocks = extract_code_blocks(text)
    out = compress_answer(text, **options)
    assert extract_code_blocks(out)[1] == blocks
    assert in_order(out, blocks)


@PROPERTY
@given(any_text, settings_strategy)
def test_compression_never_makes_an_answer_longer(text: str, options: dict[str, int]) -> None:
    assert len(compress_answer(text, **options)) <= len(text)


@PROPERTY
@given(any_text, settings_strategy)
def test_compression_is_idempotent(text: str, options: dict[str, int]) -> None:
    once = compress_answer(text, **options)
    assert compress_answer(once, **options) == once


@LONG_PROPERTY
@given(long_markdown)
def test_compressed_view_keeps_head_and_tail(text: str) -> None:
    out = compress_answer(text)
    if out == text:
        return
    view, _ = extract_code_blocks(text)
    out_view, _ = extract_code_blocks(out)
    lines, out_lines = view.split("\n"), out_view.split("\n")
    assert out_lines[:15] == lines[:15]
    assert out_lines[-10:] == lines[-10:]
    assert out_lines[15].startswith("[... ")


def compressed_bound(text: str) -> int:
    """The most characters compress_answer can leave: head, tail, marker and all code."""
    view, blocks = extract_code_blocks(text)
    lines = split_lines(view)
    if len(lines) <= 25:
        return len(text)
    middle_code = [line for line in lines[15:-10] if line.startswith(placeholder(0)[:5])]
    kept = restore_code_blocks("".join([*lines[:15], *middle_code, *lines[-10:]]), blocks)
    marker = len(compression_marker(10**9, ["k" * 60] * 3)) + 2
    return min(len(text), len(kept) + marker)


@st.composite
def long_answer(draw: st.DrawFn) -> str:
    """Mostly prose, long enough to be worth compressing, with a few code blocks."""
    parts = draw(st.lists(paragraph | key_line, min_size=6, max_size=15))
    for block in draw(st.lists(fenced_block(closed=True), max_size=3)):
        parts.insert(draw(st.integers(0, len(parts))), block)
    return doc(parts)


@LONG_PROPERTY
@given(
    st.lists(
        st.tuples(long_answer(), st.none() | st.floats(0, 40, allow_nan=False)),
        min_size=1,
        max_size=4,
    ),
    st.integers(0, 3),
)
def test_large_inputs_come_under_the_gate_where_code_allows(
    drawn: list[tuple[str, float | None]], keep: int
) -> None:
    answers = [Answer(f"p{i}", 1, text, i, score) for i, (text, score) in enumerate(drawn)]
    seated = seat_answers(answers)
    verbatim = sum(len(a.text) for a in seated[:keep])
    reachable = verbatim + sum(compressed_bound(a.text) for a in seated[keep:])
    result = compress_for_synthesis(answers, gate_chars=reachable, keep_verbatim=keep)
    assert result.under_gate_after
    assert result.over_gate == (result.original_chars > reachable)
    assert result.view_chars <= result.original_chars
    for item in result.answers:
        assert item.compressed == (item.view_text != item.answer.text)
        assert (item.decision is Decision.VERBATIM_SEAT) == (result.over_gate and item.seat <= keep)
    # The lowest seats give way first: every answer left whole sits above every compressed one.
    whole = [i.seat for i in result.answers if i.decision is Decision.WHOLE]
    compressed = [i.seat for i in result.answers if i.compressed]
    assert not whole or not compressed or max(whole) < min(compressed)


answers_strategy = st.lists(
    st.tuples(any_text | long_answer(), st.none() | st.integers(1, 30)),
    min_size=1,
    max_size=5,
)


def as_answers(drawn: list[tuple[str, int | None]]) -> list[Answer]:
    return [
        Answer(f"p{i % 3}", 1 + i // 3, text, i % 3, score) for i, (text, score) in enumerate(drawn)
    ]


@LONG_PROPERTY
@given(answers_strategy, st.integers(0, 20_000), st.integers(0, 3))
def test_synthesis_input_never_alters_code_and_never_grows(
    drawn: list[tuple[str, int | None]], gate: int, keep: int
) -> None:
    result = compress_for_synthesis(as_answers(drawn), gate_chars=gate, keep_verbatim=keep)
    assert result.view_chars <= result.original_chars
    for item in result.answers:
        assert item.view_chars <= item.original_chars
        assert extract_code_blocks(item.view_text)[1] == extract_code_blocks(item.answer.text)[1]


@LONG_PROPERTY
@given(answers_strategy, st.integers(0, 20_000), st.integers(0, 3))
def test_synthesis_input_is_idempotent_on_its_own_views(
    drawn: list[tuple[str, int | None]], gate: int, keep: int
) -> None:
    answers = as_answers(drawn)
    once = compress_for_synthesis(answers, gate_chars=gate, keep_verbatim=keep)
    views = [
        Answer(a.persona, a.round, item.view_text, a.priority, a.review_score)
        for item in once.answers
        for a in [item.answer]
    ]
    twice = compress_for_synthesis(views, gate_chars=gate, keep_verbatim=keep)
    assert [item.view_text for item in twice.answers] == [item.view_text for item in once.answers]
    assert [item.seat for item in twice.answers] == [item.seat for item in once.answers]


def test_still_over_the_gate_the_lowest_seats_keep_fewer_lines() -> None:
    prose = "\n".join(f"- point {i}: " + "words " * 12 for i in range(60))
    code = "```python\nprint('kept')\n```"
    answers = [Answer(f"p{i}", 1, f"{prose}\n{code}\n{prose}", priority=i) for i in range(8)]
    first = compress_for_synthesis(answers, gate_chars=30_000, tighten=False)
    assert not first.under_gate_after
    second = compress_for_synthesis(answers, gate_chars=30_000)
    assert second.under_gate_after
    tightened = [a for a in second.answers if a.decision is Decision.TIGHTENED]
    # Each keeps a step's lines, but the last one tightened: it takes back what still fits.
    stepped = [a for a in tightened if a.lines_kept in TIGHTER_LINES]
    assert tightened and len(stepped) >= len(tightened) - 1
    assert second.view_chars >= 0.9 * 30_000
    # The lowest seats are tightened first; the verbatim seats are untouched.
    assert max(a.seat for a in second.answers) in {a.seat for a in tightened}
    assert [a.view_text for a in second.seated[:2]] == [answers[0].text, answers[1].text]
    assert all(code in a.view_text for a in second.answers)


def test_compressing_a_view_again_counts_the_lines_its_marker_stands_for() -> None:
    # Found by the idempotency property: a (4, 3) view compressed again at (2, 1) counted
    # its marker as one line, came out one character shorter, and replaced the view.
    line = "The migration can run in two phases without downtime"
    numbered = [f"{line} ({n})" for n in (0, 0, 1, 2, 3)]
    text = "\n".join(
        [f"{line} (0)", "", "word", "## word ", *numbered, "", "# ", "", f"{line} (0)"]
    )
    view = compress_answer(text, head=4, tail=3)
    assert "[... 6 lines compressed.]" in view

    # Read through the view's marker, the (2, 1) form is the one the text gives: no shorter.
    assert len(compress_answer(text, head=2, tail=1)) == len(view)
    assert compress_answer(view, head=2, tail=1) == view
    once = compress_for_synthesis([Answer("p0", 1, text, 0)], gate_chars=0, keep_verbatim=0)
    again = compress_for_synthesis(
        [Answer("p0", 1, once.answers[0].view_text, 0)], gate_chars=0, keep_verbatim=0
    )
    assert again.answers[0].view_text == once.answers[0].view_text


def test_a_semicolon_in_a_key_point_does_not_split_it_when_read_back() -> None:
    middle = ["- cost; risk", *[f"prose {n}" for n in range(30)], "- rollback"]
    text = "\n".join(["head", *middle, "tail"])
    view = compress_answer(text, head=1, tail=1)
    assert "Key points: cost, risk; rollback]" in view
    assert compress_answer(view, head=0, tail=0) == compress_answer(text, head=0, tail=0)
