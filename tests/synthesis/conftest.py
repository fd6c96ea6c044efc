"""Fixtures for synthesis end to end: a clean workspace, the CLI in-process, a stub council."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubServer

from .chamber import Chamber
from .council_cli import Council


@pytest.fixture
def council(root_path: Path, workdir: Path, tmp_path: Path) -> Council:
    """The CLI against a fresh workspace (`_dream_context/` not created yet)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "NO_PROXY": "127.0.0.1,localhost",
        "HOME": str(home),
        "ANTHROPIC_CONFIG_DIR": str(home / "anthropic-config"),
        "TERM": "dumb",
    }
    return Council(root_path, workdir, env)


@pytest.fixture
def chamber() -> Chamber:
    """Long technical answers with code; the test sets scores and the synthesizer."""
    return Chamber()


@pytest.fixture
def stub(chamber: Chamber) -> Iterator[StubServer]:
    """A stub server (both APIs) that answers through the chamber."""
    with StubServer(responder=chamber) as server:
        yield server
