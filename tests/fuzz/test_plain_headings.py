"""The plain-case heading reader answers exactly as markdown-it does, or not at all.

`entry_markup.plain_headings` spares an answer's markdown parse when the text is in the
plain case (headings at column 0, fences at column 0). Wherever it returns a list, the
parser must return the same headings; the property is checked on hostile text built from
the lines that make CommonMark's block structure turn.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dreamcontext_council.rules.entry_markup import _parsed_by_markdown_it, plain_headings

from .conftest import PROFILE
from .strategies import HEADINGS, markdown_body, small_text

TURNS = [
    "# x",
    "#x",
    "## a ##",
    "### b #",
    "### c\\#",
    "#### #",
    "# ###",
    "######",
    "####### seven",
    "#",
    "##   spaced   out   ",
    "```",
    "```text",
    "``` a`b",
    "````",
    "~~~",
    "~~~~ info",
    "  ```",
    "   ~~~",
    "    ```",
    "    # indented",
    " # one space",
    "- # in a list",
    "1. # in a list",
    "- ```",
    "  ```",
    "> # quoted",
    "> text",
    "[ref]: /url",
    "[ref]: /url 'multi",
    "---",
    "===",
    "- - -",
    "***",
    "| a | b |",
    "|---|---|",
    "- item",
    "  continued",
    "text",
    "",
    "",
    "<div>",
    "\\# escaped",
]

lines = st.lists(
    st.one_of(st.sampled_from(TURNS), st.sampled_from(HEADINGS), small_text), max_size=30
)


def agrees(text: str) -> None:
    fast = plain_headings(text)
    if fast is not None:
        assert fast == _parsed_by_markdown_it(text), text


@settings(settings.get_profile(PROFILE))
@given(lines)
def test_plain_headings_are_the_parsers_or_none(parts: list[str]) -> None:
    agrees("\n".join(parts))


@settings(settings.get_profile(PROFILE))
@given(markdown_body())
def test_plain_headings_agree_on_any_body(body: str) -> None:
    agrees(body)


def test_a_usual_answer_is_read_without_the_parser() -> None:
    answer = "\n".join(
        [
            "### Executive Summary",
            "We back A.",
            "",
            "### Reasoning",
            "- **Cost** decides.",
            "",
            "```text",
            "# a comment in code, not a heading",
            "```",
            "",
            "### Open questions",
            "What would move us?",
        ]
    )
    plain = plain_headings(answer)
    assert plain is not None
    assert [(h.start, h.level, h.title) for h in plain] == [
        (0, 3, "Executive Summary"),
        (3, 3, "Reasoning"),
        (10, 3, "Open questions"),
    ]
    assert plain == _parsed_by_markdown_it(answer)
