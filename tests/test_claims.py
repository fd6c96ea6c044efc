"""The claims ledger: parsing the synthesizer's block, labels, dissent flags, rendering."""

from __future__ import annotations

import json
import re
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamcontext_council.engine.prompting.claims import (
    Claim,
    ClaimLabel,
    basis,
    claims_to_json,
    dissent_flags,
    label_claim,
    label_claims,
    parse_claims_block,
    resolve_attachments,
    resolve_research,
)
from dreamcontext_council.engine.prompting.claims_section import render_claims_ledger
from dreamcontext_council.errors import FormatError
from dreamcontext_council.rules.dissent import (
    DissentFlag,
)

ROSTER = ["synthesizer", "epistemologist", "contrarian", "systems-thinker"]


def item(**fields: object) -> dict[str, object]:
    """A valid claims-block item, with fields overridden."""
    base: dict[str, object] = {
        "claim": "Migrating halves the on-call load",
        "proposer": "synthesizer",
        "round": 1,
        "supporters": [],
        "challengers": [],
        "retracted": False,
    }
    base.update(fields)
    return base


def report(items: object, before: str = "## Verdict\n\nMigrate.\n\n") -> str:
    return f"{before}```claims\n{json.dumps(items, indent=1)}\n```\n"


def claim(**fields: object) -> Claim:
    _, claims = parse_claims_block(report([item(**fields)]))
    assert claims is not None
    return claims[0]


# --- parsing ------------------------------------------------------------------------


def test_block_is_taken_out_and_parsed() -> None:
    text = report(
        [
            item(supporters=["contrarian", "contrarian", "synthesizer"]),
            item(claim="Costs  rise\nslowly", proposer="contrarian", round=2, research=True),
        ]
    )
    rest, claims = parse_claims_block(text, roster=ROSTER)
    assert rest == "## Verdict\n\nMigrate.\n"
    assert claims == [
        Claim(
            "Migrating halves the on-call load",
            "synthesizer",
            1,
            supporters=("contrarian", "synthesizer"),
        ),
        Claim("Costs rise slowly", "contrarian", 2, research=True),
    ]


def test_no_block_returns_none_and_the_text_unchanged() -> None:
    text = "## Verdict\n\n```json\n[]\n```\n"
    assert parse_claims_block(text) == (text, None)


def test_a_claims_block_quoted_inside_longer_code_is_not_the_block() -> None:
    text = "Example:\n\n````md\n```claims\n[]\n```\n````\n"
    assert parse_claims_block(text) == (text, None)


def test_an_empty_array_is_no_claims() -> None:
    assert parse_claims_block(report([])) == ("## Verdict\n\nMigrate.\n", [])


def test_roster_slugs_match_without_regard_to_case() -> None:
    _, claims = parse_claims_block(report([item(proposer="Contrarian")]), roster=ROSTER)
    assert claims is not None
    assert claims[0].proposer == "contrarian"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (report([]) + report([]), "2 claims blocks"),
        ("```claims\n[{]\n```\n", "not valid JSON: Expecting property name"),
        ("```claims\n{}\n```\n", "must hold a JSON array, not an object"),
        (report(["x"]), "claim 1: must be a JSON object, not a string"),
        (report([item(), {"claim": "x"}]), "claim 2: missing field 'proposer', 'round'"),
        (report([item(note="x")]), "claim 1: unknown field 'note'"),
        (report([item(claim="  ")]), "claim 1: field 'claim' must be a non-empty string"),
        (report([item(round="2")]), "claim 1: field 'round' must be a whole number"),
        (report([item(round=0)]), "at least 1, got 0"),
        (report([item(round=True)]), "got true"),
        (report([item(retracted="no")]), "field 'retracted' must be true or false"),
        (report([item(research=1)]), "field 'research' must be false, true or an array"),
        (report([item(research=["ok", 3])]), "array of research note ids"),
        (report([item(supporters="contrarian")]), "'supporters' must be an array"),
        (report([item(challengers=[""])]), "'challengers' item 1 must be a persona slug"),
        (report([item(proposer=None)]), "field 'proposer' must be a persona slug, got null"),
        (report([item(challengers=["synthesizer"])]), "both the proposer and a challenger"),
        (
            report([item(supporters=["contrarian"], challengers=["contrarian"])]),
            "'contrarian' both supports and challenges",
        ),
    ],
)
def test_malformed_blocks_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(FormatError, match=re.escape(message)):
        parse_claims_block(text)


