"""Model output renders as markdown that cannot run code, with citations linked."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamcontext_council.views.safe_markdown import LinkTargets, render_markdown, safe_href

TARGETS = LinkTargets.of(["risk-auditor", "growth-cfo", "user-advocate"], [1, 2])


def test_raw_html_is_shown_as_text() -> None:
    html = render_markdown("<img src=x onerror=alert(1)> and <script>alert(1)</script>\n\n<div>")
    assert "<img" not in html and "<script" not in html and "<div" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JAVAscript:alert(1)",
        "java\tscript:alert(1)",
        " javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "//evil.example/x",
        "file:///etc/passwd",
        "relative/page.html",
    ],
)
def test_unsafe_links_are_dropped(url: str) -> None:
    assert not safe_href(url)
    html = render_markdown(f"[click]({url})")
    assert "href" not in html
    assert "click" in html


@pytest.mark.parametrize(
    "url", ["https://example.org/a?b=c", "http://example.org", "mailto:a@example.org", "#cell-x-1"]
)
def test_safe_links_are_kept(url: str) -> None:
    assert safe_href(url)
    assert 'href="' in render_markdown(f"[ok]({url})")


def test_autolinks_and_entity_tricks_are_checked() -> None:
    html = render_markdown(
        "<javascript:alert(1)> [x](&#106;avascript:alert(1)) [y](java&#x09;script:1)"
    )
    assert "href" not in html


def test_images_are_not_loaded() -> None:
    html = render_markdown("![tracker](https://example.org/pixel.png)")
    assert "<img" not in html


def test_citations_link_to_matrix_cells() -> None:
    html = render_markdown("*— risk-auditor R1, growth-cfo R1+R2*", TARGETS)
    assert '<a href="#cell-risk-auditor-1" class="cite">risk-auditor R1</a>' in html
    assert '<a href="#cell-growth-cfo-1" class="cite">growth-cfo R1</a>+' in html
    assert '<a href="#cell-growth-cfo-2" class="cite">R2</a>' in html


@pytest.mark.parametrize(
    "text",
    [
        "someone-else R1",  # not a persona of this debate
        "risk-auditor R7",  # no such round
        "`risk-auditor R1`",  # code stays code
        "[risk-auditor R1](https://example.org)",  # already a link
        "xrisk-auditor R1",  # part of a longer word
        "risk-auditor R1x",
    ],
)
def test_things_that_are_not_citations_stay_text(text: str) -> None:
    assert 'class="cite"' not in render_markdown(text, TARGETS)


def test_bold_persona_mention_becomes_a_chip() -> None:
    html = render_markdown("**growth-cfo**: underestimates cutover risk.", TARGETS)
    assert '<a href="#persona-growth-cfo" class="chip persona-chip">growth-cfo</a>:' in html
    assert "<strong>Ops cost</strong>:" in render_markdown("**Ops cost**: drops.", TARGETS)


def test_tables_render() -> None:
    html = render_markdown("| a | b |\n|---|---|\n| <b>1</b> | 2 |")
    assert "<table>" in html and "&lt;b&gt;1&lt;/b&gt;" in html


PIECES = st.sampled_from(
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "[x](javascript:alert(1))",
        "[y](data:text/html,hi)",
        "<a href='javascript:1'>z</a>",
        '" onmouseover="alert(1)',
        "**risk-auditor**:",
        "risk-auditor R1+R2",
        "`code`",
        "\n\n",
        "| a |\n|---|\n| b |",
        "> quote",
        "- item",
        "![i](javascript:1)",
        "<javascript:alert(1)>",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=20)), max_size=12))
def test_no_markup_from_the_input_survives(parts: list[str]) -> None:
    html = str(render_markdown("".join(parts), TARGETS))
    assert "<script" not in html.lower()
    assert "<img" not in html.lower()
    assert not re.search(r"<[a-z][^>]*\son\w+\s*=", html, re.IGNORECASE)
    for href in re.findall(r'href="([^"]*)"', html):
        assert href.startswith(("#", "http://", "https://", "mailto:")), href
