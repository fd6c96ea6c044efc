"""Fixtures for grounded debates: a clean workspace, the CLI, a stub server answering like
the scripted provider, a command persona, and a way to prove nothing was written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

# Imported fixtures are registered for this folder: `no_provider_environment` is autouse here.
from council_run import Council as Council
from council_run import echo_command as echo_command
from council_run import request_task
from council_run import roster_file as roster_file
from council_run import stub as stub
from offline import no_provider_environment as no_provider_environment
from stub_server import StubServer, prompt_text

TEST_KEY = "sk-test-grounding-0123456789abcdef"


@pytest.fixture
def council(root_path: Path, workdir: Path) -> Council:
    """The CLI against a fresh workspace (`_dream_context/` not created yet).

    Commands get the test process's own (scrubbed) environment and what each call passes.
    """
    return Council(root_path, workdir)


def stub_args(server: StubServer, model: str = "openai:stub-model") -> list[str]:
    """`run` options that send every default call to the stub."""
    return ["--model", model, "--base-url", server.openai_url]


STUB_ENV = {"OPENAI_API_KEY": TEST_KEY}


def calls(server: StubServer) -> list[tuple[dict[str, Any], str]]:
    """(the call the prompt text names, full prompt text) of every request the stub received."""
    return [(request_task(request.json), prompt_text(request.json)) for request in server.requests]


@pytest.fixture
def small_roster(tmp_path: Path) -> str:
    """Two personas on the default model: enough for a debate, quick to run."""
    return roster_file(tmp_path / "roster.json", {"risk-auditor": "", "platform-lead": ""})
