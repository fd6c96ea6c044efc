"""The trust file keeps the allowances of folders that exist: each write drops the folders
that are gone, so it does not grow with every debate ever run, and a folder made later at
a gone one's path does not inherit its allowances. One pre-flight reads it once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from council_run import Council, roster_file, scripted_responder
from council_run import echo_command as echo_command  # a fixture
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubServer

from dreamcontext_council.engine.providers import consent

from .command_consent_support import run_on_server, trust_file, workspace

COMMAND = "python ask.py"
ASK = f"command:{COMMAND}"
USER_KEY = "sk-user-key-for-the-trust-file"


def key(council: Council, debate_id: str) -> str:
    """The trust file's key for a debate: its folder's absolute path, links resolved."""
    return str(council.folder(debate_id).resolve())


def with_command(council: Council, model: str = ASK) -> str:
    """A new debate whose persona the user seated with a `command:` model (an allowance)."""
    debate_id = council.new_debate("--rounds", "1")
    council.add_persona(debate_id, "insider", model=model)
    return debate_id


def trust_text(council: Council) -> str:
    return trust_file(council).read_text(encoding="utf-8")


def written_as(data: dict[str, Any]) -> str:
    """The trust file's layout: sections with folders sorted, 2-space indent, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def test_a_deleted_folder_loses_its_allowance_when_the_next_one_is_written(
    tmp_path: Path,
) -> None:
    council = workspace(tmp_path)
    gone = with_command(council)
    kept = with_command(council)
    shutil.rmtree(council.folder(gone))
    assert key(council, gone) in json.loads(trust_text(council))["trusted"]  # nothing written yet

    later = with_command(council, "command:claude -p")

    assert trust_text(council) == written_as(
        {
            "trusted": dict(
                sorted({key(council, kept): [COMMAND], key(council, later): ["claude -p"]}.items())
            )
        }
    )


def test_a_gone_folders_server_url_goes_and_the_section_with_it(tmp_path: Path) -> None:
    council = workspace(tmp_path)
    roster = roster_file(
        tmp_path / "roster.json",
        {"insider": "openai:gpt-4o-mini", "bystander": "openai:gpt-4o-mini"},
    )
    with StubServer(responder=scripted_responder) as server:
        url = server.openai_url
        run = run_on_server(council, roster, url, USER_KEY, rounds=1, interrupt=False)
    assert run.code == 0, run.err
    assert json.loads(trust_text(council))["base_urls"] == {key(council, run.last_line): [url]}
    shutil.rmtree(council.folder(run.last_line))

    later = with_command(council)

    assert trust_text(council) == written_as({"trusted": {key(council, later): [COMMAND]}})


def test_a_folder_reached_through_a_link_keeps_its_allowance(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    council = workspace(tmp_path, "first")
    linked = Council(tmp_path / "link" / "_dream_context", tmp_path / "link", council.env)
    through_link = with_command(linked)
    assert key(linked, through_link).startswith(str(real.resolve()))

    later = with_command(council)

    assert set(json.loads(trust_text(council))["trusted"]) == {
        key(linked, through_link),
        key(council, later),
    }


def test_keys_that_can_never_match_a_folder_are_dropped(tmp_path: Path) -> None:
    """Keys are absolute resolved paths: a relative key, a link, or a file is no folder's."""
    council = workspace(tmp_path)
    kept = with_command(council)
    a_link = tmp_path / "a-link"
    a_link.symlink_to(council.folder(kept), target_is_directory=True)
    a_file = tmp_path / "a-file"
    a_file.write_text("", encoding="utf-8")
    planted = {
        f"_dream_context/council/{kept}": ["python relative.py"],
        str(a_link): ["python link.py"],
        str(a_file): ["python file.py"],
    }
    data = json.loads(trust_text(council))
    trust_file(council).write_text(
        json.dumps({"trusted": {**data["trusted"], **planted}, "base_urls": planted}),
        encoding="utf-8",
    )

    later = with_command(council, "command:claude -p")

    assert trust_text(council) == written_as(
        {
            "trusted": dict(
                sorted({key(council, kept): [COMMAND], key(council, later): ["claude -p"]}.items())
            )
        }
    )


def test_one_pre_flight_reads_the_trust_file_once(
    tmp_path: Path, echo_command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume whose folder asks for a program and a server URL, both allowed before:
    the checks of its pre-flight share one reading of the file, and pass."""
    council = workspace(tmp_path)
    roster = roster_file(
        tmp_path / "roster.json", {"insider": echo_command, "bystander": "openai:gpt-4o-mini"}
    )
    with StubServer(responder=scripted_responder) as server:
        paused = run_on_server(council, roster, server.openai_url, USER_KEY)
        assert paused.code == 0, paused.err
        allowed = json.loads(trust_text(council))
        folder = key(council, paused.last_line)
        assert set(allowed["trusted"]) == set(allowed["base_urls"]) == {folder}
        reads: list[Path] = []
        load = consent._load

        def counted(path: Path) -> dict[str, dict[str, list[str]]]:
            reads.append(path)
            return load(path)

        monkeypatch.setattr(consent, "_load", counted)

        dry = council("run", paused.last_line, "--dry-run", env={"OPENAI_API_KEY": USER_KEY})

    assert dry.code == 0, dry.err
    assert "Would fail" not in dry.out
    assert reads == [trust_file(council)]
