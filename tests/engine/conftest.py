"""Fixtures for the `council run` tests: a clean workspace, the CLI, stub servers, a command persona."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubServer

from .support import ECHO_SCRIPT, Council, scripted_responder


@pytest.fixture
def council(tmp_path: Path) -> Council:
    """The CLI against a fresh workspace (`_dream_context/` not created yet)."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Council(workdir / "_dream_context", workdir, clean_environment(os.environ, home))


@pytest.fixture
def stub() -> Iterator[StubServer]:
    """A stub server that answers every council call like the scripted provider."""
    with StubServer(responder=scripted_responder) as server:
        yield server


@pytest.fixture
def echo_command(tmp_path: Path) -> str:
    """A `command:` model: a python script that prints the scripted answer to its stdin."""
    script = tmp_path / "echo_persona.py"
    script.write_text(ECHO_SCRIPT, encoding="utf-8")
    return f"command:{sys.executable} {script}"
