"""Odd input: the guard never fails on any question, and compressing an attachment never
cuts a byte of its code, wrapped or not."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dreamcontext_council.engine.prompting.attachments import compress_attachment, wrap_prose
from dreamcontext_council.engine.prompting.compression import find_fenced_blocks
from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.grounding import preflight, question_problems

PIECES = st.sampled_from(
    [
        "word", "this design", "the attached", "TODO", "TODO:", "TBD", "[", "]", "{", "}", "<",
        ">", "...", "…", "describe", "paste", "here", "your", "`", "```", "~~~", "lorem ipsum",
        "___", ":", ".", "?", "(", ")", " ", "  ", "\n", "\r\n", "\t", "é", "x" * 250,
    ]
)  # fmt: skip
TEXT = st.lists(PIECES, max_size=60).map("".join) | st.text(max_size=300)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.booleans())
def test_the_guard_answers_any_question(question: str, attached: bool) -> None:
    problems = question_problems(question, attached=attached)
    for problem in problems:
        assert problem.kind in ("placeholder", "reference")
        assert problem.found.strip() and problem.found.strip() in question
    try:
        preflight(question, attached=attached)
    except UsageError:
        assert problems
    else:
        assert not problems


PROSE = st.lists(
    st.sampled_from(
        [
            "Replicas lag at night.",
            "- a bullet",
            "# Heading",
            "``` inline",
            "~~~",
            "|a|b|",
            "    indented",
            "word " * 60,
        ]
    ),
    min_size=1,
    max_size=8,
).map(" ".join)
CODE = st.lists(
    st.sampled_from(["x = 1", "```", "    deep", "\ttab", "y" * 300, "", "~~~", "  ```python"]),
    max_size=6,
).map("\n".join)
FENCES = st.sampled_from(["```", "````", "~~~", "```python"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 40))):
        if draw(st.booleans()):
            fence = draw(FENCES)
            closer = fence.rstrip("python")
            body = "\n".join(
                line for line in draw(CODE).split("\n") if not line.startswith(closer[:3])
            )
            parts.append(f"{fence}\n{body}\n{closer}")
        else:
            parts.append(draw(PROSE))
    return draw(st.sampled_from(["\n", "\r\n"])).join(parts) + "\n"


EMPTY_BLOCKS = "```\n\n```\r\n"
REPLICAS = "Replicas lag at night."
# Found by the test below: wrapping the prose added more than compressing it then saved.
WRAPPED_LONGER = (
    EMPTY_BLOCKS * 13 + "word " * 60 + "\r\n|a|b| - a bullet # Heading\r\n" + EMPTY_BLOCKS * 3
    + (REPLICAS + " ") * 3 + "word " * 60 + f" {REPLICAS} {REPLICAS}\r\n" + EMPTY_BLOCKS * 3
    + "```\n\n```\n"
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(documents(), st.booleans())
@example(WRAPPED_LONGER, True)
def test_compressing_an_attachment_keeps_every_code_block(text: str, wrap: bool) -> None:
    view = compress_attachment(text, wrap=wrap)

    assert len(view) <= len(text) or view == wrap_prose(text)
    for block in find_fenced_blocks(text):
        assert text[block.start : block.end] in view
