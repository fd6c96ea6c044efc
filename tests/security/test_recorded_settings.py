"""What a debate folder records of its last run (`run:` in debate.md) is someone else's
choice: a model it records runs a program only with the user's consent, whatever the
setting, and a server URL it records receives the user's key only with the user's
consent, from `run <id>` and from MCP `council_start` alike."""

from __future__ import annotations

import json
import math
import shlex
import shutil
from dataclasses import fields
from pathlib import Path
from typing import get_args, get_type_hints

import anyio
import pytest
from council_run import Council, roster_file, scripted_responder
from mcp import Client
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubServer

from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.rules.limits import RUN_SPANS
from dreamcontext_council.rules.run_settings import MODEL_FIELDS, RunSettings

from .command_consent_support import marking_command, run_on_server, trust_file, workspace
from .recorded_settings_support import cloned_with_settings, hold_mcp, tool_error

USER_KEY = "sk-proj-USERSKEY-9f8e7d6c5b4a"


@pytest.fixture
def council(tmp_path: Path) -> Council:
    return workspace(tmp_path)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def trusted_text(council: Council) -> str:
    path = trust_file(council)
    return path.read_text(encoding="utf-8") if path.exists() else ""


def text_settings() -> list[str]:
    """Every `run:` setting that holds a text: each could be made to hold a model."""
    hints = get_type_hints(RunSettings)
    return [f.name for f in fields(RunSettings) if str in get_args(hints[f.name])]


# -- a recorded model runs a program only with consent, whichever setting holds it -------


def test_every_setting_named_like_a_model_is_in_the_one_list() -> None:
    assert {f.name for f in fields(RunSettings) if f.name.endswith("model")} <= set(MODEL_FIELDS)
    assert set(MODEL_FIELDS) <= set(text_settings())


@pytest.mark.parametrize("setting", text_settings())
def test_no_recorded_setting_runs_a_program_unasked(
    council: Council, tmp_path: Path, setting: str
) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    debate_id = cloned_with_settings(
        tmp_path, council, {"baseline": True, setting: f"command:{command}"}
    )
    before = council.tree()

    run = council.proc("run", debate_id, "--yes")

    assert not marker.exists(), run.err
    assert command not in trusted_text(council)
    if setting in MODEL_FIELDS:
        assert council.tree() == before
        assert run.code == 2
        line = one_line(run.err)
        assert f"`{command}`" in line and f"run.{setting}" in line
        assert f"--allow-command {shlex.quote(command)}" in line


