"""Fixtures for synthesis end to end: a clean workspace, the CLI in-process, a stub council."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from stub_server import StubServer

from .chamber import Chamber
from .council_cli import SCRUBBED_PREFIXES, Council


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No developer key, base URL, proxy or root leaks into a test."""
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
    env = {
        "NO_PROXY": "127.0.0.1,localhost",
        "HOME": str(home),
        "ANTHROPIC_CONFIG_DIR": str(home / "anthropic-config"),
        "TERM": "dumb",
    }
    return Council(workdir / "_dream_context", env)


@pytest.fixture
def chamber() -> Chamber:
    """Long technical answers with code; the test sets scores and the synthesizer."""
    return Chamber()


@pytest.fixture
def stub(chamber: Chamber) -> Iterator[StubServer]:
    """A stub server (both APIs) that answers through the chamber."""
    with StubServer(responder=chamber) as server:
        yield server
