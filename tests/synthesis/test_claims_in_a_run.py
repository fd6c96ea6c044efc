"""The claims ledger in a real run: the synthesizer reports claims, the engine labels them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stub_server import StubServer

from dreamcontext_council.engine.providers.scripted import synthesis_answer
from dreamcontext_council.folder import frontmatter_io

from .chamber import Chamber, with_claims
from .council_cli import Council, h2_titles, openai_env, roster_file, section
from .reading import messages, phase_of, synthesis_calls

TOPIC = "Should we migrate the session store from Redis to Postgres?"
SLUGS = ["alpha", "beta", "gamma", "delta"]
REQUIRED_ORDER = [
    "Verdict",
    "Decision card",
    "Why",
    "Claims ledger",
    "Position timeline",
    "What was debated",
    "Minority view & revisit conditions",
    "Open risks",
    "Appendix: per-agent per-round summaries",
]


def claim(text: str, proposer: str, number: int, **fields: Any) -> dict[str, Any]:
    return {
        "claim": text,
        "proposer": proposer,
        "round": number,
        "supporters": fields.get("supporters", []),
        "challengers": fields.get("challengers", []),
        "retracted": fields.get("retracted", False),
        "research": fields.get("research", False),
    }


# delta challenges 3 of the 6 claims that stand (50%, flagged); gamma 1 of 6, since the
# claim it also challenged was retracted; beta 1 of 6.
CLAIMS = [
    claim("Postgres carries the session load.", "alpha", 1, supporters=["beta"],
          challengers=["delta", "gamma"]),
    claim("A two-week dual write covers every live session.", "beta", 2,
          supporters=["alpha", "gamma"]),
    claim("Failover was measured at 4 seconds.", "gamma", 1, research=True),  # names no note
    claim("Redis costs grow with every region.", "alpha", 2, challengers=["delta"]),
    claim("The team already runs Postgres.", "beta", 1),
    claim("Rollback | is cheap.", "alpha", 1, challengers=["delta", "beta"]),
    claim("Vendor lock-in decides it.", "delta", 1, challengers=["gamma"], retracted=True),
]  # fmt: skip


def synthesizer(*answers: list[dict[str, Any]] | str | None) -> Any:
    """A synthesizer answering its n-th request with the n-th of `answers` (claims or raw text)."""

    def answer(task: dict[str, Any], earlier: int) -> str:
        chosen = answers[min(earlier, len(answers) - 1)]
        report = synthesis_answer(task)
        return chosen if isinstance(chosen, str) else with_claims(report, chosen)

    return answer


def run(council: Council, stub: StubServer, tmp_path: Path) -> str:
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, "openai:gpt-stub"))
    result = council(
        "run", "--topic", TOPIC, "--options", "A=Migrate now,B=Stay on Redis",
        "--personas", roster, "--rounds", "1", "--quiet", env=openai_env(stub.openai_url),
    )  # fmt: skip
    assert result.code == 0, result.err
    [debate_id] = council.ids()
    return debate_id


def report_body(council: Council, debate_id: str) -> str:
    return frontmatter_io.parse(council.text(debate_id, "final-report.md"), "final-report.md")[1]


def test_the_engine_labels_the_claims_and_flags_dissent(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    chamber.synthesis = synthesizer(CLAIMS)
    debate_id = run(council, stub, tmp_path)

    assert [phase_of(r) for r in synthesis_calls(stub.requests)] == ["synthesis"]  # no repair
    ledger = council.json_file(debate_id, "claims.json")
    assert [(c["id"], c["claim"], c["label"]) for c in ledger["claims"]] == [
        ("C1", "Postgres carries the session load.", "DISPUTED"),
        ("C2", "A two-week dual write covers every live session.", "VERIFIED"),
        ("C3", "Failover was measured at 4 seconds.", "UNVERIFIED"),
        ("C4", "Redis costs grow with every region.", "DISPUTED"),
        ("C5", "The team already runs Postgres.", "UNVERIFIED"),
        ("C6", "Rollback | is cheap.", "DISPUTED"),
    ]
    assert (
        ledger["claims"][0] | {"supporters": ["beta"], "challengers": ["delta", "gamma"]}
        == (ledger["claims"][0])
    )
    assert [(d["id"], d["claim"]) for d in ledger["dropped"]] == [
        ("D1", "Vendor lock-in decides it.")
    ]
    assert ledger["flags"] == [
        {"persona": "delta", "share": 0.5, "claims_challenged": 3, "total": 6}
    ]

    body = report_body(council, debate_id)
    assert h2_titles(body) == REQUIRED_ORDER
    table = section(body, "Claims ledger")
    assert (
        "| C1 | Postgres carries the session load. | DISPUTED | alpha R1 | delta, gamma |" in table
    )
    assert "| C3 | Failover was measured at 4 seconds. | UNVERIFIED | gamma R1 | — |" in table
    assert "| C6 | Rollback \\| is cheap. | DISPUTED | alpha R1 | delta, beta |" in table
    assert "- D1: Vendor lock-in decides it. (delta R1)" in table
    assert "```claims" not in body
    flag = "dissent: delta dissents on 3 of 6 claims (50%)"
    assert f"> **Flag:** {flag}" in section(body, "Verdict")
    assert "gamma dissents" not in body and "beta dissents" not in body
    assert council.meta(debate_id)["flags"] == [flag]


def test_only_a_research_note_that_exists_verifies_a_claim_and_the_ledger_cites_it(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    chamber.synthesis = synthesizer(
        [
            claim(
                "Failover was measured at 4 seconds.", "gamma", 1, research=["gamma/failover-drill"]
            ),
            claim("Replicas lag under a second.", "gamma", 1, research=["gamma/made-up-note"]),
        ]
    )
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(SLUGS, "openai:gpt-stub"))
    created = council(
        "new", TOPIC, "--options", "A=Migrate now,B=Stay on Redis",
        "--personas", roster, "--rounds", "1",
    )  # fmt: skip
    assert created.code == 0, created.err
    [debate_id] = council.ids()
    added = council("research", "add", debate_id, "gamma", "failover drill", "--body", "4 s.")
    assert added.code == 0, added.err
    result = council("run", debate_id, "--quiet", env=openai_env(stub.openai_url))
    assert result.code == 0, result.err

    claims = council.json_file(debate_id, "claims.json")["claims"]
    assert [(c["label"], c["research"], c["notes"]) for c in claims] == [
        ("VERIFIED", True, ["gamma/failover-drill"]),
        ("UNVERIFIED", False, []),
    ]
    table = section(report_body(council, debate_id), "Claims ledger")
    assert "| VERIFIED (research: gamma/failover-drill) | gamma R1 |" in table
    # The synthesizer was shown the note under the id it must cite.
    [request] = synthesis_calls(stub.requests)
    assert "### gamma/failover-drill: failover drill" in messages(request)[1]


def test_a_missing_claims_block_gets_exactly_one_repair(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    chamber.synthesis = synthesizer(None, CLAIMS[:2])
    debate_id = run(council, stub, tmp_path)

    calls = synthesis_calls(stub.requests)
    assert [phase_of(r) for r in calls] == ["synthesis", "repair"]
    repair = messages(calls[1])[1]
    assert "the report has no ```claims block at the end." in repair
    # A synthesizer's repair asks for its own contract, not a persona's verdict block.
    assert "every required `##` section in the order given, then the closing ```claims" in repair
    assert "```verdict" not in repair
    assert [r["phase"] for r in council.usage(debate_id)][-2:] == ["synthesis", "repair"]
    assert [c["label"] for c in council.json_file(debate_id, "claims.json")["claims"]] == [
        "DISPUTED",
        "VERIFIED",
    ]
    assert council.meta(debate_id)["flags"] == [
        "dissent: gamma dissents on 1 of 2 claims (50%)",
        "dissent: delta dissents on 1 of 2 claims (50%)",
    ]  # roster order
    # The record shows the repair request the synthesizer read after its first prompt.
    record = council.text(debate_id, "synthesis-input.md")
    first_user = messages(calls[0])[1]
    assert first_user in record
    assert repair.removeprefix(first_user + "\n\n") in record.split("## Repair request", 1)[1]


def test_a_malformed_claims_block_is_quoted_in_the_one_repair_and_never_reaches_the_report(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    unknown = [claim("Sessions are small.", "nobody", 1)]
    chamber.synthesis = synthesizer(
        unknown, "## Verdict\n\nMigrate now (A).\n\n```claims\n[{]\n```"
    )
    debate_id = run(council, stub, tmp_path)

    calls = synthesis_calls(stub.requests)
    assert [phase_of(r) for r in calls] == ["synthesis", "repair"]  # never a third request
    repair = messages(calls[1])[1]
    assert (
        "the ```claims block is malformed: claim 1: field 'proposer': 'nobody' is not a" in repair
    )
    assert council.status(debate_id) == "complete"
    body = report_body(council, debate_id)
    # Only the Verdict was written: the engine adds what it renders from the record and marks
    # the missing Appendix (required); the suggested sections are simply absent.
    assert h2_titles(body) == [
        "Verdict",
        "Claims ledger",
        "Position timeline",
        "Appendix: per-agent per-round summaries",
    ]
    assert "_The synthesizer returned no claims block._" in section(body, "Claims ledger")
    assert "[{]" not in body and "```claims" not in body
    assert section(body, "Appendix: per-agent per-round summaries") == (
        "_The synthesizer did not write this section._"
    )
    assert council.json_file(debate_id, "claims.json") == {"claims": [], "dropped": [], "flags": []}


def test_claims_json_is_valid_json_with_stable_keys(
    council: Council, chamber: Chamber, stub: StubServer, tmp_path: Path
) -> None:
    chamber.lines = 0
    debate_id = run(council, stub, tmp_path)  # the scripted synthesizer's own claims

    text = council.text(debate_id, "claims.json")
    assert list(json.loads(text)) == ["claims", "dropped", "flags"]
    assert text.endswith("\n")
