"""Fixtures for the `council run` tests: a clean workspace, the CLI, stub servers, a command persona."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Imported fixtures are registered for this folder: `no_provider_environment` is autouse here.
from council_run import echo_command as echo_command
from council_run import stub as stub
from offline import clean_environment
from offline import no_provider_environment as no_provider_environment

from .support import Council


@pytest.fixture
def council(root_path: Path, workdir: Path, tmp_path: Path) -> Council:
    """The CLI against a fresh workspace (`_dream_context/` not created yet)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Council(root_path, workdir, clean_environment(os.environ, home))
