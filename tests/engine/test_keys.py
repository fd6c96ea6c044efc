"""API keys never reach a file the tool writes, nor its output, not even when a server echoes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stub_server import StubResponse, StubServer

from dreamcontext_council.errors import EXIT_STOPPED

from .support import OPTIONS, TOPIC, Council, Result, roster_file, scripted_responder

ANTHROPIC_KEY = "sk-ant-TESTKEY-9f8e7d6c5b4a"
OPENAI_KEY = "sk-proj-TESTKEY-1a2b3c4d5e6f"
MARKER = "TESTKEY"


def echoing_refusals(request_json: dict[str, Any]) -> Any:
    """Two models are refused (401, 403) with bodies that quote the keys back, as real servers do."""
    status = {"revoked-model": 401, "forbidden-model": 403}.get(request_json.get("model", ""))
    if status:
        return StubResponse.error(
            status, f"Incorrect API key provided: {ANTHROPIC_KEY} / {OPENAI_KEY}"
        )
    return scripted_responder(request_json)


def leaks(council: Council, outputs: list[Result]) -> list[str]:
    found = [
        str(path)
        for path in council.root.rglob("*")
        if path.is_file() and MARKER.encode() in path.read_bytes()
    ]
    found += [f"output of command {i}" for i, r in enumerate(outputs) if MARKER in r.out + r.err]
    return found


def test_keys_never_reach_files_or_output(
    council: Council, tmp_path: Path, echo_command: str
) -> None:
    models = {
        "claude-voice": "sonnet",
        "gpt-voice": "openai:gpt-4o-mini",
        "revoked-voice": "openai:revoked-model",
        "forbidden-voice": "openai:forbidden-model",
        "local-voice": echo_command,
    }
    roster = roster_file(tmp_path / "roster.json", models)
    outputs: list[Result] = []
    with StubServer(responder=echoing_refusals) as stub:
        env = {
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
            "ANTHROPIC_BASE_URL": stub.url,
            "OPENAI_API_KEY": OPENAI_KEY,
            "OPENAI_BASE_URL": stub.openai_url,
        }
        run = council.proc(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--personas",
            roster,
            "--rounds",
            "2",
            env=env,
        )
        outputs.append(run)
        assert run.code == 0, run.err
        debate_id = run.last_line
        # Every persona refused: the run halts with an error message that must not leak either.
        stub.responder = lambda _r: StubResponse.error(401, f"bad key {OPENAI_KEY} {ANTHROPIC_KEY}")
        halted = council.proc(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--personas",
            roster,
            "--json",
            env={**env, "OPENAI_BASE_URL": stub.openai_url},
        )
        outputs.append(halted)
        sent = {
            f"{r.api} {r.headers.get('x-api-key') or r.headers.get('authorization')}"
            for r in stub.requests
        }
    for args in (("show", debate_id), ("board", debate_id, "--json"), ("timeline", debate_id)):
        outputs.append(council.proc(*args))

    # The keys really were used, so not finding them means something.
    assert any(s.startswith("anthropic ") and s.endswith(ANTHROPIC_KEY) for s in sent)
    assert f"openai Bearer {OPENAI_KEY}" in sent
    assert halted.code == EXIT_STOPPED
    assert "rejected the API key (401)" in halted.err
    assert "Persona failed — revoked-voice" in council.log(debate_id)
    assert [r for r in council.usage(debate_id) if r["outcome"] == "failed"]
    # The 403 message quotes the server, with the keys taken out.
    assert "Incorrect API key provided: [redacted] / [redacted]" in council.log(debate_id)
    assert leaks(council, outputs) == []


def test_a_key_in_the_environment_is_not_written_by_a_command_persona_error(
    council: Council, tmp_path: Path
) -> None:
    # A program that fails and prints the environment it was given on stderr.
    script = tmp_path / "leaky.py"
    script.write_text(
        "import os, sys\nsys.stderr.write(str(dict(os.environ)))\nsys.exit(3)\n", encoding="utf-8"
    )
    models = {
        "leaky-voice": f"command:{__import__('sys').executable} {script}",
        "offline-voice": "scripted",
    }

    run = council.proc(
        "run",
        "--topic",
        TOPIC,
        "--personas",
        roster_file(tmp_path / "roster.json", models),
        "--rounds",
        "1",
        "--model",
        "scripted",
        env={"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY},
    )

    assert run.code == 0, run.err
    assert "Persona failed — leaky-voice" in council.log(run.last_line)
    assert leaks(council, [run]) == []