def test_unknown_personas_are_refused_with_a_roster() -> None:
    text = report([item(), item(challengers=["contrarian", "opus"])])
    with pytest.raises(FormatError) as caught:
        parse_claims_block(text, roster=ROSTER)
    assert str(caught.value) == (
        "claim 2: field 'challengers' item 2: 'opus' is not a persona of this debate "
        "(synthesizer, epistemologist, contrarian, systems-thinker)"
    )
    assert parse_claims_block(text)[1] is not None  # without a roster any slug goes


# --- labels -------------------------------------------------------------------------


def test_retracted_claims_are_dropped_whatever_else_holds() -> None:
    assert label_claim(claim(retracted=True, challengers=["contrarian"])) is ClaimLabel.DROPPED
    assert label_claim(claim(retracted=True, research=True)) is ClaimLabel.DROPPED


def test_one_challenger_makes_a_claim_disputed() -> None:
    disputed = claim(supporters=["contrarian", "epistemologist"], challengers=["systems-thinker"])
    assert label_claim(disputed) is ClaimLabel.DISPUTED
    assert label_claim(claim(research=True, challengers=["contrarian"])) is ClaimLabel.DISPUTED
    (labeled,) = label_claims([disputed])
    assert labeled.dissenters == ("systems-thinker",)


def test_two_supporters_or_a_research_note_verify_an_unchallenged_claim() -> None:
    assert label_claim(claim(supporters=["contrarian"])) is ClaimLabel.VERIFIED
    assert label_claim(claim(research=True)) is ClaimLabel.VERIFIED


def test_the_proposer_alone_leaves_a_claim_unverified() -> None:
    assert label_claim(claim()) is ClaimLabel.UNVERIFIED
    alone = claim(supporters=["synthesizer"])
    assert label_claim(alone) is ClaimLabel.UNVERIFIED
    assert label_claims([alone])[0].support == ("synthesizer",)


# --- dissent ------------------------------------------------------------------------


def claims_challenged_by(persona: str, challenged: int, total: int) -> list[Claim]:
    return [
        Claim(f"claim {n}", "synthesizer", 1, challengers=(persona,) if n < challenged else ())
        for n in range(total)
    ]


def test_dissent_on_exactly_40_percent_raises_no_flag() -> None:
    labeled = label_claims(claims_challenged_by("contrarian", 2, 5))
    assert dissent_flags(labeled, ROSTER) == []


def test_dissent_on_more_than_40_percent_raises_a_flag() -> None:
    labeled = label_claims(claims_challenged_by("contrarian", 3, 5))
    assert dissent_flags(labeled, ROSTER) == [DissentFlag("contrarian", 0.6, 3, 5)]
    assert dissent_flags(labeled, ROSTER)[0].message == "contrarian dissents on 3 of 5 claims (60%)"


def test_dropped_claims_do_not_count_towards_dissent() -> None:
    claims = [
        *claims_challenged_by("contrarian", 2, 5),
        Claim("withdrawn", "epistemologist", 1, challengers=("contrarian",), retracted=True),
    ]
    assert dissent_flags(label_claims(claims), ROSTER) == []


def test_threshold_is_an_option_and_no_claims_means_no_flags() -> None:
    labeled = label_claims(claims_challenged_by("outsider", 1, 3))
    assert dissent_flags(labeled, ROSTER, threshold=0.3) == [DissentFlag("outsider", 1 / 3, 1, 3)]
    assert dissent_flags([], ROSTER) == []


# --- claims.json and the ledger -----------------------------------------------------


def sample() -> tuple[list[Claim], list[DissentFlag]]:
    claims = [
        Claim("p99 | latency rises", "contrarian", 2, supporters=("contrarian", "synthesizer")),
        Claim("Costs fall", "synthesizer", 1, challengers=("contrarian", "systems-thinker")),
        Claim("Old idea", "epistemologist", 1, retracted=True),
        Claim("Vendor lock-in is low", "systems-thinker", 2, research=True),
    ]
    flags = dissent_flags(label_claims(claims), ROSTER, threshold=0.3)
    return claims, flags


def test_claims_json_has_stable_keys_and_ids() -> None:
    claims, flags = sample()
    data = claims_to_json(label_claims(claims), flags)
    assert list(data) == ["claims", "dropped", "flags"]
    first = data["claims"][0]
    assert list(first) == [
        "id",
        "claim",
        "proposer",
        "round",
        "supporters",
        "challengers",
        "label",
        "research",
        "notes",
        "attachments",
        "basis",
    ]
    assert first["supporters"] == ["synthesizer"]
    assert first["basis"] == "agreement of 2 personas"
    assert [(c["id"], c["label"]) for c in data["claims"]] == [
        ("C1", "VERIFIED"),
        ("C2", "DISPUTED"),
        ("C3", "VERIFIED"),
    ]
    assert [(c["id"], c["label"]) for c in data["dropped"]] == [("D1", "DROPPED")]
    assert data["flags"] == [
        {"persona": "contrarian", "share": 0.3333, "claims_challenged": 1, "total": 3},
        {"persona": "systems-thinker", "share": 0.3333, "claims_challenged": 1, "total": 3},
    ]
    json.dumps(data)  # plain JSON types only