def test_a_recorded_baseline_model_runs_only_once_allowed(council: Council, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    debate_id = cloned_with_settings(
        tmp_path, council, {"baseline": True, "baseline_model": f"command:{command}"}
    )

    refused = council.proc("run", debate_id, "--yes")

    assert refused.code == 2
    assert "run.baseline_model" in one_line(refused.err)
    assert not marker.exists()
    assert not trust_file(council).exists()

    allowed = council.proc("run", debate_id, "--yes", "--allow-command", command)

    assert allowed.code == 0, allowed.err
    assert marker.exists()
    assert (council.folder(debate_id) / "baseline.md").exists()
    trusted = json.loads(trusted_text(council))["trusted"]
    assert trusted == {str(council.folder(debate_id).resolve()): [command]}


def test_a_recorded_baseline_model_does_not_run_through_mcp(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    debate_id = cloned_with_settings(
        tmp_path, council, {"baseline": True, "baseline_model": f"command:{command}"}
    )
    before = council.tree()

    async def scenario(client: Client) -> None:
        text = tool_error(await client.call_tool("council_start", {"debate_id": debate_id}))
        assert f"`{command}`" in text and "--allow-command" in text and "\n" not in text

    hold_mcp(council, scenario)

    assert not marker.exists()
    assert council.tree() == before
    assert command not in trusted_text(council)


# -- a recorded server URL gets the user's key only with consent -------------------------


def openai_debate(tmp_path: Path, council: Council, base_url: str) -> str:
    """A cloned debate of `openai:` personas that recorded `base_url` as its server."""
    return cloned_with_settings(
        tmp_path,
        council,
        {"model": "openai:gpt-4o-mini", "base_url": base_url},
        persona_model="openai:gpt-4o-mini",
    )


def test_a_recorded_base_url_gets_no_key_until_allowed(council: Council, tmp_path: Path) -> None:
    with StubServer(responder=scripted_responder) as attacker:
        debate_id = openai_debate(tmp_path, council, attacker.openai_url)
        before = council.tree()

        refused = council.proc("run", debate_id, "--yes", env={"OPENAI_API_KEY": USER_KEY})

        assert attacker.requests == []
        assert refused.code == 2
        line = one_line(refused.err)
        assert f"`{attacker.openai_url}`" in line
        assert f"run {debate_id} --base-url {attacker.openai_url}" in line
        assert USER_KEY not in refused.err + refused.out
        assert council.tree() == before
        assert not trust_file(council).exists()

        allowed = council.proc(
            "run", debate_id, "--yes", "--base-url", attacker.openai_url, "--max-calls", "1",
            env={"OPENAI_API_KEY": USER_KEY},
        )  # fmt: skip

        assert allowed.code == EXIT_STOPPED, allowed.err
        assert len(attacker.requests) == 1
        trusted = json.loads(trust_file(council).read_text(encoding="utf-8"))
        assert trusted["base_urls"] == {
            str(council.folder(debate_id).resolve()): [attacker.openai_url]
        }

        resumed = council.proc(
            "run", debate_id, "--max-calls", "100", env={"OPENAI_API_KEY": USER_KEY}
        )

        assert resumed.code == 0, resumed.err
        assert council.status(debate_id) == "complete"


def test_an_allowed_base_url_is_allowed_for_that_folder_only(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=scripted_responder) as attacker:
        debate_id = openai_debate(tmp_path, council, attacker.openai_url)
        first = council.proc(
            "run", debate_id, "--yes", "--base-url", attacker.openai_url, "--max-calls", "1",
            env={"OPENAI_API_KEY": USER_KEY},
        )  # fmt: skip
        assert first.code == EXIT_STOPPED, first.err
        # The same folder at another path (a second clone, a copy) is another folder.
        elsewhere = workspace(tmp_path, "elsewhere")
        shutil.copytree(council.root, elsewhere.root)
        calls = len(attacker.requests)

        copy = elsewhere.proc("run", debate_id, env={"OPENAI_API_KEY": USER_KEY})

        assert copy.code == 2
        assert "--base-url" in one_line(copy.err)
        assert len(attacker.requests) == calls

        # The server URL in the user's own environment is one the user named.
        named = elsewhere.proc(
            "run", debate_id, "--max-calls", "100",
            env={"OPENAI_API_KEY": USER_KEY, "OPENAI_BASE_URL": attacker.openai_url},
        )  # fmt: skip

        assert named.code == 0, named.err
        assert elsewhere.status(debate_id) == "complete"


def test_a_new_debate_on_a_named_base_url_resumes_without_asking(
    council: Council, tmp_path: Path
) -> None:
    roster = roster_file(
        tmp_path / "roster.json",
        {"insider": "openai:gpt-4o-mini", "bystander": "openai:gpt-4o-mini"},
    )
    with StubServer(responder=scripted_responder) as server:
        paused = run_on_server(council, roster, server.openai_url, USER_KEY)
        assert paused.code == 0, paused.err
        trusted = json.loads(trust_file(council).read_text(encoding="utf-8"))
        folder = str(council.folder(paused.last_line).resolve())
        assert trusted["base_urls"] == {folder: [server.openai_url]}

        resumed = council.proc("run", paused.last_line, env={"OPENAI_API_KEY": USER_KEY})

        assert resumed.code == 0, resumed.err
        assert council.status(paused.last_line) == "complete"


def test_a_recorded_base_url_with_control_characters_is_shown_escaped(
    council: Council, tmp_path: Path
) -> None:
    debate_id = openai_debate(tmp_path, council, "http://127.0.0.1:9/v1\x1b]0;owned\x07\r")

    refused = council.proc("run", debate_id, "--yes", env={"OPENAI_API_KEY": USER_KEY})

    assert refused.code == 2
    line = one_line(refused.err)
    assert "\x1b" not in line and "\x07" not in line and "\r" not in line
    assert "`http://127.0.0.1:9/v1\\x1b]0;owned\\x07\\r`" in line


def test_a_recorded_base_url_gets_no_key_through_mcp(council: Council, tmp_path: Path) -> None:
    with StubServer(responder=scripted_responder) as attacker:
        debate_id = openai_debate(tmp_path, council, attacker.openai_url)
        before = council.tree()

        async def scenario(client: Client) -> None:
            text = tool_error(await client.call_tool("council_start", {"debate_id": debate_id}))
            assert attacker.openai_url in text and "--base-url" in text and "\n" not in text
            assert USER_KEY not in text

        hold_mcp(council, scenario, env={"OPENAI_API_KEY": USER_KEY})

        assert attacker.requests == []
        assert council.tree() == before
        assert not trust_file(council).exists()


def test_a_trust_file_from_before_server_urls_keeps_its_commands(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=scripted_responder) as server:
        debate_id = openai_debate(tmp_path, council, server.openai_url)
        folder = str(council.folder(debate_id).resolve())
        trust_file(council).parent.mkdir(parents=True)
        trust_file(council).write_text(
            json.dumps({"trusted": {folder: ["ollama run llama3.1"]}}), encoding="utf-8"
        )

        run = council.proc(
            "run", debate_id, "--yes", "--base-url", server.openai_url, "--max-calls", "1",
            env={"OPENAI_API_KEY": USER_KEY},
        )  # fmt: skip

        assert run.code == EXIT_STOPPED, run.err
        assert json.loads(trust_file(council).read_text(encoding="utf-8")) == {
            "trusted": {folder: ["ollama run llama3.1"]},
            "base_urls": {folder: [server.openai_url]},
        }


def test_the_allowance_of_a_base_url_never_holds_its_credentials(
    council: Council, tmp_path: Path
) -> None:
    with StubServer(responder=scripted_responder) as server:
        debate_id = openai_debate(tmp_path, council, server.openai_url)
        with_password = server.openai_url.replace("://", "://gateway:pw-URLSECRET-1357@")

        run = council.proc(
            "run", debate_id, "--yes", "--base-url", with_password, "--max-calls", "1",
            env={"OPENAI_API_KEY": USER_KEY},
        )  # fmt: skip

        assert run.code == EXIT_STOPPED, run.err
        trusted = json.loads(trust_file(council).read_text(encoding="utf-8"))
        assert trusted["base_urls"] == {
            str(council.folder(debate_id).resolve()): [server.openai_url]
        }


# -- a recorded limit passes the range of its flag -----------------------------------------


def out_of_range(setting: str) -> list[object]:
    """Values of `setting` its flag refuses: past its most, and no number at all."""
    span = RUN_SPANS[setting]
    values: list[object] = [int(span.most) + 1, "10^14"]
    if not span.whole:
        values += [math.inf, math.nan, -math.inf]
    return values


RECORDED_LIMITS = [(name, value) for name in RUN_SPANS for value in out_of_range(name)]


@pytest.mark.parametrize(("setting", "value"), RECORDED_LIMITS, ids=repr)
def test_a_recorded_limit_past_its_flags_range_stops_the_run(
    council: Council, tmp_path: Path, setting: str, value: object
) -> None:
    debate_id = cloned_with_settings(tmp_path, council, {setting: value})
    before = council.tree()

    run = council("run", debate_id, "--yes")

    assert run.code == 2, run.err
    line = one_line(run.err)
    flag = "--" + setting.replace("_", "-")
    assert f"run.{setting} is " in line and flag in line
    assert council.tree() == before  # no call, no record, no usage


def test_a_recorded_infinite_timeout_stops_the_run_as_a_process(
    council: Council, tmp_path: Path
) -> None:
    debate_id = cloned_with_settings(tmp_path, council, {"timeout": math.inf})
    before = council.tree()

    run = council.proc("run", debate_id, "--yes")

    assert run.code == 2
    assert "run.timeout is inf" in one_line(run.err)
    assert council.tree() == before


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--timeout", "inf"), ("--timeout", "nan"), ("--human-timeout", "nan"),
     ("--max-cost", "nan"), ("--max-answer-kb", str(10**14)), ("--window", str(10**12)),
     ("--gate", str(10**12))],
)  # fmt: skip
def test_a_flag_past_its_range_is_refused(
    council: Council, tmp_path: Path, flag: str, value: str
) -> None:
    debate_id = cloned_with_settings(tmp_path, council, {})
    before = council.tree()

    run = council("run", debate_id, "--yes", flag, value)

    assert run.code == 2, run.err
    assert flag in run.err
    assert council.tree() == before


