"""The loop around a run: read the verdict, trust the limits and the exit codes.

Each command runs as a real process; calls go through the real openai SDK to the stub.
"""

from __future__ import annotations

import json
from pathlib import Path

from debate_story import OPTIONS, TOPIC
from stub_server import StubServer

from dreamcontext_council.errors import EXIT_CODES, EXIT_STOPPED, EXIT_USAGE

from .support import TEST_KEY, Council, openai_env

UNPRICED = "openai:llama3.1"


def _complete(council: Council) -> str:
    result = council.proc("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1")
    assert result.code == 0, result.err
    return result.last_line


def test_run_ends_with_the_verdict_and_show_and_report_show_state_it(council: Council) -> None:
    result = council.proc("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1")
    assert result.code == 0, result.err
    debate_id = result.last_line
    verdict = "Verdict: Migrate now (A). Confidence: medium."
    assert result.out.strip().split("\n")[-2] == verdict

    shown = council.proc("show", debate_id)
    assert "  verdict:   Migrate now (A). Confidence: medium." in shown.out.split("\n")
    data = json.loads(council.proc("show", debate_id, "--json").out)
    assert data["verdict"] == {"sentence": "Migrate now (A).", "confidence": "medium"}

    whole = council.proc("report", "show", debate_id, "--raw")
    assert whole.code == 0, whole.err
    report = (council.folder(debate_id) / "final-report.md").read_text(encoding="utf-8")
    assert whole.out.rstrip("\n") == report.rstrip("\n")
    read = council.proc("report", "show", debate_id)  # without the YAML block for tools
    assert read.out.startswith("## Verdict\n") and read.out in report
    section = council.proc("report", "show", debate_id, "--section", "verdict", "--json")
    part = json.loads(section.out)
    assert part["text"].startswith("Migrate now (A). Confidence: medium.")
    assert "## Why" not in part["text"] and "Verdict" in part["sections"]


def test_report_show_before_synthesis_says_what_to_run(council: Council) -> None:
    debate_id = council.new_debate("--rounds", "1")

    result = council.proc("report", "show", debate_id)

    assert result.code == 1
    assert result.err.strip() == (
        f"Error: {debate_id} has no final report yet (status: created); run "
        f"`dreamcontext council run {debate_id}` to finish the debate, or "
        f"`dreamcontext council show {debate_id}` to see where it stands."
    )
    assert council.proc("show", debate_id, "--json").json()["verdict"] is None


def test_export_writes_a_file_named_after_the_debate(council: Council) -> None:
    debate_id = _complete(council)
    target = council.workdir / f"{debate_id}.html"

    first = council.proc("export", debate_id, "--format", "html")

    assert first.code == 0, first.err
    assert first.out.strip().startswith(f"Wrote {target} (html, ")
    assert "<html" not in first.out  # the page went to the file, not the terminal
    assert target.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    target.write_text("stale", encoding="utf-8")
    again = council.proc("export", debate_id, "--format", "html")
    assert "replaced the earlier export" in again.out
    assert target.read_text(encoding="utf-8") != "stale"
    piped = council.proc("export", debate_id, "--format", "json", "-o", "-")
    assert json.loads(piped.out)["debate"]["id"] == debate_id
    assert not (council.workdir / f"{debate_id}.json").exists()


def test_a_budget_stop_exits_stopped_and_json_says_why(council: Council) -> None:
    result = council.proc(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--max-calls", "2", "--json"
    )

    assert result.code == EXIT_STOPPED, result.err
    data = result.json()
    assert data["stopped"] == "budget"
    assert data["reason"] == "budget: --max-calls 2 reached after 2 calls"


def test_a_provider_failure_exits_stopped_and_json_says_why(council: Council) -> None:
    with StubServer(responder=lambda _r: (401, {}, {"error": {"message": "bad key"}})) as stub:
        result = council.proc(
            "run", "--topic", TOPIC, "--options", OPTIONS, "--model", "openai:gpt-4o-mini",
            "--json", env=openai_env(stub.openai_url),
        )  # fmt: skip

    assert result.code == EXIT_STOPPED, result.err
    data = result.json()
    assert data["stopped"] == "failure" and data["id"] == council.only_id()
    assert "rejected the API key (401)" in data["reason"]
    assert TEST_KEY not in result.out + result.err


def test_an_unpriced_cost_cap_refuses_before_any_request(council: Council, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"llama3.1": [0.5, 1.5]}), encoding="utf-8")
    with StubServer() as stub:
        args = (
            "run", "--topic", TOPIC, "--options", OPTIONS, "--model", UNPRICED,
            "--base-url", stub.openai_url, "--max-cost", "0.0001",
        )  # fmt: skip
        refused = council.proc(*args)
        dry = council.proc(*args, "--dry-run")
        requests = list(stub.requests)
        priced = council.proc(*args, "--prices", str(prices), "--dry-run")

    assert requests == []
    assert refused.code == EXIT_USAGE
    line = refused.err.strip()
    assert "\n" not in line
    assert line.startswith("Error: Cannot run: --max-cost $0.0001 cannot be enforced")
    assert 'Pass --prices FILE, a JSON table like {"llama3.1": [0.5, 1.5]}' in line
    assert "--max-calls N" in line
    assert not council.root.exists() or not list((council.root / "council").glob("council_*"))
    assert dry.code == EXIT_USAGE
    assert "Would fail: Cannot run: --max-cost $0.0001 cannot be enforced" in dry.out
    # With its price known, the same cap is enforced and the run may start.
    assert priced.code == 0, priced.out + priced.err
    assert "Would fail" not in priced.out


def test_a_base_url_without_a_model_asks_for_one(council: Council) -> None:
    with StubServer() as stub:
        env = {"OPENAI_BASE_URL": stub.openai_url}
        refused = council.proc("run", "--topic", TOPIC, "--options", OPTIONS, env=env)
        quiet = council.proc("run", "--topic", TOPIC, "--quiet", env=env)
        flag = council.proc("run", "--topic", TOPIC, "--base-url", stub.openai_url)
        requests, url = list(stub.requests), stub.openai_url

    assert requests == []
    for result, source in ((refused, "OPENAI_BASE_URL"), (quiet, "OPENAI_BASE_URL")):
        assert result.code == EXIT_USAGE
        assert result.err.strip() == (
            f"Error: Cannot run: {source} is set ({url}) but no model is named, "
            "so every call would go to the built-in scripted stand-in, not to that server; "
            "pass --model openai:<model> (e.g. --model openai:llama3.1), or --model scripted "
            "to run offline. Nothing was written."
        )
    assert flag.code == EXIT_USAGE and "Cannot run: --base-url is set" in flag.err
    assert not council.root.exists() or not list((council.root / "council").glob("council_*"))
    # Naming the stand-in is a choice, and runs offline.
    named = council.proc("run", "--topic", TOPIC, "--rounds", "1", "--model", "scripted", env=env)
    assert named.code == 0, named.err


def test_every_exit_code_is_in_the_cli_reference() -> None:
    reference = (Path(__file__).resolve().parents[2] / "docs" / "cli-reference.md").read_text(
        encoding="utf-8"
    )
    assert "## Exit codes\n\n| code | meaning |" in reference
    for code, meaning in EXIT_CODES:
        assert f"| {code} | {meaning} |" in reference