def test_ledger_markdown() -> None:
    claims, flags = sample()
    assert render_claims_ledger(label_claims(claims), flags) == (
        "## Claims ledger\n"
        "\n"
        "| # | Claim | Status | Proposed by | Challenged by |\n"
        "|---|---|---|---|---|\n"
        "| C1 | p99 \\| latency rises | VERIFIED (agreement of 2 personas) | contrarian R2 | — |\n"
        "| C2 | Costs fall | DISPUTED | synthesizer R1 | contrarian, systems-thinker |\n"
        "| C3 | Vendor lock-in is low | VERIFIED (research) | systems-thinker R2 | — |\n"
        "\n"
        "Dropped, retracted by their proposer:\n"
        "- D1: Old idea (epistemologist R1)\n"
        "\n"
        "- **Dissent flag:** contrarian dissents on 1 of 3 claims (33.3%)\n"
        "- **Dissent flag:** systems-thinker dissents on 1 of 3 claims (33.3%)\n"
    )


def test_ledger_without_claims() -> None:
    assert render_claims_ledger([], []) == "## Claims ledger\n\n_No claims were recorded._\n"


# --- properties ---------------------------------------------------------------------

PROPERTY = settings(max_examples=200, deadline=None)


@st.composite
def claim_item(draw: st.DrawFn) -> dict[str, object]:
    """A valid block item: nobody both supports and challenges, the proposer never challenges."""
    challengers = draw(st.lists(st.sampled_from(ROSTER), max_size=4))
    others = [slug for slug in ROSTER if slug not in challengers]
    proposer = draw(st.sampled_from(others)) if others else None
    if proposer is None:
        challengers, proposer = challengers[1:], challengers[0]
        challengers = [slug for slug in challengers if slug != proposer]
        others = [proposer]
    fields: dict[str, object] = {
        "claim": draw(st.text(min_size=1, max_size=20).filter(str.strip)),
        "proposer": proposer,
        "round": draw(st.integers(1, 10)),
        "supporters": draw(st.lists(st.sampled_from(others), max_size=4)),
        "challengers": challengers,
        "retracted": draw(st.booleans()),
    }
    if draw(st.booleans()):
        fields["research"] = draw(st.booleans())
    return fields


claim_items = claim_item()


@PROPERTY
@given(st.lists(claim_items, max_size=6), st.text(max_size=80))
def test_parsed_claims_keep_what_the_block_said(
    items: list[dict[str, object]], before: str
) -> None:
    prose = before.replace("`", "").replace("~", "")
    _, claims = parse_claims_block(report(items, before=f"Report.\n\n{prose}\n"))
    assert claims is not None
    assert len(claims) == len(items)
    for parsed, raw in zip(claims, items, strict=True):
        assert parsed.proposer == raw["proposer"]
        assert parsed.round == raw["round"]
        assert parsed.challengers == tuple(dict.fromkeys(cast(list[str], raw["challengers"])))
        assert parsed.retracted is raw["retracted"]


@PROPERTY
@given(st.lists(claim_items, max_size=6))
def test_labels_follow_the_rules(items: list[dict[str, object]]) -> None:
    _, claims = parse_claims_block(report(items), roster=ROSTER)
    assert claims is not None
    for labeled in label_claims(claims):
        c = labeled.claim
        if c.retracted:
            assert labeled.label is ClaimLabel.DROPPED
        elif c.challengers:
            assert labeled.label is ClaimLabel.DISPUTED
        elif len({c.proposer, *c.supporters}) >= 2 or c.research:
            assert labeled.label is ClaimLabel.VERIFIED
        else:
            assert labeled.label is ClaimLabel.UNVERIFIED


@PROPERTY
@given(st.lists(claim_items, max_size=6), st.floats(0, 1))
def test_flags_are_exactly_the_personas_over_the_threshold(
    items: list[dict[str, object]], threshold: float
) -> None:
    _, claims = parse_claims_block(report(items), roster=ROSTER)
    assert claims is not None
    labeled = label_claims(claims)
    kept = [c for c in labeled if c.label is not ClaimLabel.DROPPED]
    flagged = {flag.persona for flag in dissent_flags(labeled, ROSTER, threshold)}
    for persona in ROSTER:
        challenged = sum(persona in c.dissenters for c in kept)
        assert (persona in flagged) == bool(kept and challenged / len(kept) > threshold)


