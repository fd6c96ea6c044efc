"""The pre-flight asks each server for its models list, once, before `run` makes a folder:
a refused key stops the run in one line that names the variable holding it (never its
value), instead of every persona failing after its retries. `run` is a real process; the
real `anthropic` and `openai` SDKs call the stub server."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from council_run import roster_file, scripted_responder
from stub_server import StubResponse, StubServer

from .support import OPTIONS, TOPIC, Council

KEY = "sk-placeholder-never-shown-0123456789"


def workspace_tree(council: Council) -> dict[str, bytes]:
    """Every file under the working directory with its bytes."""
    return {
        str(p.relative_to(council.workdir)): p.read_bytes()
        for p in sorted(council.workdir.rglob("*"))
        if p.is_file()
    }


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    [line] = lines
    assert KEY not in line
    return line


# Each case: the models list's status, the model flags, the environment, words of the line.
CASES = {
    "anthropic key refused": (
        401,
        ["--model", "sonnet"],
        {"ANTHROPIC_API_KEY": KEY},
        ["refused the key in ANTHROPIC_API_KEY (401: invalid x-api-key)", "valid key"],
    ),
    "anthropic key denied": (
        403,
        ["--model", "anthropic:claude-haiku-4-5"],
        {"ANTHROPIC_API_KEY": KEY},
        ["denied the key in ANTHROPIC_API_KEY (403: stub refusal)"],
    ),
    "openai key refused": (
        401,
        ["--model", "openai:gpt-4o-mini"],
        {"OPENAI_API_KEY": KEY},
        ["refused the key in OPENAI_API_KEY (401", "set OPENAI_API_KEY to a valid key"],
    ),
    "a local server asks for a key": (
        401,
        ["--model", "openai:llama3.1"],
        {},
        ["asks for a key (401", "set OPENAI_API_KEY"],
    ),
}


def _environment(stub: StubServer, env: dict[str, str]) -> dict[str, str]:
    """Both SDKs sent to the stub: the Anthropic one by its variable, the OpenAI one too."""
    return {"ANTHROPIC_BASE_URL": stub.url, "OPENAI_BASE_URL": stub.openai_url, **env}


@pytest.mark.parametrize("case", list(CASES))
def test_a_refused_key_stops_the_run_before_a_folder_is_made(council: Council, case: str) -> None:
    status, flags, env, words = CASES[case]
    before = workspace_tree(council)
    with StubServer(models_status=status) as stub:
        result = council.proc(
            "run", "--topic", TOPIC, "--options", OPTIONS, *flags, env=_environment(stub, env)
        )
        lists, calls = len(stub.model_lists), len(stub.requests)

    assert result.code == 2, result.err
    line = one_line(result.err)
    for word in words:
        assert word in line, (word, line)
    assert line.startswith("Error: Cannot run: personas synthesizer, epistemologist")
    assert "127.0.0.1" in line and line.endswith("Nothing was written.")
    assert (lists, calls) == (1, 0)  # one request for the server, no call of a persona
    assert not council.root.exists()
    assert workspace_tree(council) == before


def test_a_dry_run_names_the_refused_key(council: Council) -> None:
    with StubServer(models_status=401) as stub:
        result = council.proc(
            "run",
            "--topic",
            TOPIC,
            "--options",
            OPTIONS,
            "--model",
            "openai:gpt-4o-mini",
            "--dry-run",
            env=_environment(stub, {"OPENAI_API_KEY": KEY}),
        )

    assert result.code == 2, result.err
    [would] = [line for line in result.out.splitlines() if line.startswith("Would fail: ")]
    assert "refused the key in OPENAI_API_KEY (401" in would and KEY not in result.out
    assert not council.root.exists()


def test_a_taken_key_is_asked_once_per_server_and_the_run_goes_on(
    council: Council, tmp_path: Path
) -> None:
    """Personas on both SDKs, one on a `command:` program and one on the scripted stand-in:
    one models list per server, none for the others; the debate runs to its end."""
    roster = roster_file(
        tmp_path / "roster.json",
        {
            "risk-auditor": "anthropic:claude-haiku-4-5",
            "growth-cfo": "openai:gpt-4o-mini",
            "contrarian": "scripted",
            "systems-thinker": "openai:gpt-4o",
        },
    )
    with StubServer(responder=scripted_responder) as stub:
        env = _environment(stub, {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY})
        result = council.proc(
            "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", roster,
            "--rounds", "2", "--synth-model", "scripted", "--check-model", "scripted",
            env=env,
        )  # fmt: skip
        agents = sorted(r.headers.get("user-agent", "").split("/")[0] for r in stub.model_lists)

    assert result.code == 0, result.err
    assert agents == ["AsyncAnthropic", "AsyncOpenAI"]  # one list per server, both SDKs
    assert "is complete" in result.out


def test_no_request_for_scripted_or_command_models(council: Council, echo_command: str) -> None:
    with StubServer() as stub:
        env = _environment(stub, {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY})
        for model in ("scripted", echo_command):
            result = council.proc(
                "run", "--topic", TOPIC, "--options", OPTIONS, "--model", model,
                "--rounds", "1", "--dry-run", env=env,
            )  # fmt: skip
            assert result.code == 0, result.err

    assert stub.model_lists == [] and stub.requests == []


def test_a_key_without_the_scope_to_list_models_is_let_through(council: Council) -> None:
    """OpenAI's restricted keys may call models but not list them: their 403 names a scope."""
    with StubServer(
        responder=scripted_responder,
        models_status=403,
        models_message="Missing scopes: api.model.read",
    ) as stub:
        result = council.proc(
            "run", "--topic", TOPIC, "--options", OPTIONS, "--model", "openai:gpt-4o-mini",
            "--rounds", "1", env=_environment(stub, {"OPENAI_API_KEY": KEY}),
        )  # fmt: skip

    assert result.code == 0, result.err
    assert len(stub.model_lists) == 1


@pytest.mark.parametrize("status", [401, 403])
def test_a_call_refused_401_or_403_is_never_retried(council: Council, status: int) -> None:
    """The models list takes the key; every persona's call is refused: one request each,
    whatever `--retries` allows."""
    with StubServer(responder=lambda _r: StubResponse.error(status, "refused")) as stub:
        result = council.proc(
            "run", "--topic", TOPIC, "--options", OPTIONS, "--model", "openai:gpt-4o-mini",
            "--retries", "4", env=_environment(stub, {"OPENAI_API_KEY": KEY}),
        )  # fmt: skip
        calls = len(stub.requests)

    assert result.code == 4, result.err
    assert calls == 4  # the four personas of round 1, once each
    assert "retry" not in result.err
    assert KEY not in result.err + result.out


def test_a_server_out_of_reach_stops_the_run_too(council: Council) -> None:
    """No base URL: the calls would go to api.anthropic.com, here through a proxy that
    refuses every connection (the test never leaves the machine)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the block ends: nothing listens there
    env = {"ANTHROPIC_API_KEY": KEY, "HTTPS_PROXY": f"http://127.0.0.1:{port}"}

    result = council.proc(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--model", "sonnet", env=env
    )

    assert result.code == 2, result.err
    line = one_line(result.err)
    assert "(model sonnet): cannot reach https://api.anthropic.com (" in line
    assert "check the network and proxy settings, or set ANTHROPIC_BASE_URL" in line
    assert not council.root.exists()
