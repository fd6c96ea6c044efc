"""A project's `_dream_context/council.toml` is committed, so someone else's input: a
`command:` model or a server URL it names is used only when the user names it on the
command line. The user's own `council.toml` (their config folder) is theirs, like a flag."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from council_run import Council
from debate_story import OPTIONS, TOPIC
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubServer

from .command_consent_support import marking_command, workspace

NEW = ("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--yes")


@pytest.fixture
def council(tmp_path: Path) -> Council:
    made = workspace(tmp_path)
    made.root.mkdir()
    return made


def project_file(council: Council, text: str) -> None:
    (council.root / "council.toml").write_text(text, encoding="utf-8")


def user_file(council: Council, text: str) -> Path:
    path = Path(council.environment()["HOME"]) / ".config" / "dreamcontext" / "council.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_a_command_in_the_project_file_does_not_run_until_named(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    project_file(council, f"model = {json.dumps('command:' + command)}\n")
    before = council.tree()

    refused = council.proc(*NEW)

    assert refused.code == 2, refused.err
    line = one_line(refused.err)
    assert "_dream_context/council.toml sets model" in line
    assert f"--allow-command {shlex.quote(command)}" in line
    assert not marker.exists()
    assert council.tree() == before  # no debate was made

    allowed = council.proc(*NEW, "--allow-command", command)

    assert allowed.code == 0, allowed.err
    assert marker.exists()
    debate_id = allowed.last_line
    assert council.meta(debate_id)["run"]["model"] == f"command:{command}"
    marker.unlink()
    # The debate made with the user's allowance resumes without asking again.
    resumed = council.proc("run", debate_id, "--yes", "--resynthesize")
    assert resumed.code == 0, resumed.err


def test_a_command_in_the_project_file_for_a_seat_that_follows_is_refused_too(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    project_file(council, f"synth_model = {json.dumps('command:' + command)}\n")

    refused = council.proc(*NEW, "--dry-run")

    assert refused.code == 2, refused.err
    assert "sets synth_model" in refused.out + refused.err
    assert not marker.exists()


def test_the_project_files_server_url_gets_no_key_until_named(council: Council) -> None:
    received: list[str] = []

    def responder(request_json: dict[str, object]) -> str:
        received.append(json.dumps(request_json))
        return "{}"

    with StubServer(responder=responder) as stub:
        url = stub.openai_url
        project_file(council, f'base_url = "{url}"\nmodel = "openai:gpt-4o"\n')
        refused = council.proc(*NEW, env={"OPENAI_API_KEY": "sk-test-their-key-1234"})

    assert refused.code == 2, refused.err
    line = one_line(refused.err)
    assert f"--base-url {url}" in line
    assert "sk-test" not in line
    assert received == []
    assert council.ids() == []


def test_the_users_own_file_is_trusted_like_a_flag(council: Council, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = marking_command(tmp_path, marker)
    user_file(council, f"model = {json.dumps('command:' + command)}\n")

    ran = council.proc(*NEW)

    assert ran.code == 0, ran.err
    assert marker.exists()
    marker.unlink()
    resumed = council.proc("run", ran.last_line, "--yes", "--resynthesize")
    assert resumed.code == 0, resumed.err  # its command was allowed for the debate it made


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('api_key = "sk-ant-secret-value-123"', "`api_key` looks like a key"),
        ('OPENAI_API_KEY = "sk-secret-value-123"', "`OPENAI_API_KEY` looks like a key"),
        ('base_url = "http://me:sk-secret-value-123@127.0.0.1:9/v1"', "base_url carries"),
        ('model = "sk-secret-value-123"', "model is not a model"),
    ],
)
def test_keys_never_live_in_a_defaults_file(council: Council, line: str, said: str) -> None:
    project_file(council, line + "\n")

    refused = council.proc(*NEW, "--dry-run")

    assert refused.code == 2, refused.err
    shown = one_line(refused.err)
    assert "_dream_context/council.toml: " in shown
    assert said in shown
    assert "secret-value" not in refused.out + refused.err
