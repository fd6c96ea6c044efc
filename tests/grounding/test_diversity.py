"""Model diversity: how many providers and model families sit on a council, on the board
(`--plain` and `--json`) and in the final report's Verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from stub_server import StubServer

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.protocol.synthesis import Synthesizer
from dreamcontext_council.engine.providers.scripted import synthesis_answer
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.diversity import diversity, family_of, provider_of

from .conftest import STUB_ENV, Council, roster_file, stub_args

WEAK = "one family, so agreement is weak evidence"


@pytest.mark.parametrize(
    ("model", "provider", "family"),
    [
        ("opus", "anthropic", "claude"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude"),
        ("claude-haiku-4-5", "anthropic", "claude"),
        ("openai:gpt-4o-mini", "openai", "gpt"),
        ("openai:o3-mini", "openai", "gpt"),
        ("openai:llama3.1", "openai", "llama"),  # a llama, wherever it is served
        ("command:claude -p", "command", "claude"),
        ("command:ollama run qwen2.5", "command", "qwen"),  # ollama is not a llama
        ("command:/usr/bin/python3 /opt/models/ask.py --fast", "command", "ask.py"),
        ("scripted", "scripted", "scripted"),
        ("scripted:", "scripted", "scripted"),
        ("openai:stub-model", "openai", "stub-model"),
    ],
)
def test_provider_and_family_of_a_model_string(model: str, provider: str, family: str) -> None:
    assert (provider_of(model), family_of(model)) == (provider, family)


def test_the_line_counts_providers_and_families() -> None:
    assert diversity(["opus", "openai:gpt-4o", "openai:llama3.1"]).line() == (
        "2 providers · 3 model families (claude, gpt, llama)"
    )
    assert diversity(["opus", "command:claude -p"]).line() == (
        f"2 providers · 1 model family (claude); {WEAK}"
    )
    assert diversity(["scripted", "scripted"]).line() == (
        f"1 provider · 1 model family (scripted); {WEAK}"
    )
    # A persona without a model is not counted, and a single family is not claimed over it.
    assert diversity(["opus", "unspecified"]).line() == (
        "1 provider · 1 model family (claude); 1 persona with no model recorded"
    )
    assert diversity(["unspecified", ""]).line() == "no model recorded for any persona"


def test_a_person_is_no_provider_and_no_family() -> None:
    mixed = diversity(["opus", "human", "openai:gpt-4o"])
    assert mixed.line() == "2 providers · 2 model families (claude, gpt); 1 person"
    assert (mixed.providers, mixed.families, mixed.people) == (
        ("anthropic", "openai"),
        ("claude", "gpt"),
        1,
    )
    # One family and people beside it is still one family.
    one = diversity(["opus", "Human", "command:claude -p", " human "])
    assert one.single_family is True
    assert one.line() == f"2 providers · 1 model family (claude); 2 people; {WEAK}"
    assert one.to_json()["person_count"] == 2 and one.to_json()["family_count"] == 1
    assert diversity(["human", "human"]).line() == "no model on the council; 2 people"
    assert diversity(["human"]).single_family is False
    assert diversity(["human", "unspecified"]).line() == (
        "no model on the council; 1 persona with no model recorded; 1 person"
    )


def test_a_council_of_one_family_and_a_person_says_one_family(council: Council) -> None:
    debate_id = council.new("Should we migrate the session store to Postgres?")
    for slug, model in [("risk-auditor", "opus"), ("owner", "human"), ("cfo", "claude-haiku-4-5")]:
        made = council("agent", "create", debate_id, slug, "--model", model, "--body", "You judge.")
        assert made.code == 0, made.err

    line, models = board(council, debate_id)

    assert "1 provider · 1 model family (claude); 1 person; one family" in line  # wrapped
    assert models["line"] == f"1 provider · 1 model family (claude); 1 person; {WEAK}"
    assert models["single_family"] is True
    assert models["person_count"] == 1 and models["people"] == ["owner"]
    assert models["personas"]["owner"] == "human"
    assert f"1 provider · 1 model family (claude); 1 person; {WEAK}" in dashboard_header(
        council, debate_id
    )


def board(council: Council, debate_id: str) -> tuple[str, dict[str, Any]]:
    plain = council("board", debate_id, "--plain")
    data = council("board", debate_id, "--json")
    assert plain.code == 0 and data.code == 0, plain.err + data.err
    models_lines = [line for line in plain.out.splitlines() if "MODELS" in line]
    assert len(models_lines) == 1
    return models_lines[0], json.loads(data.out)["models"]


def verdict_diversity(council: Council, debate_id: str) -> list[str]:
    report = council.text(debate_id, "final-report.md")
    verdict = report.split("## Verdict\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in verdict.splitlines() if line.startswith("Model diversity:")]


def test_a_mixed_council_counts_each_provider_and_family(
    council: Council, stub: StubServer, echo_command: str, tmp_path: Path
) -> None:
    roster = roster_file(
        tmp_path / "mixed.json",
        {
            "risk-auditor": "scripted",
            "platform-lead": "openai:gpt-4o-mini",
            "data-steward": echo_command,
        },
    )

    result = council(
        "run", "--topic", "Should we migrate the session store to Postgres?",
        "--options", "A=Migrate now,B=Stay on Redis", "--personas", roster, "--rounds", "1",
        *stub_args(stub, "openai:gpt-4o-mini"), env=STUB_ENV,
    )  # fmt: skip

    assert result.code == 0, result.err
    debate_id = result.last_line
    line, models = board(council, debate_id)
    expected = "3 providers · 3 model families (scripted, gpt, echo_persona.py)"
    assert line.strip("│ ").split(None, 1)[1].strip() == expected
    assert models["line"] == expected
    assert models["provider_count"] == 3 and models["family_count"] == 3
    assert models["providers"] == ["scripted", "openai", "command"]
    assert models["single_family"] is False
    assert models["personas"]["platform-lead"] == "openai:gpt-4o-mini"
    assert verdict_diversity(council, debate_id) == [f"Model diversity: {expected}."]


def test_a_single_family_council_says_so(council: Council, small_roster: str) -> None:
    result = council(
        "run", "--topic", "Should we migrate the session store to Postgres?",
        "--personas", small_roster, "--rounds", "1",
    )  # fmt: skip

    assert result.code == 0, result.err
    debate_id = result.last_line
    line, models = board(council, debate_id)
    expected = f"1 provider · 1 model family (scripted); {WEAK}"
    assert expected in line
    assert models["single_family"] is True
    assert models["families"] == ["scripted"]
    assert verdict_diversity(council, debate_id) == [f"Model diversity: {expected}."]


def test_the_verdict_names_a_person_apart_from_the_models(council: Council, tmp_path: Path) -> None:
    roster = roster_file(
        tmp_path / "three.json", {"risk-auditor": "", "platform-lead": "", "owner": ""}
    )
    result = council(
        "run", "--topic", "Should we migrate the session store to Postgres?",
        "--personas", roster, "--rounds", "1",
    )  # fmt: skip
    assert result.code == 0, result.err
    debate_id = result.last_line
    # Two seats are now people's, as `run --human owner` records it: the views and the
    # synthesis go by the recorded mark, not by who answered before.
    for slug in ("owner", "risk-auditor"):
        context = council.folder(debate_id) / slug / "context-and-persona.md"
        meta, body = frontmatter_io.parse(context.read_text(encoding="utf-8"), "context")
        context.write_text(frontmatter_io.render({**meta, "model": "human"}, body), "utf-8")
    root = Root(council.root)
    synthesizer = Synthesizer(root, DebateFiles(root, debate_id), cast(Any, None), "scripted")
    _, task = synthesizer.input_values()

    synthesizer.write(synthesizer.parse(synthesis_answer(task)), "scripted")

    expected = f"1 provider · 1 model family (scripted); 2 people; {WEAK}"
    assert verdict_diversity(council, debate_id) == [f"Model diversity: {expected}."]
    shown = council("report", "show", debate_id, "--section", "Verdict")
    assert f"Model diversity: {expected}." in shown.out
    _, models = board(council, debate_id)
    assert models["line"] == expected and models["people"] == ["risk-auditor", "owner"]
    # Two people agreeing are not "all of one model family".
    claims = council.json_file(debate_id, "claims.json")["claims"]
    [shared] = [c for c in claims if {c["proposer"], *c["supporters"]} == {"owner", "risk-auditor"}]
    assert shared["basis"] == "agreement of 2 personas"


def test_one_family_across_providers_is_still_one_family(council: Council) -> None:
    debate_id = council.new("Should we migrate the session store to Postgres?")
    for slug, model in [
        ("risk-auditor", "anthropic:claude-sonnet-4-5"),
        ("platform-lead", "command:claude -p"),
        ("data-steward", "opus"),
    ]:
        made = council("agent", "create", debate_id, slug, "--model", model, "--body", "You judge.")
        assert made.code == 0, made.err

    line, models = board(council, debate_id)

    assert f"2 providers · 1 model family (claude); {WEAK}" in line
    assert models["single_family"] is True
    assert models["provider_count"] == 2


def test_personas_without_a_model_are_not_called_one_family(council: Council) -> None:
    debate_id = council.new("Should we migrate the session store to Postgres?")
    council("agent", "create", debate_id, "risk-auditor", "--body", "You judge risk.")

    line, models = board(council, debate_id)

    assert "no model recorded for any persona" in line
    assert models["single_family"] is False
    assert models["unknown"] == 1


def dashboard_header(council: Council, debate_id: str) -> str:
    from starlette.testclient import TestClient

    from dreamcontext_council.dashboard.app import create_app
    from dreamcontext_council.folder.paths import Root

    with TestClient(create_app(Root(council.root))) as client:
        page = client.get(f"/d/{debate_id}")
    assert page.status_code == 200
    return page.text.split('<section class="hero"', 1)[1].split("</section>", 1)[0]


def test_the_dashboard_header_shows_the_diversity(council: Council) -> None:
    one = council.new("Should we migrate the session store to Postgres?")
    two = council.new("Should we adopt Rust for the ingest service?")
    for debate_id, models in [
        (one, ["opus", "command:claude -p"]),
        (two, ["opus", "openai:gpt-4o"]),
    ]:
        for number, model in enumerate(models):
            made = council(
                "agent", "create", debate_id, f"p{number}", "--model", model, "--body", "You judge."
            )
            assert made.code == 0, made.err

    assert f"2 providers · 1 model family (claude); {WEAK}" in dashboard_header(council, one)
    mixed = dashboard_header(council, two)
    assert "2 providers · 2 model families (claude, gpt)" in mixed
    assert WEAK not in mixed