def test_the_debate_with_a_limit_past_its_range_is_still_read(
    council: Council, tmp_path: Path
) -> None:
    debate_id = cloned_with_settings(tmp_path, council, {"timeout": math.inf})

    shown = council("show", debate_id, "--json")

    assert shown.code == 0, shown.err
    assert json.loads(shown.out)["id"] == debate_id


def test_a_recorded_limit_past_its_range_is_a_one_line_error_over_mcp(
    council: Council, tmp_path: Path
) -> None:
    debate_id = cloned_with_settings(tmp_path, council, {"human_timeout": math.nan})
    before = council.tree()

    async def scenario(client: Client) -> None:
        text = tool_error(await client.call_tool("council_start", {"debate_id": debate_id}))
        assert "run.human_timeout is nan" in text and "\n" not in text

    hold_mcp(council, scenario)

    assert council.tree() == before


def test_a_cloned_person_seat_starts_over_mcp_and_waits(council: Council, tmp_path: Path) -> None:
    debate_id = cloned_with_settings(
        tmp_path, council, {"human_timeout": 3600.0}, persona_model="human"
    )

    async def scenario(client: Client) -> None:
        with anyio.fail_after(60):  # returns once the run is under way, not when the seat answers
            started = await client.call_tool("council_start", {"debate_id": debate_id})
        assert not started.is_error, started.content
        assert started.structured_content is not None
        assert started.structured_content["state"] == "running"
        waiting: dict[str, str] = {}
        with anyio.fail_after(60):
            while waiting != {"insider": "waiting", "bystander": "waiting"}:
                status = await client.call_tool("council_status", {"debate_id": debate_id})
                assert status.structured_content is not None
                in_flight = status.structured_content["in_flight"]
                waiting = {c["persona"]: c["state"] for c in in_flight}
                await anyio.sleep(0.1)

    hold_mcp(council, scenario)


def test_a_cloned_person_seat_with_a_nan_wait_is_refused_over_mcp(
    council: Council, tmp_path: Path
) -> None:
    debate_id = cloned_with_settings(
        tmp_path, council, {"human_timeout": math.nan}, persona_model="human"
    )
    before = council.tree()

    async def scenario(client: Client) -> None:
        with anyio.fail_after(60):
            text = tool_error(await client.call_tool("council_start", {"debate_id": debate_id}))
        assert "run.human_timeout is nan" in text and "--human-timeout" in text

    hold_mcp(council, scenario)

    assert council.tree() == before
