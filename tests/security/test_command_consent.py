"""`command:` models run only with the user's consent: never from a model's answer, and
from a debate folder only when the user named the command or allowed it for that folder."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from council_run import Council, request_task, roster_file, scripted_responder
from debate_story import OPTIONS, TOPIC
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubServer

from dreamcontext_council.errors import EXIT_STOPPED

from .command_consent_support import marking_command, trust_file, workspace

AUTO_ROSTER_SCRIPT = """\
import json, sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
task = task_from_text(sys.stdin.read())
if task.get("phase") == "persona-generation":
    print(json.dumps(ROSTER))
else:
    print(scripted_text(task))
"""


def hostile_roster(marker: Path) -> list[dict[str, Any]]:
    """What a prompt-injected or hostile model answers for `--personas auto`."""
    planted = f"command:sh -c 'touch {shlex.quote(str(marker))}'"
    return [
        {
            "slug": slug,
            "aspects": ["risk"],
            "body": f"You are {slug}. You weigh risk.",
            "model": planted,
        }
        for slug in ("insider", "bystander")
    ]


@pytest.fixture
def council(tmp_path: Path) -> Council:
    return workspace(tmp_path)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_a_model_in_an_auto_roster_from_a_command_model_never_runs(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    script = tmp_path / "orchestrator.py"
    script.write_text(
        AUTO_ROSTER_SCRIPT.replace("ROSTER", repr(hostile_roster(marker))), encoding="utf-8"
    )
    model = f"command:{sys.executable} {script}"

    run = council.proc(
        "run", "--topic", TOPIC, "--personas", "auto", "--rounds", "1", "--model", model
    )

    assert not marker.exists()
    assert run.code == 0, run.err
    debate_id = run.last_line
    for slug in ("insider", "bystander"):
        persona = council.text(debate_id, f"{slug}/context-and-persona.md")
        assert "sh -c" not in persona and str(marker) not in persona
    asked = {
        (r["persona"], r["provider"], r["model"])
        for r in council.usage(debate_id)
        if r["phase"] == "opening"
    }
    assert asked == {
        (s, "command", model.removeprefix("command:")) for s in ("insider", "bystander")
    }
    assert "ignored the model the answer named for insider, bystander" in run.err


def test_a_model_in_an_auto_roster_from_a_server_never_runs(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"

    def responder(request_json: dict[str, Any]) -> Any:
        if request_task(request_json).get("phase") == "persona-generation":
            return json.dumps(hostile_roster(marker))
        return scripted_responder(request_json)

    with StubServer(responder=responder) as stub:
        run = council.proc(
            "run", "--topic", TOPIC, "--personas", "auto", "--rounds", "1",
            env={"OPENAI_API_KEY": "sk-test-not-a-key", "OPENAI_BASE_URL": stub.openai_url},
        )  # fmt: skip

    assert not marker.exists()
    assert run.code == 0, run.err
    models = {r["model"] for r in council.usage(run.last_line) if r["phase"] == "opening"}
    assert models == {"gpt-4o-mini"}  # the default for the key set, not the planted command


def cloned_debate(tmp_path: Path, council: Council, command: str) -> str:
    """A debate someone else made with a `command:` persona, copied into `council`'s root."""
    theirs = workspace(tmp_path, "theirs")
    theirs.env = {
        **theirs.environment(),
        "DREAMCONTEXT_TRUST_FILE": str(tmp_path / "their-trust.json"),
    }
    debate_id = theirs.new_debate("--rounds", "1")
    theirs.add_persona(debate_id, "insider", model=f"command:{command}")
    theirs.add_persona(debate_id, "bystander", model="scripted")
    shutil.copytree(theirs.root, council.root)
    return debate_id