@PROPERTY
@given(st.lists(st.text(max_size=30).filter(str.strip), min_size=1, max_size=5))
def test_every_ledger_row_has_five_cells(texts: list[str]) -> None:
    claims = [Claim(text, "contrarian", 1, challengers=("synthesizer",)) for text in texts]
    lines = render_claims_ledger(label_claims(claims), []).splitlines()
    rows = [line for line in lines if line.startswith("| C")]
    assert len(rows) == len(texts)
    for row in rows:
        assert unescaped_pipes(row) == 6  # 5 cells


def unescaped_pipes(row: str) -> int:
    """Pipes that split a GFM table row: a backslash escapes the character after it."""
    return sum(match.group() == "|" for match in re.finditer(r"\\.|\|", row))


def test_a_backslash_before_a_pipe_cannot_unescape_it() -> None:
    claims = [Claim("path C:\\|x", "contrarian", 1)]
    row = render_claims_ledger(label_claims(claims), []).splitlines()[4]
    assert row.startswith("| C1 | path C:\\\\\\|x | UNVERIFIED |")
    assert unescaped_pipes(row) == 6


# --- research notes ---------------------------------------------------------------


def test_research_may_name_the_notes_that_back_a_claim() -> None:
    cited = claim(research=["contrarian/pg-limits", "contrarian/pg-limits", " a/b "])
    assert cited.notes == ("contrarian/pg-limits", "a/b")
    assert cited.research is True
    assert claim(research=[]).research is False


def test_only_notes_that_exist_back_a_claim() -> None:
    claims = [
        claim(research=["Contrarian/PG-limits", "contrarian/made-up"]),
        claim(research=["contrarian/made-up"]),
        claim(research=True),
    ]
    resolved = resolve_research(claims, ["contrarian/pg-limits", "synthesizer/costs"])
    assert [(c.research, c.notes) for c in resolved] == [
        (True, ("contrarian/pg-limits",)),
        (False, ()),
        (False, ()),
    ]
    assert [label_claim(c) for c in resolved] == [
        ClaimLabel.VERIFIED,
        ClaimLabel.UNVERIFIED,
        ClaimLabel.UNVERIFIED,
    ]


def test_the_ledger_cites_the_note_behind_a_verified_claim() -> None:
    backed = resolve_research([claim(research=["contrarian/pg-limits"])], ["contrarian/pg-limits"])
    ledger = render_claims_ledger(label_claims(backed), [])
    assert "| VERIFIED (research: contrarian/pg-limits) |" in ledger
    data = claims_to_json(label_claims(backed), [])
    assert data["claims"][0]["notes"] == ["contrarian/pg-limits"]


def test_every_verified_label_states_its_basis() -> None:
    families = {"contrarian": "gpt", "synthesizer": "gpt", "epistemologist": "claude"}
    same_family = claim(supporters=["contrarian"])
    mixed = claim(proposer="epistemologist", supporters=["contrarian"])
    attached = resolve_attachments(
        [claim(attachments=["Design.md", "gone.md"])], ["design.md", "schema.sql"]
    )
    labeled = label_claims([same_family, mixed, *attached])
    assert [basis(item, families) for item in labeled] == [
        "agreement of 2 personas, all of one model family (gpt)",
        "agreement of 2 personas",
        "attachment: design.md",
    ]
    ledger = render_claims_ledger(labeled, [], families)
    assert "| VERIFIED (agreement of 2 personas, all of one model family (gpt)) |" in ledger
    assert "| VERIFIED (attachment: design.md) |" in ledger
    # Without the families known, agreement is stated without a family.
    assert basis(labeled[0]) == "agreement of 2 personas"
    # A claim only the proposer backs, with no note or file, is not verified and has no basis.
    assert basis(label_claims(resolve_attachments([claim(attachments=["gone.md"])], []))[0]) == ""


def test_the_attachments_field_is_an_array_of_names() -> None:
    block = (
        '```claims\n[{"claim": "x", "proposer": "synthesizer", "round": 1, "supporters": [], '
        '"challengers": [], "retracted": false, "attachments": "design.md"}]\n```\n'
    )
    with pytest.raises(FormatError) as caught:
        parse_claims_block(block)
    assert "field 'attachments' must be an array of attached file names" in str(caught.value)
