"""Fixtures for the `council eval` tests: a clean workspace and the CLI against it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from council_run import Council
from offline import clean_environment

# Imported fixtures are registered for this folder: `no_provider_environment` is autouse here.
from offline import no_provider_environment as no_provider_environment


@pytest.fixture
def council(root_path: Path, workdir: Path, tmp_path: Path) -> Council:
    """The CLI against a fresh workspace (`_dream_context/` not created yet)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Council(root_path, workdir, clean_environment(os.environ, home))
