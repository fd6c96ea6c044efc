"""Provider pre-flight: a model that cannot be called stops `run` with exit 2 and one line
naming the persona, the model and the fix, before a folder is created or a call is made;
`--dry-run` names the same problem."""

from __future__ import annotations

import os
import socket
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dreamcontext_council.engine.setup.preflight import anthropic_credentials

from .support import OPTIONS, TOPIC, Council

TEST_KEY = "sk-preflight-test-0123456789abcdef"


def closed_port() -> int:
    """A local port nothing listens on: bound, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def workspace_tree(council: Council) -> dict[str, bytes]:
    """Every file under the working directory (the root included) with its bytes."""
    return {
        str(p.relative_to(council.workdir)): p.read_bytes()
        for p in sorted(council.workdir.rglob("*"))
        if p.is_file()
    }


# Each case: (model flags, extra environment, words the one line must hold).
Case = tuple[list[str], dict[str, str], list[str]]


def cases(tmp_path: Path) -> dict[str, Case]:
    port = closed_port()
    return {
        "no key for anthropic": (["--model", "sonnet"], {}, ["sonnet", "ANTHROPIC_API_KEY"]),
        "no key for openai": (
            ["--model", "openai:gpt-4o-mini"],
            {},
            ["openai:gpt-4o-mini", "OPENAI_API_KEY"],
        ),
        "a missing program": (
            ["--model", "command:no-such-council-program --flag"],
            {},
            ["no-such-council-program", "PATH"],
        ),
        "a refused base URL": (
            ["--model", "openai:gpt-4o-mini", "--base-url", f"http://127.0.0.1:{port}/v1"],
            {"OPENAI_API_KEY": TEST_KEY},
            [f"127.0.0.1:{port}", "refused", "--base-url"],
        ),
    }


CASES = ["no key for anthropic", "no key for openai", "a missing program", "a refused base URL"]


def assert_one_line(err: str, words: list[str]) -> str:
    [line] = err.strip().splitlines()
    for word in words:
        assert word in line, (word, line)
    assert TEST_KEY not in line
    return line


@pytest.mark.parametrize("case", CASES)
def test_a_new_debate_is_refused_and_nothing_is_created(
    council: Council, tmp_path: Path, case: str
) -> None:
    flags, env, words = cases(tmp_path)[case]
    before = workspace_tree(council)

    result = council.proc("run", "--topic", TOPIC, "--options", OPTIONS, *flags, env=env)

    assert result.code == 2, result.err
    line = assert_one_line(result.err, words)
    assert "personas synthesizer, epistemologist" in line  # the cognitive preset
    assert not council.root.exists()
    assert workspace_tree(council) == before


@pytest.mark.parametrize("case", CASES)
def test_a_resume_is_refused_and_the_root_is_unchanged(
    council: Council, tmp_path: Path, case: str
) -> None:
    debate_id = council.new_debate("--rounds", "2")
    council.add_persona(debate_id, "risk-auditor")
    council.add_persona(debate_id, "growth-cfo")
    flags, env, words = cases(tmp_path)[case]
    before = workspace_tree(council)

    result = council("run", debate_id, *flags, env=env)

    assert result.code == 2, result.err
    line = assert_one_line(result.err, words)
    assert "personas risk-auditor, growth-cfo" in line
    assert workspace_tree(council) == before


@pytest.mark.parametrize("case", CASES)
def test_dry_run_reports_the_same_problem(council: Council, tmp_path: Path, case: str) -> None:
    flags, env, words = cases(tmp_path)[case]

    result = council("run", "--topic", TOPIC, "--options", OPTIONS, "--dry-run", *flags, env=env)

    assert result.code == 2, result.err
    assert "Dry run:" in result.out
    [would] = [line for line in result.out.splitlines() if line.startswith("Would fail: ")]
    assert_one_line(would, words)
    assert not council.root.exists()


def test_a_persona_with_its_own_model_is_told_to_change_it(council: Council) -> None:
    debate_id = council.new_debate()
    council.add_persona(debate_id, "risk-auditor", model="sonnet")
    council.add_persona(debate_id, "growth-cfo")

    result = council("run", debate_id)

    assert result.code == 2
    line = assert_one_line(result.err, ["persona risk-auditor (model sonnet)"])
    assert "growth-cfo" not in line
    assert "context-and-persona.md" in line


def test_a_program_by_path_must_exist_and_be_executable(council: Council, tmp_path: Path) -> None:
    program = tmp_path / "persona.sh"
    program.write_text("#!/bin/sh\ncat\n", encoding="utf-8")
    program.chmod(stat.S_IRUSR | stat.S_IWUSR)
    args = ("run", "--topic", TOPIC, "--options", OPTIONS, "--dry-run")

    not_executable = council(*args, "--model", f"command:{program}")
    program.chmod(stat.S_IRWXU)
    runnable = council(*args, "--model", f"command:{program}")
    missing = council(*args, "--model", f"command:{tmp_path / 'gone.sh'}")

    assert not_executable.code == 2 and "is not executable" in not_executable.out
    assert runnable.code == 0, runnable.out
    assert missing.code == 2 and "does not exist" in missing.out


def test_a_program_is_looked_up_on_the_path_the_run_passes_it(
    council: Council, tmp_path: Path
) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "my-council-model"
    program.write_text(f"#!{sys.executable}\nimport sys; sys.exit(0)\n", encoding="utf-8")
    program.chmod(stat.S_IRWXU)
    args = ("run", "--topic", TOPIC, "--options", OPTIONS, "--dry-run")
    args += ("--model", "command:my-council-model --flag")

    hidden = council(*args)
    found = council(*args, env={"PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"})

    assert hidden.code == 2 and "not on PATH" in hidden.out
    assert found.code == 0, found.out


def test_an_openai_base_url_needs_no_key(council: Council, stub: object) -> None:
    url = stub.openai_url  # type: ignore[attr-defined]
    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1",
        "--model", "openai:llama3.1", "--base-url", url,
    )  # fmt: skip

    assert result.code == 0, result.err


CREDENTIALS: dict[str, Callable[[Path], dict[str, str]]] = {
    "api key": lambda home: {"ANTHROPIC_API_KEY": TEST_KEY},
    "auth token": lambda home: {"ANTHROPIC_AUTH_TOKEN": TEST_KEY},
    "named profile": lambda home: {"ANTHROPIC_PROFILE": "work"},
    "federation": lambda home: {
        "ANTHROPIC_FEDERATION_RULE_ID": "rule",
        "ANTHROPIC_ORGANIZATION_ID": "org",
        "ANTHROPIC_IDENTITY_TOKEN_FILE": str(home / "token"),
    },
}


@pytest.mark.parametrize("source", sorted(CREDENTIALS))
def test_anthropic_credentials_are_found_where_the_sdk_finds_them(
    tmp_path: Path, source: str
) -> None:
    env = {"HOME": str(tmp_path), "ANTHROPIC_CONFIG_DIR": str(tmp_path / "config")}
    assert anthropic_credentials(env) is None
    assert anthropic_credentials({**env, **CREDENTIALS[source](tmp_path)}) is not None


def test_an_anthropic_profile_on_disk_counts(tmp_path: Path) -> None:
    config = tmp_path / "config"
    env = {"HOME": str(tmp_path), "ANTHROPIC_CONFIG_DIR": str(config)}
    (config / "configs").mkdir(parents=True)
    (config / "configs" / "work.json").write_text("{}", encoding="utf-8")
    assert anthropic_credentials(env) is None  # `default` is the active profile
    (config / "active_config").write_text("work\n", encoding="utf-8")
    assert anthropic_credentials(env) == "profile work"
