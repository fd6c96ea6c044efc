"""Property tests for the pure parsers and renderers of rules/ and folder/ on odd input."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.names import check_debate_id, check_slug, slugify
from dreamcontext_council.rules import metrics
from dreamcontext_council.rules.debate import Debate, parse_debate, render_debate
from dreamcontext_council.rules.entry_markup import ParsedHeading, parsed_headings
from dreamcontext_council.rules.report import (
    REQUIRED_SECTIONS,
    RoundEntry,
    check_entry_body,
    clean_entry_body,
    missing_sections,
    parse_report,
    render_report,
    with_entry,
)
from dreamcontext_council.rules.verdicts import (
    Verdict,
    Verdicts,
    parse_conviction,
    parse_verdicts,
    render_verdicts,
)

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any character a person might type or paste, but no lone surrogates (not encodable).
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
line_chars = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))
STRUCTURE = re.compile(r"^( {0,3}(`{3,}|~{3,})|#{1,6}([ \t]|$))")

# A line of prose: never a heading or a fence outside code.
prose_line = st.text(line_chars, max_size=40).filter(lambda s: not STRUCTURE.match(s))
# Inside a fence anything goes except a line that would close it.
fenced_line = st.one_of(
    st.sampled_from(
        ["## Round 9 — fake heading inside a fence", "### Position", "# title", "---", "~~~"]
    ),
    prose_line,
)


# The last line of an entry keeps no trailing blanks: the file's final whitespace is not kept.
closing_line = prose_line.filter(lambda s: s.strip() != "" and s == s.rstrip())
prose_lines = st.lists(prose_line, min_size=1, max_size=3)
fenced_lines = st.lists(fenced_line, max_size=4)


@st.composite
def section_body(draw: st.DrawFn) -> str:
    lines = draw(prose_lines)
    if draw(st.booleans()):
        lines += ["```sql", *draw(fenced_lines), "```"]
    lines.append(draw(closing_line))
    return "\n".join(lines)


@st.composite
def entry_body(draw: st.DrawFn) -> str:
    parts = []
    for title in REQUIRED_SECTIONS:
        parts.append(f"### {title}\n{draw(section_body())}")
    return "\n\n".join(parts)


dates = st.dates().map(lambda d: d.isoformat())


@st.composite
def round_entries(draw: st.DrawFn) -> list[RoundEntry]:
    rounds = draw(st.lists(st.integers(1, 10), min_size=1, max_size=3, unique=True))
    return [RoundEntry(n, draw(dates), draw(entry_body())) for n in rounds]


@PROPERTY
@given(round_entries())
def test_report_render_then_parse_gives_the_entries_back(entries: list[RoundEntry]) -> None:
    text = render_report("risk-auditor", entries)
    parsed = parse_report(text)
    expected = sorted(
        (RoundEntry(e.round, e.date, e.body.strip("\n")) for e in entries), key=lambda e: -e.round
    )
    assert parsed == expected
    meta, _ = frontmatter_io.parse(text, "report.md")
    assert meta == {"persona": "risk-auditor", "rounds_completed": len(entries)}
    assert render_report("risk-auditor", parsed) == text


@PROPERTY
@given(round_entries(), st.integers(1, 10), entry_body())
def test_a_later_entry_for_a_round_replaces_the_earlier(
    entries: list[RoundEntry], number: int, body: str
) -> None:
    updated = with_entry(entries, RoundEntry(number, "2026-12-01", body))
    parsed = parse_report(render_report("p", updated))
    assert [e.round for e in parsed].count(number) == 1
    assert next(e for e in parsed if e.round == number).body == body.strip("\n")


def test_a_fenced_round_heading_is_content_not_an_entry() -> None:
    body = "### Executive Summary\nx\n\n```\n## Round 9 — 2026-01-01\n### Position\n```"
    (entry,) = parse_report(render_report("p", [RoundEntry(2, "2026-11-30", body)]))
    assert entry.round == 2 and "## Round 9" in entry.body


def loosen(title: str, case: str, tail: str) -> str:
    cased = {"lower": title.lower(), "upper": title.upper(), "title": title.title()}[case]
    return cased + tail


@PROPERTY
@given(
    st.lists(st.sampled_from(["lower", "upper", "title"]), min_size=5, max_size=5),
    st.lists(st.sampled_from(["", ":", ".", "?", " :", " #"]), min_size=5, max_size=5),
    st.lists(st.sampled_from(["##", "###", "####"]), min_size=5, max_size=5),
)
def test_required_sections_match_in_any_case_and_punctuation(
    cases: list[str], tails: list[str], levels: list[str]
) -> None:
    body = "\n".join(
        f"{level} {loosen(title, case, tail)}\ntext for {title}"
        for title, case, tail, level in zip(REQUIRED_SECTIONS, cases, tails, levels, strict=True)
    )
    cleaned, named = clean_entry_body(body)
    assert named is None
    assert missing_sections(cleaned) == []
    check_entry_body(cleaned)
    summary = RoundEntry(1, "2026-11-30", cleaned).executive_summary
    assert summary == "text for Executive Summary"


@PROPERTY
@given(st.sets(st.sampled_from(REQUIRED_SECTIONS), min_size=1, max_size=4))
def test_a_report_missing_sections_is_refused_naming_each(dropped: set[str]) -> None:
    body = "\n".join(f"### {t}\nx" for t in REQUIRED_SECTIONS if t not in dropped)
    with pytest.raises(UsageError) as raised:
        check_entry_body(body)
    for title in dropped:
        assert f"### {title}" in str(raised.value)


@PROPERTY
@given(any_text)
def test_frontmatter_round_trips_any_topic(topic: str) -> None:
    text = frontmatter_io.render({"topic": topic, "tags": [topic]}, "## Question\n\nbody")
    meta, body = frontmatter_io.parse(text, "debate.md")
    assert meta == {"topic": topic, "tags": [topic]}
    assert body.strip() == "## Question\n\nbody"


@PROPERTY
@given(any_text.filter(lambda t: t.strip() != ""), st.integers(0, 10))
def test_debate_md_round_trips_odd_topics_and_unknown_keys(topic: str, current: int) -> None:
    meta = {
        "id": "council_AbC12345",
        "topic": topic,
        "status": "created",
        "rounds_planned": 10,
        "current_round": current,
        "interrupt_between_rounds": False,
        "personas": ["risk-auditor"],
        "promoted_to_knowledge": None,
        "created_at": "2026-11-30",
        "updated_at": "2026-11-30",
        "options": [{"key": "A", "label": topic}],
        "seed": {"ours": [1, 2]},
    }
    text = render_debate(Debate(dict(meta), "## Question\n\nq\n"))
    again = parse_debate(text)
    assert again.meta == meta and list(again.meta) == list(meta)
    assert render_debate(again) == text


verdict = st.builds(
    Verdict,
    stance=st.text(min_size=1, max_size=30),
    conviction=st.integers(0, 100),
    headline=any_text,
    concession=st.none() | any_text.filter(bool),
    at=st.just("2026-11-30T03:40:17.560Z"),
)
slugs = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True)


@PROPERTY
@given(
    st.lists(
        st.builds(
            lambda k, lb: {"key": k, "label": lb}, st.text(min_size=1, max_size=24), any_text
        ),
        max_size=4,
        unique_by=lambda o: o["key"],
    ),
    st.dictionaries(st.integers(1, 10), st.dictionaries(slugs, verdict, max_size=4), max_size=4),
)
def test_verdicts_round_trip(
    options: list[dict[str, str]], rounds: dict[int, dict[str, Verdict]]
) -> None:
    verdicts = Verdicts(options, rounds)
    text = render_verdicts(verdicts)
    assert parse_verdicts(text) == verdicts
    assert render_verdicts(parse_verdicts(text)) == text


@PROPERTY
@given(st.dictionaries(slugs, verdict, max_size=6))
def test_convergence_and_leading_follow_the_conviction(votes: dict[str, Verdict]) -> None:
    level = metrics.convergence(votes)
    lead = metrics.leading(votes)
    totals = metrics.stance_totals(votes)
    assert 0 <= level <= 100
    if not totals or not sum(totals.values()):
        assert level == 0
    if lead is not None:
        best = max(totals.values())
        assert totals[lead] == best
        assert lead == min(s for s, t in totals.items() if t == best)


def test_derived_figures_of_the_reference_round_one() -> None:
    votes = {
        "risk-auditor": Verdict("A", 60, "h"),
        "growth-cfo": Verdict("A", 60, "h"),
        "user-advocate": Verdict("B", 55, "h"),
    }
    assert (metrics.convergence(votes), metrics.leading(votes)) == (69, "A")
    tie = {"a": Verdict("B", 50, "h"), "b": Verdict("A", 50, "h")}
    assert (metrics.leading(tie), metrics.convergence(tie)) == ("A", 50)
    assert metrics.shift(None, votes["growth-cfo"]) == "·"
    assert metrics.shift(Verdict("B", 55, "h"), Verdict("B", 40, "h")) == "↓ 55→40"
    assert metrics.shift(Verdict("B", 55, "h"), Verdict("B", 46, "h")) == "="
    assert metrics.shift(Verdict("A", 55, "h"), Verdict("B", 90, "h")) == "↑ A→B"


@PROPERTY
@given(st.one_of(st.integers(-1000, 1000).map(str), any_text, st.integers(-5, 105)))
def test_conviction_is_a_whole_number_from_0_to_100(value: str | int) -> None:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = None
    if number is not None and 0 <= number <= 100:
        assert parse_conviction(value) == number
    else:
        with pytest.raises(UsageError):
            parse_conviction(value)


@PROPERTY
@given(any_text)
def test_accepted_names_are_single_safe_path_segments(text: str) -> None:
    for check in (check_slug, check_debate_id):
        try:
            name = check(text)
        except UsageError:
            continue
        assert name == text and name not in (".", "..")
        assert not set(name) & {"/", "\\", "\x00", "\n"}
        assert name.isascii() and name.strip() == name


@PROPERTY
@given(any_text, st.integers(1, 100))
def test_slugify_gives_a_valid_slug_or_nothing(text: str, limit: int) -> None:
    slug = slugify(text, limit)
    assume(slug)
    assert len(slug) <= limit
    assert check_slug(slug[:64]) == slug[:64]


@pytest.mark.parametrize("value", ["\n", "\n\n", "line\n\n"])
def test_a_value_ending_in_kept_line_breaks_does_not_end_the_frontmatter(value: str) -> None:
    # PyYAML closes such a value's document with `...`; between two entries that ended it.
    text = frontmatter_io.render({"topic": value, "tags": [value], "id": "x"}, "body")
    meta, _ = frontmatter_io.parse(text, "debate.md")
    assert meta == {"topic": value, "tags": [value], "id": "x"}


def test_an_entry_already_in_stored_form_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import dreamcontext_council.rules.entry_markup as entry_markup
    import dreamcontext_council.rules.report as report

    parses: list[str] = []

    def counted(text: str) -> list[ParsedHeading]:
        parses.append(text)
        return parsed_headings(text)

    monkeypatch.setattr(entry_markup, "parsed_headings", counted)
    monkeypatch.setattr(report, "_STORED_FORM", set())
    body = "\n".join(f"### {title}\ntext for {title}" for title in REQUIRED_SECTIONS)

    assert clean_entry_body(body) == (body, None)
    assert len(parses) == 1
    # Cleaned again (as the engine does when it records the answer): not parsed again.
    assert clean_entry_body(body, demote=True) == (body, None)
    assert clean_entry_body(body) == (body, None)
    assert len(parses) == 1
    # A body that needed demoting is parsed every time, and refused without `demote`.
    loud = "## Loud\n" + body
    assert clean_entry_body(loud, demote=True)[0] == "### Loud\n" + body
    with pytest.raises(UsageError, match="level-2 heading 'Loud'"):
        clean_entry_body(loud)
    parses.clear()
    # A heading that had to be rewritten is checked again on the rewritten text.
    assert clean_entry_body("Summary\n===\n" + body, demote=True)[0].startswith("### Summary\n")
    assert len(parses) == 2