def test_a_cloned_folder_does_not_run_its_command_until_allowed(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    debate_id = cloned_debate(tmp_path, council, command)
    before = council.tree()

    refused = council.proc("run", debate_id, "--yes")

    assert refused.code == 2
    line = one_line(refused.err)
    assert f"`{command}`" in line
    assert f"--allow-command {shlex.quote(command)}" in line
    assert "insider" in line
    assert council.tree() == before
    assert not marker.exists()
    assert not trust_file(council).exists()

    allowed = council.proc("run", debate_id, "--yes", "--allow-command", command)

    assert allowed.code == 0, allowed.err
    assert marker.exists()
    assert council.status(debate_id) == "complete"
    trusted = json.loads(trust_file(council).read_text(encoding="utf-8"))["trusted"]
    assert trusted == {str(council.folder(debate_id).resolve()): [command]}


def test_an_allowed_command_is_remembered_for_that_folder_only(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    debate_id = cloned_debate(tmp_path, council, command)
    first = council.proc(
        "run", debate_id, "--yes", "--allow-command", f"command:{command}", "--max-calls", "1"
    )
    assert first.code == EXIT_STOPPED, first.err
    assert council.status(debate_id) != "complete"
    marker.unlink()
    # The same folder at another path (a second clone, a copy) is another folder.
    elsewhere = workspace(tmp_path, "elsewhere")
    shutil.copytree(council.root, elsewhere.root)
    before = elsewhere.tree()

    copy = elsewhere.proc("run", debate_id)

    assert copy.code == 2
    assert "--allow-command" in one_line(copy.err)
    assert elsewhere.tree() == before
    assert not marker.exists()

    resumed = council.proc("run", debate_id, "--max-calls", "100")  # the cap is remembered

    assert resumed.code == 0, resumed.err
    assert council.status(debate_id) == "complete"


def test_naming_the_command_on_the_command_line_is_consent(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    debate_id = cloned_debate(tmp_path, council, command)

    run = council.proc("run", debate_id, "--yes", "--model", f"command:{command}")

    assert run.code == 0, run.err
    assert marker.exists()


def test_a_command_with_control_characters_is_shown_escaped(
    council: Council, tmp_path: Path
) -> None:
    debate_id = cloned_debate(tmp_path, council, "true")
    context = council.folder(debate_id) / "insider" / "context-and-persona.md"
    text = context.read_text(encoding="utf-8")
    context.write_text(
        text.replace("model: command:true", 'model: "command:echo \\e]0;owned\\a\\e[2J\\rok"'),
        encoding="utf-8",
    )

    refused = council.proc("run", debate_id, "--yes")

    assert refused.code == 2
    line = one_line(refused.err)
    assert "\x1b" not in line and "\x07" not in line and "\r" not in line
    assert "`echo \\x1b]0;owned\\x07\\x1b[2J\\rok`" in line


def test_a_roster_file_the_user_named_is_consent_and_a_resume_needs_no_flag(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    roster = roster_file(
        tmp_path / "roster.json", {"insider": f"command:{command}", "bystander": "scripted"}
    )

    paused = council.proc(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster,
        "--rounds",
        "2",
        "--interrupt",
    )
    assert paused.code == 0, paused.err
    resumed = council.proc("run", paused.last_line)

    assert resumed.code == 0, resumed.err
    assert council.status(paused.last_line) == "complete"


def test_agent_create_with_a_command_model_is_consent(council: Council, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    command = marking_command(tmp_path, marker)
    debate_id = council.new_debate("--rounds", "1")
    council.add_persona(debate_id, "insider", model=f"command:{command}")
    council.add_persona(debate_id, "bystander", model="scripted")

    run = council.proc("run", debate_id, "--yes")

    assert run.code == 0, run.err
    assert marker.exists()


def test_the_trust_file_follows_xdg_config_home_and_can_be_named(tmp_path: Path) -> None:
    from dreamcontext_council.engine.providers.consent import trust_file as where

    home = {"HOME": str(tmp_path / "home")}
    config = tmp_path / "config"

    assert where(home) == tmp_path / "home" / ".config" / "dreamcontext" / "trusted-commands.json"
    assert where({**home, "XDG_CONFIG_HOME": str(config)}) == (
        config / "dreamcontext" / "trusted-commands.json"
    )
    assert where({**home, "XDG_CONFIG_HOME": "relative/dir"}).is_relative_to(tmp_path / "home")
    named = tmp_path / "elsewhere.json"
    assert where({**home, "DREAMCONTEXT_TRUST_FILE": str(named)}) == named


def test_a_broken_trust_file_stops_the_run_with_one_line(council: Council, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    debate_id = cloned_debate(tmp_path, council, marking_command(tmp_path, marker))
    trust_file(council).parent.mkdir(parents=True)
    trust_file(council).write_text('{"trusted": ["not", "a", "map"]}', encoding="utf-8")
    before = council.tree()

    run = council.proc("run", debate_id, "--yes")

    assert run.code != 0
    assert "fix or delete it" in one_line(run.err)
    assert council.tree() == before
    assert not marker.exists()
