"""Every parser, fed hostile text, fails only with our own error types (or returns).

A parser may refuse input with a CouncilError subclass (FormatError, UsageError, ...), and
the persona-contract parser with its documented ContractError; anything else (TypeError,
ValueError, RecursionError, ...) is a crash and fails the test with the smallest example.
"""

from __future__ import annotations

import contextlib
import importlib.util

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamcontext_council.actions.convene import parse_options
from dreamcontext_council.engine.protocol.contract import (
    ContractError,
    parse_persona_answer,
    review_score,
)
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.rules.debate import parse_debate
from dreamcontext_council.rules.persona import parse_context
from dreamcontext_council.rules.report import check_entry_body, clean_entry_body, parse_report
from dreamcontext_council.rules.roster import parse_roster
from dreamcontext_council.rules.verdicts import parse_conviction, parse_verdicts, resolve_stance

from .conftest import PROFILE
from .strategies import (
    any_text,
    claims_answer,
    context_document,
    debate_document,
    frontmatter_document,
    json_values,
    markdown_body,
    persona_answer,
    small_text,
    verdicts_document,
    yaml_block,
)

pytestmark = pytest.mark.filterwarnings("ignore")
OPTIONS = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay on Redis"}]


def debate_like(text: str) -> None:
    """Everything the views read from a parsed debate.md, so lazy properties are fuzzed too."""
    debate = parse_debate(text, "debate.md")
    for name in ("id", "topic", "status", "rounds_planned", "current_round", "personas"):
        getattr(debate, name)
    for name in ("options", "interrupt", "promoted", "flags"):
        getattr(debate, name)
    debate.facts()
    debate.section("Question")


@settings(settings.get_profile(PROFILE))
@given(st.one_of(frontmatter_document(), any_text))
def test_frontmatter(text: str) -> None:
    try:
        meta, body = frontmatter_io.parse(text, "doc.md")
    except CouncilError:
        return
    assert isinstance(meta, dict) and isinstance(body, str)
    assert all(isinstance(key, str) for key in meta)


@settings(settings.get_profile(PROFILE))
@given(st.one_of(debate_document(), frontmatter_document()))
def test_debate_md(text: str) -> None:
    with contextlib.suppress(CouncilError):
        debate_like(text)


@settings(settings.get_profile(PROFILE))
@given(st.one_of(context_document(), frontmatter_document(), any_text))
def test_persona_context(text: str) -> None:
    try:
        context = parse_context(text, "context-and-persona.md")
    except CouncilError:
        return
    context.persona_text  # noqa: B018
    for number in range(4):
        context.panel(number)
        context.directives(number)
    context.panel_rounds()


@settings(settings.get_profile(PROFILE))
@given(st.one_of(frontmatter_document(), markdown_body(), any_text))
def test_report_entries(text: str) -> None:
    try:
        entries = parse_report(text, "report.md")
    except CouncilError:
        return
    for entry in entries:
        entry.executive_summary  # noqa: B018
        entry.render()


@settings(settings.get_profile(PROFILE))
@given(st.one_of(markdown_body(), persona_answer(), any_text))
def test_submitted_entry_bodies(text: str) -> None:
    try:
        body, _named = clean_entry_body(text)
        check_entry_body(body)
    except CouncilError:
        pass


@settings(settings.get_profile(PROFILE))
@given(
    st.one_of(persona_answer(), any_text),
    st.sampled_from([OPTIONS, []]),
    st.sampled_from([OPTIONS, [], [{"key": "x", "label": "X"}]]),
)
def test_verdict_blocks(
    text: str, registered: list[dict[str, str]], known: list[dict[str, str]]
) -> None:
    with contextlib.suppress(ContractError):
        parse_persona_answer(text, registered, known)
    review_score(text)


@settings(settings.get_profile(PROFILE))
@given(st.one_of(st.none(), small_text, st.lists(small_text, max_size=6).map(",".join)))
def test_options_spec(spec: str | None) -> None:
    with contextlib.suppress(CouncilError):
        parse_options(spec)


@settings(settings.get_profile(PROFILE))
@given(st.one_of(verdicts_document(), any_text))
def test_verdicts_json(text: str) -> None:
    try:
        verdicts = parse_verdicts(text, "verdicts.json")
    except CouncilError:
        return
    verdicts.last_round()
    for option in verdicts.options:
        verdicts.label(option["key"])


@settings(settings.get_profile(PROFILE))
@given(
    st.one_of(small_text, st.integers(-(10**30), 10**30), st.floats().map(str)),
    small_text,
    st.sampled_from([OPTIONS, []]),
)
def test_conviction_and_stance(conviction: str | int, stance: str, registered: list) -> None:
    with contextlib.suppress(CouncilError):
        parse_conviction(conviction)
    with contextlib.suppress(CouncilError):
        resolve_stance(stance, registered, [])


@settings(settings.get_profile(PROFILE))
@given(st.one_of(yaml_block(), json_values.map(str), any_text))
def test_roster_files(text: str) -> None:
    with contextlib.suppress(CouncilError):
        parse_roster(text, "roster.yaml")


@settings(settings.get_profile(PROFILE))
@given(json_values)
def test_roster_files_as_json(data: object) -> None:
    import json

    with contextlib.suppress(CouncilError):
        parse_roster(json.dumps(data), "roster.json")


@pytest.mark.skipif(
    importlib.util.find_spec("dreamcontext_council.engine.prompting.claims") is None,
    reason="the claims ledger has not landed",
)
@settings(settings.get_profile(PROFILE))
@given(
    st.one_of(claims_answer(), any_text), st.sampled_from([None, ["risk-auditor", "growth-cfo"]])
)
def test_claims_block(text: str, roster: list[str] | None) -> None:
    from dreamcontext_council.engine.prompting.claims import parse_claims_block

    with contextlib.suppress(CouncilError):
        parse_claims_block(text, roster)
