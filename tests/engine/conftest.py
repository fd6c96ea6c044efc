"""Fixtures for the `council run` tests: a clean workspace, the CLI, stub servers, a command persona."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from stub_server import StubServer

from .support import ECHO_SCRIPT, SCRUBBED_PREFIXES, Council, clean_environment, scripted_responder


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No developer key, base URL, proxy, root or scripted delay leaks into a test."""
    for name in list(os.environ):
        if name.startswith(SCRUBBED_PREFIXES) or name.lower().endswith("_proxy"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "home" / "anthropic-config"))


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
